// TX store stage: writes the gathered words of each good frame into the store-and-forward
// TX FIFO, sums them for checksum offload on the way in, and at the frame's end commits the
// frame (or, when a segment read failed, rewinds it: the frame is never sent).
//
//   tx_gather ──► [mask, word count] ──► rx_frame_fifo (commit / rewind) ──► tx_egress
//                          └──► tx_csum ──► tail: egress note (length, checksum and where it
//                                            goes) and the frame's completion
// The frame notes come from the scheduler in frame order (`FRAMES` deep, the most frames in
// flight). The segments of a TSO send are frames of their own (tx_sched): once one of them
// fails (a segment read error, or `tso_poison`: the send's header read failed), the send's
// later segments are dropped too, whatever their reads returned, so no segment after a failed
// read is ever sent (docs/tx.md, "TCP segmentation offload", rule 5). This stage never stalls: the scheduler reserved the FIFO words before it issued
// the reads, so the FIFO always has room for a gathered word.
// Reset: synchronous, active high.
module tx_store
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W     = 128,   // DMA width
  parameter int unsigned FIFO_WORDS = 128,
  parameter int unsigned FRAMES     = 16,
  localparam int unsigned DB        = DATA_W / 8,
  localparam int unsigned LW        = $clog2(DB),
  localparam int unsigned RW        = $clog2(FIFO_WORDS) + 1
) (
  input  logic              clk,
  input  logic              rst,
  // frame notes from the scheduler (good frames only)
  input  logic              frame_valid,
  input  tx_frame_t         frame,
  // gathered words
  input  logic              in_valid,
  input  logic [DATA_W-1:0] in_data,
  input  logic              in_last,
  input  logic              in_err,
  // FIFO read side
  output logic              ff_valid,
  input  logic              ff_ready,
  output logic [DATA_W-1:0] ff_data,
  // egress note, one per committed frame
  output logic              eg_valid,
  output logic [15:0]       eg_len,
  output logic              eg_csum_en,
  output logic [15:0]       eg_csum_pos,
  output logic [15:0]       eg_csum,
  // completion of a frame that was read (OK or DMA_RD_ERR)
  output logic              cpl_valid,
  output tx_result_t        cpl,
  // a failed frame's words were dropped from the FIFO
  output logic              rel_discard,
  output logic [RW-1:0]     rel_discard_words
);
  initial begin
    if ((FIFO_WORDS & (FIFO_WORDS - 1)) != 0) $fatal(1, "tx_store: FIFO_WORDS must be a power of two");
  end

  tx_frame_t rec;
  logic      rec_valid, rec_in_ready;
  logic [$clog2(FRAMES):0] rec_count;

  sync_fifo #(.WIDTH($bits(tx_frame_t)), .DEPTH(FRAMES)) u_notes (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (frame_valid),
    .in_ready  (rec_in_ready),
    .in_data   (frame),
    .out_valid (rec_valid),
    .out_ready (in_valid && in_last),
    .out_data  (rec),
    .count     (rec_count)
  );

  // ---------------------------------------------------------------- checksum byte mask
  logic [RW-1:0]  k_q;            // words of the current frame so far
  logic [15:0]    base;           // frame offset of the word's byte 0
  logic [16:0]    lo_b, hi_b;     // summed bytes of this word: [lo_b, hi_b)
  logic [DB-1:0]  mask;

  assign base = 16'({k_q, {LW{1'b0}}});
  assign lo_b = ({8'd0, rec.csum_start} > base) ? {9'd0, rec.csum_start} - {1'b0, base} : 17'd0;
  assign hi_b = (rec.len > base) ? {1'b0, rec.len} - {1'b0, base} : 17'd0;
  always_comb begin
    for (int j = 0; j < DB; j++) mask[j] = (17'(j) >= lo_b) && (17'(j) < hi_b);
  end

  always_ff @(posedge clk) begin
    if (rst) k_q <= '0;
    else if (in_valid) k_q <= in_last ? '0 : k_q + 1'b1;
  end

  // A TSO send's segments after a failed one fail too (tso_bad_q: an earlier segment of the
  // send at the head failed).
  logic tso_bad_q, err;
  assign err = in_err || (rec.tso && (tso_bad_q || rec.tso_poison));
  always_ff @(posedge clk) begin
    if (rst) tso_bad_q <= 1'b0;
    else if (in_valid && in_last && rec.tso) tso_bad_q <= err && !rec.tso_last;
  end
  assign rel_discard       = in_valid && in_last && err;
  assign rel_discard_words = k_q + 1'b1;

  // ---------------------------------------------------------------- FIFO
  logic wr_full;

  rx_frame_fifo #(.DATA_W(DATA_W), .DEPTH(FIFO_WORDS)) u_fifo (
    .clk,
    .rst,
    .wr_valid (in_valid),
    .wr_data  (in_data),
    .wr_full,
    .wr_end   (in_valid && in_last),
    .wr_keep  (!err),
    .rd_valid (ff_valid),
    .rd_ready (ff_ready),
    .rd_data  (ff_data)
  );

  // ---------------------------------------------------------------- checksum and tail
  typedef struct packed {
    tx_frame_t f;
    logic      err;
  } side_t;

  side_t       side_out;
  logic        cs_valid;
  logic [15:0] cs_sum, cs_res, cs_final;

  tx_csum #(.DATA_W(DATA_W), .SIDE_W($bits(side_t))) u_csum (
    .clk,
    .rst,
    .in_valid,
    .in_data,
    .in_mask  (mask),
    .in_last,
    .in_side  ({rec, err}),
    .out_valid (cs_valid),
    .out_sum   (cs_sum),
    .out_side  (side_out)
  );

  // Complement; the UDP rule turns a computed 0x0000 into 0xFFFF (RFC 768).
  assign cs_res   = ~cs_sum;
  assign cs_final = (side_out.f.csum_udp && cs_res == 16'h0000) ? 16'hFFFF : cs_res;

  assign eg_valid    = cs_valid && !side_out.err;
  assign eg_len      = side_out.f.len;
  assign eg_csum_en  = side_out.f.csum_en;
  assign eg_csum_pos = side_out.f.csum_pos;
  assign eg_csum     = cs_final;

  assign cpl_valid = cs_valid;
  always_comb begin
    cpl          = '0;
    cpl.qid      = side_out.f.qid;
    cpl.desc_idx = side_out.f.desc_idx;
    cpl.ndesc    = side_out.f.ndesc;
    cpl.len      = side_out.f.len;
    cpl.tag      = side_out.f.tag;
    cpl.csum     = (side_out.f.csum_en && !side_out.err) ? cs_final : 16'd0;
    cpl.status   = side_out.err ? TX_DMA_RD_ERR : TX_OK;
    cpl.tso      = side_out.f.tso;
    cpl.tso_more = side_out.f.tso && !side_out.f.tso_last;
    cpl.tso_segs = 16'(side_out.f.tso && !side_out.err);
    cpl.tso_pay  = side_out.f.tso_pay;
  end

`ifndef SYNTHESIS
  // Simulation checks start at the first reset: before it every register may hold anything
  // (Verilator --x-initial unique may even show an edge at time 0; xrandom in
  // tests/rtl/test_protocol_bugs.py). Simulation-only code, not part of the design.
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  // What the scheduler's reservations guarantee (docs/tx.md): a gathered word always finds
  // room in the TX FIFO, a frame note always finds room, and a word never comes without one.
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen) begin
      if (in_valid && wr_full) $error("tx_store: TX FIFO overflow: a gathered word was lost");
      if (frame_valid && !rec_in_ready) $error("tx_store: frame note FIFO overflow");
      if (in_valid && !rec_valid) $error("tx_store: a word arrived without a frame note");
    end
  end
`endif

  logic unused;
  assign unused = ^{rec_valid, rec_in_ready, rec_count, wr_full};
endmodule
