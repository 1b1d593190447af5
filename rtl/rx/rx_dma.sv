// The RX DMA side: planner (rx_split_dma), the queues between it and the data path, the
// byte-range realigner with its header tap, the payload write combiner, the completion packer,
// the data mux and the AXI write master.
//
//   meta FIFO ──► rx_split_dma ──► range queue ──► rx_realign ◄── frame FIFO
//                      │                              │   └─► header tap queue ───────────┐
//                      ├──► note queue ──► rx_pay_merge ◄┘ ──► payload beat queue ──────┤
//                      ├──► completion records ──► rx_cpl_pack (batches) ─────────────────┤
//                      └──► command queue ──► axi_dma_wr ◄── data mux (tap | payload | completions)
//
// The data mux follows the write commands in the order the write master accepted them: a
// header command takes its beats from the header tap, a payload command from the write
// combiner (with their strobes: bytes of a stride no payload covers are never written), a
// completion command from the packer (ceil(bytes / DB) beats, a 16-byte record cut into beats
// on a 64-bit bus). When a completion write's last beat has been handed to the bus, the queue's
// hardware completion index (CQ.HW_IDX) advances by the batch: that is the index the interrupt
// logic and the driver's register reads see.
// Reset: synchronous, active high.
module rx_dma
  import nic_pkg::*;
