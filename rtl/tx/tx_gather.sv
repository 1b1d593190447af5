// TX gather: packs each frame's inline header (from the scheduler) and the R beats of its
// segment reads, whatever their alignment, into a contiguous stream of DMA-width words (word
// k holds frame bytes [k * DB, (k + 1) * DB)).
//
// Per good frame the scheduler hands a header note (its inline header, maybe none, and
// whether segment reads follow) and per read burst a burst note (pushed when the burst is
// issued; reads use one ARID, so data returns in note order): its beat count, the first
// valid lane of its first beat, one past the last valid lane of its last beat, and whether
// it ends the frame. Items enter stage 1 one per cycle: a header word, or an R beat.
//   stage 1: an R beat's valid bytes are shifted down to lane 0 and the rest cleared; a
//            header's full words pass as they are (registered). The header's last, partial
//            word (H mod DB bytes) rides along with the frame's first R beat (or alone, as
//            the frame's end, when no read follows), so a header shorter than a DMA word
//            costs no cycle of its own.
//   stage 2: items are appended to the partial word (the header remainder first); a full
//            word goes out. A frame may end with two words in one cycle, and a frame may
//            have more words than R beats: a buffer with two write ports absorbs that, and
//            stage 1 takes no new item while it holds more than EB_STALL words (the bound is
//            proved at the buffer, and simulation checks it).
// R beats are back-pressured (`r_ready` low) only while a header's full words go in (one
// cycle per full word: headers of at least one DMA word), while the buffer is above
// EB_STALL (frames whose words outnumber their beats, back to back), and at a frame's start
// until its header note is there (it is pushed before the frame's first read is issued).
// Output: one word per cycle at most, no back-pressure; `out_err` on a frame's last word says
// a beat of the frame came back with SLVERR/DECERR.
// Reset: synchronous, active high; do not reset with reads in flight.
module tx_gather #(
  parameter int unsigned DATA_W   = 128,   // DMA width
  parameter int unsigned BN_DEPTH = 32,    // burst notes (reads in flight)
  parameter int unsigned HN_DEPTH = 16,    // header notes (frames between scheduler and here)
  parameter int unsigned HB       = 1024,  // inline header bits (TX_INLINE_MAX * 8)
  localparam int unsigned DB      = DATA_W / 8,
  localparam int unsigned LW      = $clog2(DB)
) (
  input  logic              clk,
  input  logic              rst,
  // header notes (one per good frame)
  input  logic              hn_valid,
  output logic              hn_ready,
  input  logic [7:0]        hn_len,
  input  logic              hn_data,
  input  logic [HB-1:0]     hn_hdr,
  // burst notes
  input  logic              bn_valid,
  output logic              bn_ready,
  input  logic [8:0]        bn_beats,
  input  logic [LW-1:0]     bn_lo,
  input  logic [LW:0]       bn_hi,
  input  logic              bn_frame_last,
  // read data (only beats of the TX data ID)
  input  logic              r_valid,
  output logic              r_ready,
  input  logic [DATA_W-1:0] r_data,
  input  logic              r_err,
  // packed words
  output logic              out_valid,
  output logic [DATA_W-1:0] out_data,
  output logic              out_last,
  output logic              out_err
);
  localparam int unsigned HWORDS = (HB / 8 + DB - 1) / DB;    // header words at most
  localparam int unsigned HIW    = $clog2(HWORDS + 1);

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "tx_gather: DATA_W must be a power of two >= 64");
    if (HB % 128 != 0) $fatal(1, "tx_gather: HB must be a multiple of 128");
  end

  typedef struct packed {
    logic [8:0]    beats;
    logic [LW-1:0] lo;
    logic [LW:0]   hi;
    logic          frame_last;
  } note_t;

  note_t       note;
  logic        note_valid;
  logic [8:0]  beat_q;
  logic        first, last_beat;
  logic [$clog2(BN_DEPTH):0] bn_count;
  logic        r_take;             // an R beat enters stage 1

  sync_fifo #(.WIDTH($bits(note_t)), .DEPTH(BN_DEPTH)) u_notes (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (bn_valid),
    .in_ready  (bn_ready),
    .in_data   ({bn_beats, bn_lo, bn_hi, bn_frame_last}),
    .out_valid (note_valid),
    .out_ready (r_take && last_beat),
    .out_data  (note),
    .count     (bn_count)
  );

  assign first     = beat_q == '0;
  assign last_beat = beat_q == note.beats - 9'd1;

  always_ff @(posedge clk) begin
    if (rst) beat_q <= '0;
    else if (r_take) beat_q <= last_beat ? '0 : beat_q + 9'd1;
  end

  // ---------------------------------------------------------------- header notes
  logic              hq_valid, hq_take, hq_data;
  logic [7:0]        hq_len;
  logic [HB-1:0]     hq_hdr;
  logic [$clog2(HN_DEPTH):0] hn_count;

  sync_fifo #(.WIDTH(9 + HB), .DEPTH(HN_DEPTH)) u_hdrs (
    .clk,
    .rst,
    .clear     (1'b0),
    .in_valid  (hn_valid),
    .in_ready  (hn_ready),
    .in_data   ({hn_len, hn_data, hn_hdr}),
    .out_valid (hq_valid),
    .out_ready (hq_take),
    .out_data  ({hq_len, hq_data, hq_hdr}),
    .count     (hn_count)
  );

  // The head frame's header: its full words and the bytes of its partial last word.
  logic [HIW-1:0] h_full;
  logic [LW-1:0]  h_rem;
  assign h_rem  = LW'(hq_len);                    // hq_len mod DB (DB <= 128: fits 8 bits)
  assign h_full = HIW'(32'(hq_len) >> LW);

  function automatic logic [DATA_W-1:0] hdr_word(input logic [HB-1:0] h, input logic [HIW-1:0] k);
    logic [(HWORDS+1)*DATA_W-1:0] wide;     // one word more: k may be HWORDS (a remainder of 0)
    wide = {{((HWORDS+1)*DATA_W - HB){1'b0}}, h};
    return wide[32'(k) * DATA_W +: DATA_W];
  endfunction

  // The header's partial last word: its first h_rem bytes (the rest of the entry is padding
  // or an older frame's bytes).
  function automatic logic [DATA_W-1:0] hdr_rem_word(input logic [HB-1:0] h, input logic [HIW-1:0] k,
                                                     input logic [LW-1:0] nb);
    logic [DATA_W-1:0] w;
    w = hdr_word(h, k);
    for (int j = 0; j < DB; j++) if (j >= 32'(nb)) w[8*j +: 8] = 8'd0;
    return w;
  endfunction

  // ---------------------------------------------------------------- stage 1 input
  logic           at_start_q;      // the next item starts a frame
  logic [HIW-1:0] hw_q;            // full header words of the head frame already in
  logic           eb_ok;           // the buffer can take what one more item gives
  logic           hw_item, end_item, pre_take;

  // A full header word goes in; then the frame's first R beat (carrying the header's
  // remainder), or, for a frame without reads, its remainder alone as the frame's end.
  assign hw_item  = at_start_q && hq_valid && hw_q < h_full && eb_ok;
  assign end_item = at_start_q && hq_valid && hw_q == h_full && !hq_data && h_rem != '0 && eb_ok;
  assign r_ready  = eb_ok && (!at_start_q || (hq_valid && hw_q == h_full && hq_data));
  assign r_take   = r_valid && r_ready;
  assign pre_take = r_take && at_start_q;
  // The header note is done with its frame's first beat, or with its last item.
  assign hq_take  = pre_take || end_item ||
                    (hw_item && hw_q == h_full - 1'b1 && h_rem == '0 && !hq_data);

  always_ff @(posedge clk) begin
    if (rst) begin
      at_start_q <= 1'b1;
      hw_q       <= '0;
    end else begin
      if (hw_item) hw_q <= hw_q + 1'b1;
      if (hq_take) hw_q <= '0;
      if (r_take)  at_start_q <= last_beat && note.frame_last;
    end
  end

  // ---------------------------------------------------------------- stage 1: normalise
  logic [LW-1:0]     lo;
  logic [LW:0]       hi, n;
  logic [DATA_W-1:0] down, keep;

  assign lo   = first ? note.lo : '0;
  assign hi   = last_beat ? note.hi : (LW+1)'(DB);
  assign n    = hi - {1'b0, lo};
  assign down = r_data >> {lo, 3'b000};
  always_comb begin
    for (int j = 0; j < DB; j++) keep[8*j +: 8] = {8{(LW+1)'(j) < n}};
  end

  logic              s1_valid_q, s1_end_q, s1_err_q;
  logic [DATA_W-1:0] s1_data_q, s1_pre_q;
  logic [LW:0]       s1_n_q;
  logic [LW-1:0]     s1_pre_n_q;

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= r_take || hw_item || end_item;
  end
  always_ff @(posedge clk) begin
    if (r_take) begin
      s1_data_q  <= down & keep;
      s1_n_q     <= n;
      s1_end_q   <= last_beat && note.frame_last;
      s1_err_q   <= r_err;
      s1_pre_n_q <= at_start_q ? h_rem : '0;
      s1_pre_q   <= at_start_q ? hdr_rem_word(hq_hdr, h_full, h_rem) : '0;
    end else if (hw_item || end_item) begin
      s1_data_q  <= hw_item ? hdr_word(hq_hdr, hw_q) : '0;
      s1_n_q     <= hw_item ? (LW+1)'(DB) : '0;
      s1_end_q   <= end_item || (h_rem == '0 && !hq_data && hw_q == h_full - 1'b1);
      s1_err_q   <= 1'b0;
      s1_pre_n_q <= end_item ? h_rem : '0;
      s1_pre_q   <= end_item ? hdr_rem_word(hq_hdr, h_full, h_rem) : '0;
    end
  end

  // ---------------------------------------------------------------- stage 2: append
  // A header remainder only comes with a frame's first item, when the partial word is empty
  // (fill 0): the shift is by fill or by the remainder, never by both.
  logic [DATA_W-1:0]   acc_q;
  logic [LW-1:0]       fill_q;
  logic                err_q;
  logic [2*DATA_W-1:0] comb;
  logic [LW+1:0]       total;
  logic [LW-1:0]       shamt;
  logic                w0_valid, w1_valid, w0_last, frame_err;

  assign shamt     = fill_q | s1_pre_n_q;
  assign comb      = {{DATA_W{1'b0}}, acc_q | s1_pre_q} | ({{DATA_W{1'b0}}, s1_data_q} << {shamt, 3'b000});
  assign total     = {2'b00, shamt} + {1'b0, s1_n_q};
  assign frame_err = err_q || s1_err_q;
  assign w0_valid  = s1_valid_q && (s1_end_q || total >= (LW+2)'(DB));
  assign w1_valid  = s1_valid_q && s1_end_q && total > (LW+2)'(DB);
  assign w0_last   = s1_end_q && !w1_valid;

  always_ff @(posedge clk) begin
    if (rst) begin
      acc_q  <= '0;
      fill_q <= '0;
      err_q  <= 1'b0;
    end else if (s1_valid_q) begin
      if (s1_end_q) begin
        acc_q  <= '0;
        fill_q <= '0;
        err_q  <= 1'b0;
      end else begin
        err_q <= frame_err;
        if (total >= (LW+2)'(DB)) begin
          acc_q  <= comb[2*DATA_W-1:DATA_W];
          fill_q <= LW'(total - (LW+2)'(DB));
        end else begin
          acc_q  <= comb[DATA_W-1:0];
          fill_q <= LW'(total);
        end
      end
    end
  end

  // ---------------------------------------------------------------- two-in, one-out buffer
  // Occupancy bound (occ(c): words held at the start of cycle c; one leaves in every cycle
  // with occ > 0; an item taken into stage 1 in cycle c writes at most 2 words at the end of
  // cycle c + 1; stage 1 takes an item only in a cycle with occ <= EB_STALL):
  //   - if occ(c) <= EB_STALL: occ(c+1) <= max(occ(c) - 1, 0) + 2 <= EB_STALL + 1;
  //   - if occ(c) = EB_STALL + 1: no item at c, but one from c - 1 may still write 2:
  //     occ(c+1) <= EB_STALL + 2;
  //   - if occ(c) = EB_STALL + 2 (> 2): the cycle before had occ >= EB_STALL + 1 (else
  //     occ(c) <= EB_STALL + 1), so no item was taken then and none writes at c:
  //     occ(c+1) = EB_STALL + 1.
  // So occ never exceeds EB_STALL + 2 (EB_BOUND) <= EB. Stage 1 being throttled only above
  // EB_STALL, a stream of frames with no more words than beats (occupancy at most 2, as
  // before inline headers) is never slowed.
  localparam int unsigned EB       = 8;
  localparam int unsigned EB_STALL = 4;
  localparam int unsigned EB_BOUND = EB_STALL + 2;
  logic [DATA_W+1:0] eb_q [EB];        // {last, err, data}
  logic [3:0]        eb_wr_q, eb_rd_q, eb_count;

  initial begin
    if (EB < EB_BOUND || (EB & (EB - 1)) != 0) $fatal(1, "tx_gather: EB must be a power of two >= EB_BOUND");
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      eb_wr_q <= '0;
      eb_rd_q <= '0;
    end else begin
      eb_wr_q <= eb_wr_q + 4'(w0_valid) + 4'(w1_valid);
      if (out_valid) eb_rd_q <= eb_rd_q + 4'd1;
    end
  end
  always_ff @(posedge clk) begin
    if (w0_valid) eb_q[eb_wr_q[2:0]]        <= {w0_last, frame_err, comb[DATA_W-1:0]};
    if (w1_valid) eb_q[eb_wr_q[2:0] + 3'd1] <= {1'b1, frame_err, comb[2*DATA_W-1:DATA_W]};
  end

  assign eb_count  = eb_wr_q - eb_rd_q;
  assign eb_ok     = 32'(eb_count) <= EB_STALL;
  assign out_valid = eb_count != '0;
  assign {out_last, out_err, out_data} = eb_q[eb_rd_q[2:0]];

`ifndef SYNTHESIS
  // Simulation checks start at the first reset: before it every register may hold anything
  // (Verilator --x-initial unique may even show an edge at time 0; xrandom in
  // tests/rtl/test_protocol_bugs.py). Simulation-only code, not part of the design.
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  // The bound proved above; a beat always has its burst note, and a frame's header note
  // comes before its first beat.
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen && 32'(eb_count) > EB_BOUND) $error("tx_gather: %0d words buffered, bound is %0d", eb_count, EB_BOUND);
    if (!rst && sim_rst_seen && r_valid && !note_valid) $error("tx_gather: R beat without a burst note");
  end
`endif

  logic unused;
  assign unused = ^{bn_count, hn_count, note_valid};
endmodule
