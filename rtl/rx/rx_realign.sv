// Byte-range realigner over the words of one frame, with a header tap.
//
// The DMA planner cuts each frame into byte ranges, in increasing order: the payload pieces to
// emit, or nothing to emit for a frame that is dropped or has no payload. For each range:
//   - the frame's bytes before `rng_start` that have not been consumed yet are consumed
//     without output: free when they lie in the word that holds `rng_start`, one cycle per
//     whole word otherwise (a header in front of the payload costs no cycle when it ends in
//     the payload's first word);
//   - an emitted range (`rng_emit`) [rng_start, rng_end) comes out as beats positioned for
//     their destination: the first beat carries min(len, DB - rng_dst) bytes at lanes
//     [rng_dst, ...), each further beat DB bytes from lane 0, `out_strb` marks the range's
//     bytes and `out_last` its last beat. `rng_dst` is the destination address mod DB; its low
//     4 bits are ignored (destinations are 16-byte aligned: payload buffers are DMA-width
//     aligned and strides are multiples of 16 bytes);
//   - a range with `rng_frame_end` consumes the rest of the frame through `rng_flen` (the
//     frame's length): free when the frame ends in the word of the range's last byte, one cycle
//     per further word; after it the realigner stands at the next frame's first word.
//     A range without `rng_emit` emits nothing (its end is its start).
// Header tap: the first `rng_tap` words of a frame (given with the frame's first range) are
// copied to `tap_*` as they are consumed, unchanged (lane i = frame byte 16*w + i of word w):
// the split header's beats. A word is consumed only when the tap can take it.
// Throughput: one output beat per cycle, aligned or not; a range whose first beat needs two
// source words and starts with none held costs one extra cycle to load the first.
// Reset: synchronous, active high.
module rx_realign #(
  parameter int unsigned DATA_W = 64,
  parameter int unsigned TAP_W  = 8,
  localparam int unsigned LW    = $clog2(DATA_W / 8)
) (
  input  logic              clk,
  input  logic              rst,
  // frame words from the frame FIFO
  input  logic              in_valid,
  output logic              in_ready,
  input  logic [DATA_W-1:0] in_data,
  // range command
  input  logic              rng_valid,
  output logic              rng_ready,
  input  logic [15:0]       rng_start,
  input  logic [15:0]       rng_end,        // emitted: [rng_start, rng_end)
  input  logic [LW-1:0]     rng_dst,        // destination lane of the first byte
  input  logic              rng_emit,
  input  logic              rng_frame_end,  // consume the rest of the frame, rng_flen bytes in all
  input  logic [15:0]       rng_flen,
  input  logic [TAP_W-1:0]  rng_tap,        // frame's first range: words to copy to the tap
  // positioned output
  output logic              out_valid,
  input  logic              out_ready,
  output logic [DATA_W-1:0] out_data,
  output logic [DATA_W/8-1:0] out_strb,
  output logic              out_last,
  // header tap (frame words, unchanged)
  output logic              tap_valid,
  input  logic              tap_ready,
  output logic [DATA_W-1:0] tap_data
);
  localparam int unsigned DB = DATA_W / 8;

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "rx_realign: DATA_W must be a power of two >= 64");
  end

  logic              act_q, emit_q, fe_q, first_q, fstart_q;
  logic [15:0]       start_q, end_q, flen_q, pos_q;
  logic [LW-1:0]     dst_q;
  logic              cv_q;            // cur_q holds the word of pos_q
  logic [DATA_W-1:0] cur_q;
  logic [TAP_W-1:0]  tap_q;           // frame words still to copy to the tap

  logic [15-LW:0]    pw, sw, fw, lw;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0]       flen_m1, pos_d_m1;    // only their word bits are used
  /* verilator lint_on UNUSEDSIGNAL */
  logic              skip, emitting, tailing;
  logic [15:0]       pe, em_left, pos_d;
  logic [LW-1:0]     off;
  logic [LW:0]       lim, n;
  logic              need_next, ends_beat, pop_ok, fire, commit, last_step, fold;
  logic              tail_done, tail_last, tail_go;
  logic              finishing, frame_done;
  logic [DATA_W-1:0] cur_data, raw;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [2*DATA_W-1:0] pair;         // two words shifted down: the low word is the output
  /* verilator lint_on UNUSEDSIGNAL */

  assign pw   = pos_q[15:LW];
  assign sw   = start_q[15:LW];
  assign flen_m1 = flen_q - 16'd1;
  assign fw   = flen_m1[15:LW];                    // word of the frame's last byte
  assign skip = act_q && (pos_q < start_q) && (pw != sw);
  assign pe   = (pos_q < start_q) ? start_q : pos_q;
  assign em_left = (emit_q && end_q > pe) ? end_q - pe : 16'd0;   // the tail may run past the end

  // ---------------------------------------------------------------- emit step
  assign emitting  = act_q && !skip && (em_left != '0);
  assign off       = pe[LW-1:0];
  assign lim       = first_q ? (LW+1)'(DB) - {1'b0, dst_q} : (LW+1)'(DB);
  assign n         = (em_left >= 16'(lim)) ? lim : (LW+1)'(em_left);
  assign need_next = ({1'b0, off} + n) > (LW+1)'(DB);
  assign ends_beat = ({1'b0, off} + n) == (LW+1)'(DB);
  assign pos_d     = pe + 16'(n);
  assign last_step = (pos_d == end_q);
  assign pos_d_m1  = pos_d - 16'd1;
  assign lw        = pos_d_m1[15:LW];               // word of the range's last byte
  // The frame ends in the word of the last emitted byte: consume it with this step.
  assign fold      = fe_q && (pos_d >= flen_q || lw == fw);

  // A word may be taken from the FIFO when one is there and, while the frame's header words
  // are being copied, the tap can take it.
  assign pop_ok = in_valid && (tap_q == '0 || tap_ready);
  always_comb begin
    fire = 1'b0;
    if (emitting) fire = need_next ? (cv_q && pop_ok) : (cv_q || pop_ok);
  end
  assign commit = fire && out_ready;

  assign cur_data = cv_q ? cur_q : in_data;
  assign pair     = {in_data, cur_data} >> {off, 3'b000};
  assign raw      = pair[DATA_W-1:0];

  // The first beat of a range moves to its destination lane (a multiple of 16 bytes).
  if (DB > 16) begin : g_dst
    logic [LW-1:0] d16;
    assign d16 = {dst_q[LW-1:4], 4'd0};
    assign out_data = first_q ? (raw << {d16, 3'b000}) : raw;
    assign out_strb = ~({DB{1'b1}} << n) << (first_q ? d16 : '0);
  end else begin : g_nodst
    assign out_data = raw;
    assign out_strb = ~({DB{1'b1}} << n);
  end
  assign out_valid = fire;
  assign out_last  = last_step;

  // ---------------------------------------------------------------- tail (rest of the frame)
  assign tailing   = act_q && !skip && (em_left == '0) && fe_q;
  assign tail_done = pe >= flen_q;                 // every byte consumed (ends on a word edge)
  assign tail_last = (pe[15:LW] == fw);            // the word at pe is the frame's last
  assign tail_go   = tailing && (tail_done || cv_q || pop_ok);

  always_comb begin
    frame_done = 1'b0;
    if (commit && last_step && fold) frame_done = 1'b1;
    if (tail_go && (tail_done || tail_last)) frame_done = 1'b1;
  end
  // The range is over: its last beat went out (and, with the frame's end, the frame is
  // consumed), or there was nothing (left) to emit.
  assign finishing = frame_done || (commit && last_step && !fe_q) ||
                     (act_q && !skip && em_left == '0 && !fe_q);
  assign rng_ready = !act_q || finishing;

  // ---------------------------------------------------------------- FIFO side
  always_comb begin
    in_ready = 1'b0;
    if (skip) begin
      in_ready = !cv_q && pop_ok;                  // drop a whole word not held
    end else if (emitting) begin
      if (commit)                        in_ready = need_next || !cv_q;
      else if (!cv_q && need_next)       in_ready = pop_ok;   // load the first of two words
    end else if (tailing && !tail_done) begin
      in_ready = !cv_q && pop_ok;
    end
  end
  assign tap_valid = in_valid && in_ready && (tap_q != '0);
  assign tap_data  = in_data;

  // ---------------------------------------------------------------- state
  always_ff @(posedge clk) begin
    if (rst) begin
      act_q    <= 1'b0;
      emit_q   <= 1'b0;
      fe_q     <= 1'b0;
      first_q  <= 1'b0;
      fstart_q <= 1'b1;
      start_q  <= '0;
      end_q    <= '0;
      flen_q   <= '0;
      dst_q    <= '0;
      pos_q    <= '0;
      cv_q     <= 1'b0;
      tap_q    <= '0;
    end else begin
      if (in_valid && in_ready && tap_q != '0) tap_q <= tap_q - 1'b1;
      if (skip) begin
        if (cv_q || pop_ok) begin
          pos_q <= {pw + 1'b1, {LW{1'b0}}};
          cv_q  <= 1'b0;
        end
      end else if (emitting) begin
        if (commit) begin
          pos_q   <= pos_d;
          first_q <= 1'b0;
          if (need_next)      cv_q <= 1'b1;        // the next word becomes the current one
          else if (ends_beat) cv_q <= 1'b0;        // word used up
          else                cv_q <= 1'b1;        // word partly used: keep it
        end else if (!cv_q && need_next && pop_ok) begin
          cv_q  <= 1'b1;
          pos_q <= pe;
        end
      end else if (tail_go && !tail_done && !tail_last) begin
        pos_q <= {pe[15:LW] + 1'b1, {LW{1'b0}}};   // drop a word of the tail
        cv_q  <= 1'b0;
      end
      if (frame_done) begin
        pos_q    <= '0;
        cv_q     <= 1'b0;
        fstart_q <= 1'b1;
      end
      if (finishing) act_q <= 1'b0;
      if (rng_valid && rng_ready) begin
        act_q    <= 1'b1;
        emit_q   <= rng_emit;
        fe_q     <= rng_frame_end;
        first_q  <= 1'b1;
        start_q  <= rng_start;
        end_q    <= rng_emit ? rng_end : rng_start;
        flen_q   <= rng_flen;
        dst_q    <= rng_dst;
        fstart_q <= 1'b0;
        if (fstart_q || frame_done) tap_q <= rng_tap;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (in_valid && in_ready) cur_q <= in_data;
  end
endmodule