#(
  parameter int unsigned DATA_W        = 64,     // DMA data width
  parameter int unsigned ADDR_W        = 64,
  parameter int unsigned ID_W          = 4,
  parameter int unsigned NUM_RXQ       = 1,
  parameter int unsigned PARSE_BYTES   = 128,
  parameter int unsigned CACHE_DEPTH   = 16,
  parameter int unsigned MAX_BURST     = 256,
  parameter int unsigned CPL_BATCH     = 16,
  parameter int unsigned CYCLES_PER_US = 250,
  localparam int unsigned CW           = $clog2(CACHE_DEPTH) + 1,
  localparam int unsigned QW           = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1
) (
  input  logic                          clk,
  input  logic                          rst,
  // frames
  input  logic                          meta_valid,
  output logic                          meta_ready,
  input  rx_meta_t                      meta,
  input  rx_class_t                     cls,
  input  logic                          ff_valid,
  output logic                          ff_ready,
  input  logic [DATA_W-1:0]             ff_data,
  // per-queue configuration and state
  input  rxq_cfg_t                     qcfg [NUM_RXQ],       // per-queue settings
  output logic [NUM_RXQ-1:0][15:0]      cq_hw_idx,
  input  logic [NUM_RXQ-1:0]            hdr_desc_valid,
  output logic [NUM_RXQ-1:0]            hdr_desc_pop,
  output logic [QW-1:0]                 hdr_sel,      // the queue whose header head is read
  input  logic [63:0]                   hdr_desc_addr,
  input  logic [15:0]                   hdr_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      hdr_posted,
  input  logic [NUM_RXQ-1:0]            pay_desc_valid,
  output logic [NUM_RXQ-1:0]            pay_desc_pop,
  output logic [QW-1:0]                 pay_sel,      // the queue whose payload head is read
  input  logic [63:0]                   pay_desc_addr,
  input  logic [15:0]                   pay_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      pay_posted,
  input  logic [NUM_RXQ-1:0][CW-1:0]    pay_cached,
  // AXI4 write channels
  output logic [ID_W-1:0]               m_awid,
  output logic [ADDR_W-1:0]             m_awaddr,
  output logic [7:0]                    m_awlen,
  output logic [2:0]                    m_awsize,
  output logic [1:0]                    m_awburst,
  output logic                          m_awvalid,
  input  logic                          m_awready,
  output logic [DATA_W-1:0]             m_wdata,
  output logic [DATA_W/8-1:0]           m_wstrb,
  output logic                          m_wlast,
  output logic                          m_wvalid,
  input  logic                          m_wready,
  input  logic [ID_W-1:0]               m_bid,
  input  logic [1:0]                    m_bresp,
  input  logic                          m_bvalid,
  output logic                          m_bready,
  // events
  output logic                          ev_frame,
  output logic                          ev_drop_hdr_err,
  output logic                          ev_drop_queue_off,
  output logic                          ev_drop_no_hdr_buf,
  output logic                          ev_drop_no_pay_buf,
  output logic                          ev_drop_cq_full,
  output logic                          ev_hdr_overflow,
  output logic                          ev_wr_err,
  output logic [NUM_RXQ-1:0]            q_wr_err,
  output logic [NUM_RXQ-1:0]            q_busy       // the queue has writes planned or in flight
);
  localparam int unsigned DB        = DATA_W / 8;
  localparam int unsigned LW        = $clog2(DB);
  localparam int unsigned BEAT_W    = 17 - LW + 1;
  localparam int unsigned TAP_W     = 8;
  localparam int unsigned CPLW      = (DATA_W > 128) ? DATA_W : 128;
  localparam int unsigned CPL_BEATS = (DATA_W >= 128) ? 1 : 128 / DATA_W;   // beats per packer word
  localparam int unsigned NLANE     = (DATA_W > 128) ? DATA_W / 128 : 1;
  localparam int unsigned LAW       = (NLANE > 1) ? $clog2(NLANE) : 1;
  localparam int unsigned BNW       = $clog2(CPL_BATCH + 1);
  // Packer words a batch can take (an unaligned start adds one), at least 4.
  localparam int unsigned CPL_WORDS = (CPL_BATCH * 16 + CPLW / 8 - 1) / (CPLW / 8) + 1;
  localparam int unsigned CPL_DEPTH = (CPL_WORDS <= 4) ? 4 : (1 << $clog2(CPL_WORDS));
  // Header tap: a whole parse window of words.
  localparam int unsigned TAP_WORDS = (PARSE_BYTES + DB - 1) / DB;
  localparam int unsigned TAP_DEPTH = (TAP_WORDS <= 4) ? 4 : (1 << $clog2(TAP_WORDS));
  localparam logic [1:0] SRC_HDR = 2'd0, SRC_CPL = 2'd2;   // (1: payload, the default below)

  initial begin
    if ((1 << ID_W) < NUM_RXQ) $fatal(1, "rx_dma: ID_W too small to give every queue its own AXI ID");
  end

  // ---------------------------------------------------------------- planner
  logic [NUM_RXQ-1:0] plan_busy;
  logic              rng_valid, rng_ready, rng_emit, rng_frame_end;
  logic [15:0]       rng_start, rng_end, rng_flen;
  logic [LW-1:0]     rng_dst;
  logic [TAP_W-1:0]  rng_tap;
  logic              note_valid, note_ready, note_flush, note_merge, note_hold;
  logic              pcmd_valid, pcmd_ready;
  logic [ADDR_W-1:0] pcmd_addr;
  logic [16:0]       pcmd_len;
  logic [1:0]        pcmd_src;
  logic [QW-1:0]     pcmd_queue;
  logic [BNW-1:0]    pcmd_ncpl;
  logic              rec_valid, rec_ready, rec_close, bclose, bclose_ready;
  logic [127:0]      rec_data;
  logic [LAW-1:0]    rec_lane;

  rx_split_dma #(
    .DATA_W(DATA_W), .ADDR_W(ADDR_W), .NUM_RXQ(NUM_RXQ), .PARSE_BYTES(PARSE_BYTES),
    .CACHE_DEPTH(CACHE_DEPTH), .CPL_BATCH(CPL_BATCH), .CYCLES_PER_US(CYCLES_PER_US), .TAP_W(TAP_W)
  ) u_plan (
    .clk, .rst,
    .meta_valid, .meta_ready, .meta, .cls,
    .qcfg,
    .hdr_desc_valid, .hdr_desc_pop, .hdr_sel, .hdr_desc_addr, .hdr_desc_id, .hdr_posted,
    .pay_desc_valid, .pay_desc_pop, .pay_sel, .pay_desc_addr, .pay_desc_id, .pay_posted, .pay_cached,
    .rng_valid, .rng_ready, .rng_start, .rng_end, .rng_dst, .rng_emit, .rng_frame_end, .rng_flen, .rng_tap,
    .note_valid, .note_ready, .note_flush, .note_merge, .note_hold,
    .cmd_valid (pcmd_valid), .cmd_ready (pcmd_ready), .cmd_addr (pcmd_addr), .cmd_len (pcmd_len),
    .cmd_src (pcmd_src), .cmd_queue (pcmd_queue), .cmd_ncpl (pcmd_ncpl),
    .rec_valid, .rec_ready, .rec_data, .rec_lane, .rec_close, .bclose, .bclose_ready,
    .ev_frame, .ev_drop_hdr_err, .ev_drop_queue_off, .ev_drop_no_hdr_buf, .ev_drop_no_pay_buf,
    .ev_drop_cq_full, .ev_hdr_overflow, .plan_busy
  );

  // ---------------------------------------------------------------- queues
  typedef struct packed {
    logic [15:0]      start;
    logic [15:0]      rend;
    logic [LW-1:0]    dst;
    logic             emit;
    logic             frame_end;
    logic [15:0]      flen;
    logic [TAP_W-1:0] tap;
  } rng_t;

  typedef struct packed {
    logic flush;
    logic merge;
    logic hold;
  } note_t;

  typedef struct packed {
    logic [ADDR_W-1:0] addr;
    logic [16:0]       len;
    logic [1:0]        src;
    logic [QW-1:0]     qid;
    logic [BNW-1:0]    ncpl;
  } cmd_t;

  rng_t  rq_in, rq_out;
  note_t nq_in, nq_out;
  cmd_t  cq_in, cq_out;
  logic  rq_valid, rq_ready, nq_valid, nq_ready, cmdq_valid, cmdq_ready;

  assign rq_in = '{start: rng_start, rend: rng_end, dst: rng_dst, emit: rng_emit,
                   frame_end: rng_frame_end, flen: rng_flen, tap: rng_tap};
  assign nq_in = '{flush: note_flush, merge: note_merge, hold: note_hold};
  assign cq_in = '{addr: pcmd_addr, len: pcmd_len, src: pcmd_src, qid: pcmd_queue, ncpl: pcmd_ncpl};

  // Occupancy outputs of these queues are not needed: their ready signals are the flow control.
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.WIDTH($bits(rng_t)), .DEPTH(4)) u_rng_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (rng_valid), .in_ready (rng_ready), .in_data (rq_in),
    .out_valid (rq_valid), .out_ready (rq_ready), .out_data (rq_out), .count (  )
  );

  sync_fifo #(.WIDTH($bits(note_t)), .DEPTH(4)) u_note_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (note_valid), .in_ready (note_ready), .in_data (nq_in),
    .out_valid (nq_valid), .out_ready (nq_ready), .out_data (nq_out), .count (  )
  );

  sync_fifo #(.WIDTH($bits(cmd_t)), .DEPTH(4)) u_cmd_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (pcmd_valid), .in_ready (pcmd_ready), .in_data (cq_in),
    .out_valid (cmdq_valid), .out_ready (cmdq_ready), .out_data (cq_out), .count (  )
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- realigner, tap, combiner
  logic              ra_valid, ra_ready, ra_last;
  logic [DATA_W-1:0] ra_data;
  logic [DB-1:0]     ra_strb;
  logic              tap_in_valid, tap_in_ready, tap_valid, tap_ready;
  logic [DATA_W-1:0] tap_in_data, tap_data;

  rx_realign #(.DATA_W(DATA_W), .TAP_W(TAP_W)) u_realign (
    .clk, .rst,
    .in_valid      (ff_valid),
    .in_ready      (ff_ready),
    .in_data       (ff_data),
    .rng_valid     (rq_valid),
    .rng_ready     (rq_ready),
    .rng_start     (rq_out.start),
    .rng_end       (rq_out.rend),
    .rng_dst       (rq_out.dst),
    .rng_emit      (rq_out.emit),
    .rng_frame_end (rq_out.frame_end),
    .rng_flen      (rq_out.flen),
    .rng_tap       (rq_out.tap),
    .out_valid     (ra_valid),
    .out_ready     (ra_ready),
    .out_data      (ra_data),
    .out_strb      (ra_strb),
    .out_last      (ra_last),
    .tap_valid     (tap_in_valid),
    .tap_ready     (tap_in_ready),
    .tap_data      (tap_in_data)
  );

  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.WIDTH(DATA_W), .DEPTH(TAP_DEPTH)) u_tap_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (tap_in_valid), .in_ready (tap_in_ready), .in_data (tap_in_data),
    .out_valid (tap_valid), .out_ready (tap_ready), .out_data (tap_data), .count (  )
  );
  /* verilator lint_on PINCONNECTEMPTY */

  logic              pm_valid, pm_ready, pay_valid, pay_ready;
  logic [DATA_W-1:0] pm_data, pay_data;
  logic [DB-1:0]     pm_strb, pay_strb;

  rx_pay_merge #(.DATA_W(DATA_W)) u_merge (
    .clk, .rst,
    .note_valid (nq_valid), .note_ready (nq_ready), .note_flush (nq_out.flush),
    .note_merge (nq_out.merge), .note_hold (nq_out.hold),
    .in_valid (ra_valid), .in_ready (ra_ready), .in_data (ra_data), .in_strb (ra_strb),
    .in_last (ra_last),
    .out_valid (pm_valid), .out_ready (pm_ready), .out_data (pm_data), .out_strb (pm_strb)
  );

  // A beat or two of payload may wait here while the write master takes a header (the header's
  // last tap word can carry the start of the frame's payload).
  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.WIDTH(DATA_W + DB), .DEPTH(2)) u_pay_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (pm_valid), .in_ready (pm_ready), .in_data ({pm_strb, pm_data}),
    .out_valid (pay_valid), .out_ready (pay_ready), .out_data ({pay_strb, pay_data}), .count (  )
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // ---------------------------------------------------------------- completion packer
  logic            cw_valid, cw_ready;
  logic [CPLW-1:0] cw_data;

  rx_cpl_pack #(.DATA_W(DATA_W), .DEPTH(CPL_DEPTH)) u_cpl_pack (
    .clk, .rst,
    .rec_valid, .rec_ready, .rec_data, .rec_lane, .rec_close,
    .close (bclose), .close_ready (bclose_ready),
    .out_valid (cw_valid), .out_ready (cw_ready), .out_data (cw_data)
  );

  // ---------------------------------------------------------------- write master + data mux
  // Each accepted command leaves a note of where its beats come from and how many there are.
  typedef struct packed {
    logic [1:0]        src;
    logic [QW-1:0]     qid;
    logic [BNW-1:0]    ncpl;
    logic [BEAT_W-1:0] beats;
  } plan_t;

  plan_t             pl_in, pl_out;
  logic              pl_in_ready, pl_valid, pl_ready;
  logic              wr_cmd_valid, wr_cmd_ready, wr_in_valid, wr_in_ready;
  logic [DATA_W-1:0] wr_in_data;
  logic [DB-1:0]     wr_in_strb;
  logic [BEAT_W-1:0] beat_q;
  logic [17:0]       span;
  logic [ID_W-1:0]   b_err_id;
  logic              b_err;
  logic              wr_idle, burst_issue;

  assign span        = {1'b0, cq_out.len} + {{(18 - LW){1'b0}}, cq_out.addr[LW-1:0]};
  assign pl_in.src   = cq_out.src;
  assign pl_in.qid   = cq_out.qid;
  assign pl_in.ncpl  = cq_out.ncpl;
  assign pl_in.beats = BEAT_W'((span + 18'(DB - 1)) >> LW);

  assign wr_cmd_valid = cmdq_valid && pl_in_ready;
  assign cmdq_ready   = wr_cmd_ready && pl_in_ready;

  /* verilator lint_off PINCONNECTEMPTY */
  sync_fifo #(.WIDTH($bits(plan_t)), .DEPTH(8)) u_plan_q (
    .clk, .rst, .clear (1'b0),
    .in_valid (cmdq_valid && wr_cmd_ready && pl_in_ready), .in_ready (pl_in_ready), .in_data (pl_in),
    .out_valid (pl_valid), .out_ready (pl_ready), .out_data (pl_out), .count (  )
  );
  /* verilator lint_on PINCONNECTEMPTY */

  logic last_beat, cw_last;
  assign last_beat = (beat_q == pl_out.beats - 1'b1);
  // On a bus narrower than a record the packer's word (one record) takes CPL_BEATS beats.
  if (CPL_BEATS > 1) begin : g_cpl_slices
    logic [$clog2(CPL_BEATS)-1:0] slice;
    assign slice   = beat_q[$clog2(CPL_BEATS)-1:0];
    assign cw_last = (slice == $clog2(CPL_BEATS)'(CPL_BEATS - 1));
    always_comb wr_in_data = (pl_valid && pl_out.src == SRC_CPL) ? cw_data[slice * DATA_W +: DATA_W]
                                                                 : ((pl_out.src == SRC_HDR) ? tap_data : pay_data);
  end else begin : g_cpl_words
    assign cw_last = 1'b1;
    always_comb begin
      unique case (pl_out.src)
        SRC_HDR: wr_in_data = tap_data;
        SRC_CPL: wr_in_data = DATA_W'(cw_data);
        default: wr_in_data = pay_data;
      endcase
    end
  end

  always_comb begin
    wr_in_valid = 1'b0;
    wr_in_strb  = '1;
    tap_ready   = 1'b0;
    pay_ready   = 1'b0;
    cw_ready    = 1'b0;
    if (pl_valid) begin
      unique case (pl_out.src)
        SRC_HDR: begin
          wr_in_valid = tap_valid;
          tap_ready   = wr_in_ready;
        end
        SRC_CPL: begin
          wr_in_valid = cw_valid;
          cw_ready    = wr_in_ready && cw_last;
        end
        default: begin
          wr_in_valid = pay_valid;
          wr_in_strb  = pay_strb;
          pay_ready   = wr_in_ready;
        end
      endcase
    end
  end

  assign pl_ready = wr_in_valid && wr_in_ready && last_beat;

  always_ff @(posedge clk) begin
    if (rst) begin
      beat_q    <= '0;
      cq_hw_idx <= '0;
    end else begin
      if (wr_in_valid && wr_in_ready) beat_q <= last_beat ? '0 : beat_q + 1'b1;
      for (int i = 0; i < NUM_RXQ; i++) begin
        if (!qcfg[i].enable) begin
          cq_hw_idx[i] <= '0;
        end else if (pl_ready && pl_out.src == SRC_CPL && pl_out.qid == QW'(i)) begin
          cq_hw_idx[i] <= cq_hw_idx[i] + 16'(pl_out.ncpl);
        end
      end
    end
  end

  axi_dma_wr #(.DATA_W(DATA_W), .ADDR_W(ADDR_W), .MAX_BURST(MAX_BURST), .ID_W(ID_W)) u_wr (
    .clk, .rst,
    .cmd_valid (wr_cmd_valid),
    .cmd_ready (wr_cmd_ready),
    .cmd_addr  (cq_out.addr),
    .cmd_len   (cq_out.len),
    .cmd_id    (ID_W'(cq_out.qid)),
    .in_valid  (wr_in_valid),
    .in_ready  (wr_in_ready),
    .in_data   (wr_in_data),
    .in_strb   (wr_in_strb),
    .m_awid, .m_awaddr, .m_awlen, .m_awsize, .m_awburst, .m_awvalid, .m_awready,
    .m_wdata, .m_wstrb, .m_wlast, .m_wvalid, .m_wready,
    .m_bid, .m_bresp, .m_bvalid, .m_bready,
    .b_err, .b_err_id,
    .burst_issue,
    .idle (wr_idle)
  );

  assign ev_wr_err = b_err;
  always_comb begin
    q_wr_err = '0;
    for (int i = 0; i < NUM_RXQ; i++) q_wr_err[i] = b_err && (b_err_id == ID_W'(i));
  end

  // ---------------------------------------------------------------- busy
  // Per queue: write commands planned and not yet fed to the bus, and bursts issued (AW
  // presented; a burst's data may go out before its AW is accepted) whose write response has
  // not come back. A queue that was disabled may have its buffers reused once
  // it is no longer busy (the driver polls STATUS.busy).
  logic [NUM_RXQ-1:0][7:0] cmd_cnt_q, bur_cnt_q;
  always_ff @(posedge clk) begin
    if (rst) begin
      cmd_cnt_q <= '0;
      bur_cnt_q <= '0;
    end else begin
      // (each loop runs only in a cycle with an event for it: a counter cannot move otherwise)
      if ((pcmd_valid && pcmd_ready) || pl_ready) begin
        for (int i = 0; i < NUM_RXQ; i++) begin
          cmd_cnt_q[i] <= cmd_cnt_q[i] + 8'(pcmd_valid && pcmd_ready && pcmd_queue == QW'(i))
                                       - 8'(pl_ready && pl_out.qid == QW'(i));
        end
      end
      if (burst_issue || (m_bvalid && m_bready)) begin
        for (int i = 0; i < NUM_RXQ; i++) begin
          bur_cnt_q[i] <= bur_cnt_q[i] + 8'(burst_issue && m_awid == ID_W'(i))
                                       - 8'(m_bvalid && m_bready && m_bid == ID_W'(i));
        end
      end
    end
  end
  always_comb begin
    for (int i = 0; i < NUM_RXQ; i++) q_busy[i] = plan_busy[i] || cmd_cnt_q[i] != '0 || bur_cnt_q[i] != '0;
  end

  logic unused;
  assign unused = ^{wr_idle, cw_data};
endmodule
