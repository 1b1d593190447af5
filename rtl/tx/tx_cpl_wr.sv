// TX completion writer: puts every frame's completion into its queue's completion ring, in
// frame order, in batches under completion moderation (docs/tx.md, "TX completion",
// "Completion moderation").
//
// Frames that failed before any read (scheduler) and frames that were read (store stage)
// finish on two paths; the scheduler's order note (one per frame, FRAMES deep: the most
// frames in flight) says which path the next completion comes from, so a queue's completions
// keep descriptor order. Each completion gets the queue's next ring slot (the generation bit
// from the slot index) and is held in the queue's batch: up to TX_COAL_MAX records per
// queue, stored by the 16-byte lane of their slot's address (8 lane banks), so a batch of
// consecutive slots reads out as lane-aligned beats. A queue's batch is written when
// (registered decision, every cycle):
//   1. it holds COALESCE.frames completions (0 and values above TX_COAL_MAX count as
//      TX_COAL_MAX; 1, the reset value: every completion alone);
//   2. its next slot would wrap the ring (and until it is written it takes no completion:
//      a batch never crosses the ring's end);
//   3. its first completion has waited COALESCE.usecs * CYCLES_PER_US cycles (0: never);
//   4. every frame the queue has started (`inflight`) has its completion here: nothing
//      else could join the batch soon.
// A written batch is one command to axi_dma_wr (AWID 8 + queue, split only at 4 KiB); when
// its last beat is handed to the bus, CQ.HW_IDX advances by the batch and `cpl_done` reports
// its completions. A queue takes a new completion while its held and written-but-not-done
// records are fewer than TX_COAL_MAX (their lanes must not collide). Without moderation a
// completion is written the cycle after it is ready, one per cycle (one per two cycles at
// 64 bits).
// The merge point also reports each frame's end for the TX counters.
// Reset: synchronous, active high. A queue whose `run` is low has its indices held at zero.
module tx_cpl_wr
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W    = 128,   // DMA width
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned ID_W      = 5,
  parameter int unsigned NUM_TXQ   = 4,
  parameter int unsigned FRAMES    = 16,
  parameter int unsigned MAX_BURST = 256,
  parameter int unsigned CYCLES_PER_US = 250     // cycles per microsecond (COALESCE.usecs)
) (
  input  logic                          clk,
  input  logic                          rst,
  input  logic [NUM_TXQ-1:0]            run,
  input  logic [NUM_TXQ-1:0][63:0]      cq_base,
  input  logic [NUM_TXQ-1:0][3:0]       cq_log2,
  input  logic [NUM_TXQ-1:0][15:0]      coal_usecs,
  input  logic [NUM_TXQ-1:0][7:0]       coal_frames,
  input  logic [NUM_TXQ-1:0][7:0]       inflight,      // frames started, completion not done
  output logic [NUM_TXQ-1:0][15:0]      cq_hw_idx,
  output logic [NUM_TXQ-1:0][3:0]       cpl_done,      // completions whose write went out
  // frame order
  input  logic                          ord_valid,
  output logic                          ord_ready,
  input  logic                          ord_nodata,
  // completions of frames that failed before any read
  input  logic                          fail_valid,
  input  tx_result_t                    fail_cpl,
  // completions of frames that were read
  input  logic                          data_valid,
  input  tx_result_t                    data_cpl,
  // frame ends, for the counters
  output logic                          ev_valid,
  output tx_status_e                    ev_status,
  output logic [15:0]                   ev_len,
  output logic                          ev_tso,        // ... a TSO send's (tso_segs valid)
  output logic [15:0]                   ev_tso_segs,
  output logic [17:0]                   ev_tso_bytes,
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
  output logic [NUM_TXQ-1:0]            q_wr_err,      // SLVERR/DECERR on a completion write
  output logic [NUM_TXQ-1:0]            q_wr_busy      // completion bursts awaiting their response
);
  localparam int unsigned DB   = DATA_W / 8;
  localparam int unsigned DPB  = (DB >= 16) ? DB / 16 : 1;     // 16-byte lanes per beat
  localparam int unsigned NB   = TX_COAL_MAX;                  // lane banks, records per queue
  localparam int unsigned QW   = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1;
  localparam int unsigned SDEP = 8;                            // batches being written

  initial begin
    if ((1 << ID_W) < 8 + NUM_TXQ) $fatal(1, "tx_cpl_wr: ID_W must hold IDs 8 + queue");
    if (NB != 8) $fatal(1, "tx_cpl_wr: the lane banks assume TX_COAL_MAX = 8");
    if (CYCLES_PER_US < 1 || CYCLES_PER_US > 255) $fatal(1, "tx_cpl_wr: CYCLES_PER_US must be 1..255");
  end

  // ---------------------------------------------------------------- the three queues
  logic       ord_out_valid, ord_out_nodata, fq_valid, dq_valid, take;
  tx_result_t fq_cpl, dq_cpl, sel;
  logic       fq_in_ready, dq_in_ready;
  logic [$clog2(FRAMES):0] ord_count, fq_count, dq_count;

  sync_fifo #(.WIDTH(1), .DEPTH(FRAMES)) u_ord (
    .clk, .rst, .clear (1'b0),
    .in_valid (ord_valid), .in_ready (ord_ready), .in_data (ord_nodata),
    .out_valid (ord_out_valid), .out_ready (take), .out_data (ord_out_nodata), .count (ord_count)
  );
  sync_fifo #(.WIDTH($bits(tx_result_t)), .DEPTH(FRAMES)) u_fail (
    .clk, .rst, .clear (1'b0),
    .in_valid (fail_valid), .in_ready (fq_in_ready), .in_data (fail_cpl),
    .out_valid (fq_valid), .out_ready (take && ord_out_nodata), .out_data (fq_cpl), .count (fq_count)
  );
  sync_fifo #(.WIDTH($bits(tx_result_t)), .DEPTH(FRAMES)) u_data (
    .clk, .rst, .clear (1'b0),
    .in_valid (data_valid), .in_ready (dq_in_ready), .in_data (data_cpl),
    .out_valid (dq_valid), .out_ready (take && !ord_out_nodata), .out_data (dq_cpl), .count (dq_count)
  );

  // ---------------------------------------------------------------- per-queue batch state
  logic [NUM_TXQ-1:0][15:0] slot_q;      // completions given a ring slot
  logic [NUM_TXQ-1:0][3:0]  held_q;      // held in the batch
  logic [NUM_TXQ-1:0][15:0] first_q;     // the batch's first slot
  logic [NUM_TXQ-1:0][3:0]  wr_n_q;      // being written (batches issued, not done)
  logic [NUM_TXQ-1:0][23:0] age_q;       // cycles since the batch's first completion
  logic [127:0]             store_q [NB][NUM_TXQ];

  function automatic logic [15:0] ring_mask(input logic [3:0] log2);
    return (16'd1 << log2) - 16'd1;
  endfunction

  // The 16-byte lane (mod 8) of queue t's slot s: its address / 16.
  function automatic logic [2:0] lane_of(input logic [2:0] base_6_4, input logic [3:0] log2,
                                         input logic [15:0] s);
    return 3'(base_6_4 + 3'(s & ring_mask(log2)));
  endfunction

  // ---------------------------------------------------------------- take
  logic [QW-1:0] q;
  logic [15:0]   slot;
  logic          gen, sel_valid;

  assign sel       = ord_out_nodata ? fq_cpl : dq_cpl;
  assign sel_valid = ord_out_valid && (ord_out_nodata ? fq_valid : dq_valid);
  assign q         = QW'(sel.qid);
  assign slot      = slot_q[q];
  assign gen       = !slot[cq_log2[q]];
  // A batch that has reached the ring's end takes nothing more until it is written (rule 2):
  // a record taken then would be written past the ring's end instead of in slot 0.
  assign take      = sel_valid && (32'(held_q[q]) + 32'(wr_n_q[q]) < NB)
                     && !(held_q[q] != '0 && ((first_q[q] + 16'(held_q[q])) & ring_mask(cq_log2[q])) == '0);

  assign ev_valid  = take;
  assign ev_status = sel.status;
  assign ev_len    = sel.len;
  assign ev_tso      = sel.tso;
  assign ev_tso_segs = sel.tso_segs;
  assign ev_tso_bytes = sel.tso_bytes;

  always_ff @(posedge clk) begin
    if (take) store_q[lane_of(cq_base[q][6:4], cq_log2[q], slot)][q] <= pack_tx_cpl(sel, gen);
  end

  // ---------------------------------------------------------------- when a batch is written
  logic [NUM_TXQ-1:0] want;
  always_comb begin
    for (int unsigned t = 0; t < NUM_TXQ; t++) begin
      automatic logic [3:0]  thr     = (coal_frames[t] == 8'd0 || coal_frames[t] >= 8'(NB)) ? 4'(NB)
                                                                                       : 4'(coal_frames[t]);
      automatic logic [15:0] nxt     = first_q[t] + 16'(held_q[t]);
      automatic logic        wraps   = (nxt & ring_mask(cq_log2[t])) == '0;
      automatic logic [23:0] lim     = 24'(coal_usecs[t]) * 24'(CYCLES_PER_US);
      automatic logic        timeout = coal_usecs[t] != '0 && age_q[t] >= lim;
      automatic logic        alone   = 32'(inflight[t]) == 32'(held_q[t]) + 32'(wr_n_q[t]);
      want[t] = held_q[t] != '0 && (held_q[t] >= thr || wraps || timeout || alone);
    end
  end

  // One batch per cycle, lowest queue first (a batch waits at most NUM_TXQ - 1 cycles more).
  logic          fl_any, fl_go, cmd_ready, st_in_ready;
  logic [QW-1:0] fl_q;
  always_comb begin
    fl_any = 1'b0;
    fl_q   = '0;
    for (int t = NUM_TXQ - 1; t >= 0; t--) begin
      if (want[t]) begin
        fl_any = 1'b1;
        fl_q   = QW'(t);
      end
    end
  end
  assign fl_go = fl_any && cmd_ready && st_in_ready;

  logic [63:0] fl_addr;
  assign fl_addr = cq_base[fl_q] + {44'd0, first_q[fl_q] & ring_mask(cq_log2[fl_q]), 4'd0};

  // ---------------------------------------------------------------- batches being written
  typedef struct packed {
    logic [QW-1:0] q;
    logic [63:0]   addr;     // first record's address
    logic [3:0]    n;
    logic [8:0]    beats;
  } batch_t;

  batch_t  st_in, st;
  logic    st_valid, in_valid, in_ready, last;
  logic [$clog2(SDEP):0] st_count;
  logic [8:0] beat_q;

  assign st_in.q     = fl_q;
  assign st_in.addr  = fl_addr;
  assign st_in.n     = held_q[fl_q];
  assign st_in.beats = 9'((32'(fl_addr) % DB + 16 * 32'(held_q[fl_q]) + DB - 1) / DB);

  sync_fifo #(.WIDTH($bits(batch_t)), .DEPTH(SDEP)) u_batches (
    .clk, .rst, .clear (1'b0),
    .in_valid (fl_go), .in_ready (st_in_ready), .in_data (st_in),
    .out_valid (st_valid), .out_ready (in_valid && in_ready && last), .out_data (st), .count (st_count)
  );

  // Beat b of the batch: the 16-byte lanes of its bus word, each from the bank of its address.
  logic [DATA_W-1:0] in_data;
  logic [63:0]       word;
  assign word = (st.addr & ~64'(DB - 1)) + 64'(32'(beat_q) * DB);
  if (DB >= 16) begin : g_wide
    for (genvar j = 0; j < DPB; j++) begin : g_lane
      assign in_data[128 * j +: 128] = store_q[3'((word >> 4) + 64'(j))][st.q];
    end
  end else begin : g_narrow
    assign in_data = word[3] ? store_q[3'(word >> 4)][st.q][127:64] : store_q[3'(word >> 4)][st.q][63:0];
  end
  assign in_valid = st_valid;
  assign last     = beat_q == st.beats - 9'd1;

  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else if (in_valid && in_ready) beat_q <= last ? '0 : beat_q + 1'b1;
  end

  logic batch_done;
  assign batch_done = in_valid && in_ready && last;
  always_comb begin
    cpl_done = '0;
    for (int t = 0; t < NUM_TXQ; t++) begin
      if (batch_done && st.q == QW'(t)) cpl_done[t] = st.n;
    end
  end

  // ---------------------------------------------------------------- per-queue state
  always_ff @(posedge clk) begin
    if (rst) begin
      slot_q    <= '0;
      cq_hw_idx <= '0;
      held_q    <= '0;
      first_q   <= '0;
      wr_n_q    <= '0;
      age_q     <= '0;
    end else begin
      for (int t = 0; t < NUM_TXQ; t++) begin
        if (!run[t]) begin
          slot_q[t]    <= '0;
          cq_hw_idx[t] <= '0;
          held_q[t]    <= '0;
          first_q[t]   <= '0;
          wr_n_q[t]    <= '0;
          age_q[t]     <= '0;
        end else begin
          automatic logic tk = take && q == QW'(t);
          automatic logic fl = fl_go && fl_q == QW'(t);
          automatic logic [3:0] held_n = fl ? 4'd0 : held_q[t];
          if (tk) slot_q[t] <= slot_q[t] + 1'b1;
          if (held_n == '0 && tk) first_q[t] <= slot_q[t];
          else if (fl)            first_q[t] <= first_q[t] + 16'(held_q[t]);
          held_q[t] <= held_n + 4'(tk);
          age_q[t]  <= (held_n == '0) ? '0 : (age_q[t] == '1 ? age_q[t] : age_q[t] + 1'b1);
          wr_n_q[t] <= wr_n_q[t] + (fl ? held_q[t] : 4'd0) - cpl_done[t];
          cq_hw_idx[t] <= cq_hw_idx[t] + 16'(cpl_done[t]);
        end
      end
    end
  end

  // ---------------------------------------------------------------- AXI
  logic              b_err, wr_idle, burst_issue;
  logic [ID_W-1:0]   b_err_id;

  axi_dma_wr #(.DATA_W(DATA_W), .ADDR_W(ADDR_W), .MAX_BURST(MAX_BURST), .ID_W(ID_W)) u_wr (
    .clk, .rst,
    .cmd_valid (fl_any && st_in_ready),
    .cmd_ready,
    .cmd_addr  (ADDR_W'(fl_addr)),
    .cmd_len   (17'(16 * 32'(held_q[fl_q]))),
    .cmd_id    (ID_W'(8 + 32'(fl_q))),
    .in_valid,
    .in_ready,
    .in_data,
    .in_strb   ('1),
    .m_awid, .m_awaddr, .m_awlen, .m_awsize, .m_awburst, .m_awvalid, .m_awready,
    .m_wdata, .m_wstrb, .m_wlast, .m_wvalid, .m_wready,
    .m_bid, .m_bresp, .m_bvalid, .m_bready,
    .b_err, .b_err_id,
    .burst_issue,
    .idle (wr_idle)
  );

  // Bursts issued (AW presented: the data may go out before the AW is accepted) and not yet
  // answered, per queue.
  logic [NUM_TXQ-1:0][7:0] bur_q;
  always_ff @(posedge clk) begin
    if (rst) begin
      bur_q <= '0;
    end else begin
      for (int t = 0; t < NUM_TXQ; t++) begin
        bur_q[t] <= bur_q[t] + 8'(burst_issue && m_awid == ID_W'(8 + t))
                             - 8'(m_bvalid && m_bready && m_bid == ID_W'(8 + t));
      end
    end
  end
  always_comb begin
    for (int t = 0; t < NUM_TXQ; t++) begin
      q_wr_err[t]  = b_err && b_err_id == ID_W'(8 + t);
      q_wr_busy[t] = bur_q[t] != '0;
    end
  end

`ifndef SYNTHESIS
  // Simulation checks start at the first reset: before it every register may hold anything
  // (Verilator --x-initial unique may even show an edge at time 0; xrandom in
  // tests/rtl/test_protocol_bugs.py). Simulation-only code, not part of the design.
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  // At most FRAMES frames between the scheduler's order note and the completion's turn.
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen && ((fail_valid && !fq_in_ready) || (data_valid && !dq_in_ready))) begin
      $error("tx_cpl_wr: completion FIFO overflow");
    end
  end
`endif

  logic unused;
  assign unused = ^{ord_count, fq_count, dq_count, fq_in_ready, dq_in_ready, st_count, wr_idle};
endmodule
