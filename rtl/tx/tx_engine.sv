// The TX path (docs/tx.md): descriptor prefetch for every queue, scheduler, segment reads,
// gather, checksum, store-and-forward FIFO, egress to the MAC and the completion writer.
//
//   tx_desc_engine ─► tx_sched ─► AR (ARID 24) ······► R ─► tx_gather ─► tx_store ─► tx_egress ─► m_axis_tx
//   (ARID 16+t)          │  └─► burst notes ──────────────────┘      │ (tx_csum, FIFO)
//                        ├─► frame notes ─────────────────────────────┘        │
//                        └─► failed frames, order notes ─► tx_cpl_wr ◄─ completions
//                                                             └─► AW/W/B (AWID 8+t)
// The caller owns the shared AXI read port (arbitration, R routing by ID) and the write port
// arbitration. Every R beat of a descriptor read is taken at once (the cache room was
// reserved when the read was issued); R beats of the data reads are taken as tx_gather says
// (`d_rready`: at once unless an inline header needs a cycle, see tx_gather), and never wait
// for FIFO space (the scheduler reserved room for the whole frame before issuing its reads).
// Per queue: `busy` while a frame has been taken and its completion is not on the bus yet, or a
// completion write awaits its response; with `enable` and `busy` low the queue's ring is idle
// in the descriptor engine and its indices are zero.
// Reset: synchronous, active high: queues idle, FIFO empty, m_axis_tvalid low.
module tx_engine
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W     = 64,     // MAC width
  parameter int unsigned DMA_DATA_W = 128,
  parameter int unsigned ADDR_W     = 64,
  parameter int unsigned ID_W       = 5,
  parameter int unsigned DESC_ID    = 16,     // ARID of queue 0's descriptor reads (queue t: + t)
  parameter int unsigned NUM_TXQ    = 4,
  parameter int unsigned FIFO_BYTES = 16384,  // TX store-and-forward FIFO
  parameter int unsigned DESC_SLOTS = 64,     // descriptor cache entries per queue
  parameter int unsigned DESC_BATCH = 32,     // entries per descriptor read
  parameter int unsigned MAX_BURST  = 256,
  parameter int unsigned CYCLES_PER_US = 250  // cycles per microsecond (COALESCE.usecs)
) (
  input  logic                          clk,
  input  logic                          rst,
  input  txq_cfg_t [NUM_TXQ-1:0]        qcfg,
  input  logic [15:0]                   max_frame_len,
  // descriptor reads of every queue (ARID DESC_ID + queue)
  output logic                          f_arvalid,
  input  logic                          f_arready,
  output logic [ADDR_W-1:0]             f_araddr,
  output logic [7:0]                    f_arlen,
  output logic [ID_W-1:0]               f_arid,
  input  logic                          f_rvalid,     // R beats with those IDs (always taken)
  input  logic [ID_W-1:0]               m_rid,
  // segment reads
  output logic                          d_arvalid,
  input  logic                          d_arready,
  output logic [ADDR_W-1:0]             d_araddr,
  output logic [7:0]                    d_arlen,
  input  logic                          d_rvalid,
  output logic                          d_rready,
  // shared read data
  input  logic [DMA_DATA_W-1:0]         m_rdata,
  input  logic [1:0]                    m_rresp,
  input  logic                          m_rlast,
  // completion writes
  output logic [ID_W-1:0]               m_awid,
  output logic [ADDR_W-1:0]             m_awaddr,
  output logic [7:0]                    m_awlen,
  output logic [2:0]                    m_awsize,
  output logic [1:0]                    m_awburst,
  output logic                          m_awvalid,
  input  logic                          m_awready,
  output logic [DMA_DATA_W-1:0]         m_wdata,
  output logic [DMA_DATA_W/8-1:0]       m_wstrb,
  output logic                          m_wlast,
  output logic                          m_wvalid,
  input  logic                          m_wready,
  input  logic [ID_W-1:0]               m_bid,
  input  logic [1:0]                    m_bresp,
  input  logic                          m_bvalid,
  output logic                          m_bready,
  // MAC stream
  output logic [DATA_W-1:0]             m_axis_tdata,
  output logic [DATA_W/8-1:0]           m_axis_tkeep,
  output logic                          m_axis_tvalid,
  input  logic                          m_axis_tready,
  output logic                          m_axis_tlast,
  // state for the registers
  output logic [NUM_TXQ-1:0][15:0]      desc_hw_idx,
  output logic [NUM_TXQ-1:0][15:0]      cq_hw_idx,
  output logic [NUM_TXQ-1:0]            q_busy,
  output logic [NUM_TXQ-1:0]            q_halted,     // STATUS.halted
  output logic [NUM_TXQ-1:0]            q_wr_err,
  // frame ends (counters)
  output logic                          ev_valid,
  output tx_status_e                    ev_status,
  output logic [15:0]                   ev_len,
  output logic                          ev_tso,       // ... a TSO send's (ev_len: P)
  output logic [15:0]                   ev_tso_segs,  // ... its segments sent
  output logic [17:0]                   ev_tso_bytes  // ... their bytes
);
  localparam int unsigned DB         = DMA_DATA_W / 8;
  localparam int unsigned LW         = $clog2(DB);
  localparam int unsigned FIFO_WORDS = FIFO_BYTES / DB;
  localparam int unsigned RW         = $clog2(FIFO_WORDS) + 1;
  localparam int unsigned FRAMES     = 16;    // frames between scheduler and completion writer
  localparam int unsigned EGR_FRAMES = 32;    // frames in the TX FIFO
  localparam int unsigned BN_DEPTH   = 32;    // data read bursts in flight
  localparam int unsigned W          = (DB >= 16) ? DB / 16 : 1;   // descriptor window
  localparam int unsigned WW         = $clog2(W + 1);
  localparam int unsigned PW         = $clog2(DESC_SLOTS);
  localparam int unsigned HB         = TX_INLINE_MAX * 8;

  initial begin
    if (FIFO_BYTES < 9216 || (FIFO_BYTES & (FIFO_BYTES - 1)) != 0 || FIFO_BYTES > 255 * 1024) begin
      $fatal(1, "tx_engine: FIFO_BYTES must be a power of two, 16..128 KiB");
    end
  end

  // ---------------------------------------------------------------- descriptor fetch
  localparam int unsigned QW = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1;
  logic [NUM_TXQ-1:0]        q_en, q_inl, run, pushed, cq_room;
  logic [NUM_TXQ-1:0][PW:0]  count;
  logic [NUM_TXQ-1:0][63:0]  ring_base;
  logic [NUM_TXQ-1:0][3:0]   ring_log2;
  logic [NUM_TXQ-1:0][15:0]  ring_sw_idx;
  logic [NUM_TXQ-1:0][7:0]   inflight_q;
  logic [NUM_TXQ-1:0][3:0]   cpl_done;
  logic [NUM_TXQ-1:0]        wr_busy;
  logic                      start_valid;
  logic [2:0]                start_queue;
  logic                      win_load;
  logic [QW-1:0]             win_load_q, win_q;
  logic [W-1:0][128:0]       win;
  logic [W-1:0]              win_end;
  logic [4:0]                win_k0;
  logic [WW-1:0]             win_n, pop_n;
  logic [TX_FRAME_MAX_ENTRIES-1:0] head_ends;

  tx_desc_engine #(
    .NUM_TXQ(NUM_TXQ), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .ID_BASE(DESC_ID),
    .SLOTS(DESC_SLOTS), .MAX_BATCH(DESC_BATCH)
  ) u_fetch (
    .clk,
    .rst,
    .enable      (q_en),
    .inline_en   (q_inl),
    .run,
    .ring_base,
    .ring_log2,
    .sw_idx      (ring_sw_idx),
    .m_arvalid   (f_arvalid),
    .m_arready   (f_arready),
    .m_araddr    (f_araddr),
    .m_arlen     (f_arlen),
    .m_arid      (f_arid),
    .m_rvalid    (f_rvalid),
    .m_rid,
    .m_rdata,
    .m_rresp,
    .m_rlast,
    .count,
    .pushed,
    .load        (win_load),
    .load_q      (win_load_q),
    .win_q,
    .win,
    .win_end,
    .win_k0,
    .win_n,
    .pop_n,
    .head_ends,
    .hw_idx      (desc_hw_idx)
  );

  for (genvar t = 0; t < NUM_TXQ; t++) begin : g_q
    assign ring_base[t]   = qcfg[t].ring_base;
    assign ring_log2[t]   = qcfg[t].ring_log2;
    assign ring_sw_idx[t] = qcfg[t].sw_idx;

    // Frames taken and not yet completed; the completion ring must have room for all of them.
    logic [15:0] used;
    logic [16:0] size;
    always_ff @(posedge clk) begin
      if (rst) inflight_q[t] <= '0;
      else     inflight_q[t] <= inflight_q[t] + 8'(start_valid && start_queue == 3'(t)) - 8'(cpl_done[t]);
    end
    assign used       = cq_hw_idx[t] - qcfg[t].cq_sw_idx;
    assign size       = 17'd1 << qcfg[t].cq_log2;
    assign cq_room[t] = ({1'b0, used} <= size) && ({1'b0, used} + 17'(inflight_q[t]) < size);
    assign q_busy[t]  = inflight_q[t] != '0 || wr_busy[t];
    assign q_en[t]    = qcfg[t].enable;
    assign q_inl[t]   = qcfg[t].inline_en;
    assign run[t]     = q_en[t] || q_busy[t];
  end

  // ---------------------------------------------------------------- scheduler
  logic          ord_valid, ord_ready, ord_nodata, fail_valid, frame_valid;
  tx_result_t    fail_cpl;
  tx_frame_t     frame;
  logic          rel_word, rel_frame, rel_discard;
  logic [RW-1:0] rel_discard_words;
  logic          bn_valid, bn_ready, bn_frame_last;
  logic [8:0]    bn_beats;
  logic [LW-1:0] bn_lo;
  logic [LW:0]   bn_hi;
  logic          hn_valid, hn_ready, hn_data, hn_tso;
  logic          g_hn_ready;                    // the gather's header-note FIFO has room
  logic                  g_valid, g_last, g_err, g_tso, g_dest_valid, g_dest_in_ready;
  logic [$clog2(FRAMES):0] g_dest_count;
  logic                  unused_dest;               // one entry per header note, popped at
  assign unused_dest = ^{g_dest_valid, g_dest_count};   // the gather's last word of that frame
  logic [DMA_DATA_W-1:0] g_data;
  logic [7:0]    hn_len;
  logic [HB-1:0] hn_hdr;

  tx_sched #(
    .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .NUM_TXQ(NUM_TXQ), .MAX_BURST(MAX_BURST),
    .FIFO_WORDS(FIFO_WORDS), .EGR_FRAMES(EGR_FRAMES), .SLOTS(DESC_SLOTS)
  ) u_sched (
    .clk,
    .rst,
    .max_frame_len,
    .q_enable    (q_en),
    .q_inline_en (q_inl),
    .run,
    .q_halted,
    .cq_room,
    .count,
    .pushed,
    .desc_hw_idx,
    .load        (win_load),
    .load_q      (win_load_q),
    .win_q,
    .win,
    .win_end,
    .win_k0,
    .win_n,
    .pop_n,
    .head_ends,
    .start_valid,
    .start_queue,
    .ord_valid, .ord_ready, .ord_nodata,
    .fail_valid, .fail_cpl,
    .frame_valid, .frame,
    .hn_valid, .hn_ready, .hn_len, .hn_data, .hn_hdr, .hn_tso,
    .g_tso_valid (g_valid && g_tso),
    .g_tso_data  (g_data),
    .g_tso_last  (g_last),
    .g_tso_err   (g_err),
    .rel_word, .rel_frame, .rel_discard, .rel_discard_words,
    .m_arvalid (d_arvalid),
    .m_arready (d_arready),
    .m_araddr  (d_araddr),
    .m_arlen   (d_arlen),
    .bn_valid, .bn_ready, .bn_beats, .bn_lo, .bn_hi, .bn_frame_last
  );

  // ---------------------------------------------------------------- gather, store, egress
  // Where each gathered frame goes, in header-note order: tx_store, or (a TSO send's header)
  // back to the scheduler's tx_tso_hdr.
  // A header note is taken only when both the gather's note FIFO and u_dest have room
  // (hn_ready towards the scheduler is their AND; the gather sees hn_valid only while u_dest
  // has room). Without TSO the completion order FIFO already bounds the frames in flight to
  // FRAMES, so this never stalls; a TSO send's segments take one order entry for many frame
  // notes, and u_dest (and tx_store's frame-note FIFO, pushed with the same notes and popped
  // no later) would otherwise overflow when the gather falls FRAMES segments behind.
  assign hn_ready = g_hn_ready && g_dest_in_ready;
  sync_fifo #(.WIDTH(1), .DEPTH(FRAMES)) u_dest (
    .clk, .rst, .clear (1'b0),
    .in_valid (hn_valid && hn_ready), .in_ready (g_dest_in_ready), .in_data (hn_tso),
    .out_valid (g_dest_valid), .out_ready (g_valid && g_last), .out_data (g_tso), .count (g_dest_count)
  );

  tx_gather #(.DATA_W(DMA_DATA_W), .BN_DEPTH(BN_DEPTH), .HN_DEPTH(FRAMES), .HB(HB)) u_gather (
    .clk,
    .rst,
    .hn_valid      (hn_valid && g_dest_in_ready),
    .hn_ready      (g_hn_ready),
    .hn_len,
    .hn_data,
    .hn_hdr,
    .bn_valid,
    .bn_ready,
    .bn_beats,
    .bn_lo,
    .bn_hi,
    .bn_frame_last,
    .r_valid       (d_rvalid),
    .r_ready       (d_rready),
    .r_data        (m_rdata),
    .r_err         (m_rresp[1]),
    .out_valid     (g_valid),
    .out_data      (g_data),
    .out_last      (g_last),
    .out_err       (g_err)
  );

  logic                  ff_valid, ff_ready, eg_valid, eg_csum_en, data_valid, seg_valid;
  logic [DMA_DATA_W-1:0] ff_data;
  logic [15:0]           eg_len, eg_csum_pos, eg_csum;
  tx_result_t            data_cpl, seg_cpl;

  tx_store #(.DATA_W(DMA_DATA_W), .FIFO_WORDS(FIFO_WORDS), .FRAMES(FRAMES)) u_store (
    .clk,
    .rst,
    .frame_valid,
    .frame,
    .in_valid  (g_valid && !g_tso),
    .in_data   (g_data),
    .in_last   (g_last),
    .in_err    (g_err),
    .ff_valid, .ff_ready, .ff_data,
    .eg_valid, .eg_len, .eg_csum_en, .eg_csum_pos, .eg_csum,
    .cpl_valid (seg_valid),
    .cpl       (seg_cpl),
    .rel_discard,
    .rel_discard_words
  );

  tx_egress #(.DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .FRAMES(EGR_FRAMES)) u_egress (
    .clk,
    .rst,
    .eg_valid, .eg_len, .eg_csum_en, .eg_csum_pos, .eg_csum,
    .ff_valid, .ff_ready, .ff_data,
    .m_axis_tdata, .m_axis_tkeep, .m_axis_tvalid, .m_axis_tready, .m_axis_tlast,
    .rel_word,
    .rel_frame
  );

  // ---------------------------------------------------------------- TSO: one result per send
  // tx_store reports every TCP segment of a TSO send as the frame it is; its send's single
  // completion is merged here: segments sent (those before the first failed one; tx_store
  // fails every later one), DMA_RD_ERR if one failed, len = the send's payload bytes, csum 0
  // (docs/tx.md, "TCP segmentation offload"). Results of other frames pass as they are.
  logic [15:0] mg_segs_q;
  logic [17:0] mg_bytes_q;
  logic        mg_err_q;
  always_comb begin
    data_cpl = seg_cpl;
    if (seg_cpl.tso) begin
      data_cpl.len      = seg_cpl.tso_pay;
      data_cpl.csum     = '0;
      data_cpl.tso_more = 1'b0;
      data_cpl.tso_segs = mg_segs_q + seg_cpl.tso_segs;
      // A segment shorter than 60 bytes is sent (and counted) padded to 60 (tx_egress).
      data_cpl.tso_bytes = mg_bytes_q + ((seg_cpl.tso_segs == '0) ? '0
                           : (seg_cpl.len < 16'(TX_MIN_FRAME_LEN)) ? 18'(TX_MIN_FRAME_LEN) : 18'(seg_cpl.len));
      data_cpl.status   = (mg_err_q || seg_cpl.status != TX_OK) ? TX_DMA_RD_ERR : TX_OK;
    end
  end
  assign data_valid  = seg_valid && !(seg_cpl.tso && seg_cpl.tso_more);
  always_ff @(posedge clk) begin
    if (rst) begin
      mg_segs_q  <= '0;
      mg_bytes_q <= '0;
      mg_err_q   <= 1'b0;
    end else if (seg_valid && seg_cpl.tso) begin
      mg_segs_q  <= seg_cpl.tso_more ? data_cpl.tso_segs : '0;
      mg_bytes_q <= seg_cpl.tso_more ? data_cpl.tso_bytes : '0;
      mg_err_q  <= seg_cpl.tso_more && (mg_err_q || seg_cpl.status != TX_OK);
    end
  end

  // ---------------------------------------------------------------- completions
  logic [NUM_TXQ-1:0][63:0] cq_base;
  logic [NUM_TXQ-1:0][3:0]  cq_log2;
  logic [NUM_TXQ-1:0][15:0] coal_usecs;
  logic [NUM_TXQ-1:0][7:0]  coal_frames;
  always_comb begin
    for (int t = 0; t < NUM_TXQ; t++) begin
      cq_base[t]     = qcfg[t].cq_base;
      cq_log2[t]     = qcfg[t].cq_log2;
      coal_usecs[t]  = qcfg[t].coal_usecs;
      coal_frames[t] = qcfg[t].coal_frames;
    end
  end

  tx_cpl_wr #(
    .DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .NUM_TXQ(NUM_TXQ), .FRAMES(FRAMES),
    .MAX_BURST(MAX_BURST), .CYCLES_PER_US(CYCLES_PER_US)
  ) u_cpl (
    .clk,
    .rst,
    .run,
    .cq_base,
    .cq_log2,
    .coal_usecs,
    .coal_frames,
    .inflight  (inflight_q),
    .cq_hw_idx,
    .cpl_done,
    .ord_valid, .ord_ready, .ord_nodata,
    .fail_valid, .fail_cpl,
    .data_valid, .data_cpl,
    .ev_valid, .ev_status, .ev_len, .ev_tso, .ev_tso_segs, .ev_tso_bytes,
    .m_awid, .m_awaddr, .m_awlen, .m_awsize, .m_awburst, .m_awvalid, .m_awready,
    .m_wdata, .m_wstrb, .m_wlast, .m_wvalid, .m_wready,
    .m_bid, .m_bresp, .m_bvalid, .m_bready,
    .q_wr_err,
    .q_wr_busy (wr_busy)
  );
endmodule
