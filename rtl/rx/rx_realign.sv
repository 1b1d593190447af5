// Byte-range realigner over the beats of one frame.
//
// The DMA engine cuts a frame into consecutive byte ranges ([0, hdr_len), payload segments,
// trailing padding) and asks for each one either to be emitted as beats whose lane 0 holds the
// range's first byte (ready to be written at an aligned buffer address), or to be discarded.
// Ranges of a frame are contiguous and start at byte 0; the range flagged `rng_frame_end` must
// end at the frame's length, after which the realigner has consumed exactly the frame's beats
// and is ready for the next frame. Empty ranges are allowed and complete at once.
// Throughput: one output word per cycle, aligned or not.
// Reset: synchronous, active high.
module rx_realign #(
  parameter int unsigned DATA_W = 64
) (
  input  logic              clk,
  input  logic              rst,
  // frame beats from the frame FIFO
  input  logic              in_valid,
  output logic              in_ready,
  input  logic [DATA_W-1:0] in_data,
  // range command
  input  logic              rng_valid,
  output logic              rng_ready,
  input  logic [15:0]       rng_end,        // range is [current position, rng_end)
  input  logic              rng_emit,       // 1 emit the bytes, 0 discard them
  input  logic              rng_frame_end,  // rng_end is the frame's length
  output logic              rng_done,       // pulse: the range's last byte went out (or was dropped)
  // realigned output
  output logic              out_valid,
  input  logic              out_ready,
  output logic [DATA_W-1:0] out_data
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned LW = $clog2(DB);

  logic              active_q, emit_q, frame_end_q;
  logic [15:0]       end_q, pos_q;
  logic              cur_valid_q;
  logic [DATA_W-1:0] cur_q;

  logic [LW-1:0]     off;          // pos mod DB
  logic [15:0]       left;         // end - pos
  logic [LW:0]       n;            // bytes this step
  logic              need_next, fire, ends_beat, finishing;
  logic [15:0]       pos_d;
  logic [DATA_W-1:0] cur_data;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [2*DATA_W-1:0] pair;     // two beats shifted down: the low beat is the output
  /* verilator lint_on UNUSEDSIGNAL */

  assign off  = pos_q[LW-1:0];
  assign left = end_q - pos_q;

  always_comb begin
    if (emit_q) begin
      n = (left >= 16'(DB)) ? (LW+1)'(DB) : (LW+1)'(left);
    end else begin
      n = (left >= 16'(DB) - {{(16-LW){1'b0}}, off}) ? (LW+1)'(DB) - {1'b0, off} : (LW+1)'(left);
    end
  end

  assign need_next = emit_q && ({1'b0, off} + n > (LW+1)'(DB));
  assign ends_beat = ({1'b0, off} + n == (LW+1)'(DB));
  assign cur_data  = cur_valid_q ? cur_q : in_data;
  assign pair      = {in_data, cur_data} >> {off, 3'b000};
  assign out_data  = pair[DATA_W-1:0];
  assign pos_d     = pos_q + {{(15-LW){1'b0}}, n};

  // One step of the range: emit (or drop) n bytes starting at pos.
  always_comb begin
    fire = 1'b0;
    if (active_q && left != '0) begin
      if (need_next) fire = cur_valid_q && in_valid;
      else           fire = (cur_valid_q || in_valid);
    end
  end

  assign out_valid = emit_q && fire;
  assign finishing = active_q && (left == '0 || (fire && (!emit_q || out_ready) && pos_d == end_q));
  assign rng_done  = finishing;

  // Take a beat from the FIFO when the step uses the next beat, when the step consumes a beat
  // that was never held, or to hold the current beat for a step that needs the next one.
  always_comb begin
    in_ready = 1'b0;
    if (active_q && left != '0) begin
      if (fire && (!emit_q || out_ready)) begin
        in_ready = need_next || !cur_valid_q;
      end else if (!cur_valid_q && need_next) begin
        in_ready = 1'b1;   // park the current beat; the step fires next cycle
      end
    end
  end

  // A new range is taken in the cycle the current one finishes, so back-to-back ranges
  // (header, payload, padding) cost no idle cycle.
  assign rng_ready = !active_q || finishing;

  always_ff @(posedge clk) begin
    if (rst) begin
      active_q    <= 1'b0;
      pos_q       <= '0;
      cur_valid_q <= 1'b0;
      emit_q      <= 1'b0;
      frame_end_q <= 1'b0;
      end_q       <= '0;
    end else begin
      // Step within the range.
      if (active_q && left != '0) begin
        if (fire && (!emit_q || out_ready)) begin
          pos_q <= pos_d;
          if (need_next) begin
            cur_valid_q <= 1'b1;            // the next beat becomes the current one
          end else if (ends_beat) begin
            cur_valid_q <= 1'b0;            // beat used up
          end else begin
            cur_valid_q <= 1'b1;            // beat partly used: keep it
          end
        end else if (!cur_valid_q && need_next && in_valid) begin
          cur_valid_q <= 1'b1;
        end
      end
      // End of range: the frame's last range forgets the frame (its final beat included).
      if (finishing) begin
        active_q <= 1'b0;
        if (frame_end_q) begin
          pos_q       <= '0;
          cur_valid_q <= 1'b0;
        end
      end
      if (rng_valid && rng_ready) begin
        active_q    <= 1'b1;
        end_q       <= rng_end;
        emit_q      <= rng_emit;
        frame_end_q <= rng_frame_end;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (in_valid && in_ready) cur_q <= in_data;
  end
endmodule
