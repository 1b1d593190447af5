// Write combining of payload beats (docs/rx-rules.md, "Multi-packet payload buffers"): the
// last, partly filled beat of a payload piece may be held back (`H`) and merged into the first
// beat of the next piece, which continues filling the same DMA beat, so consecutive frames'
// payloads share one W beat.
//
// The planner (rx_split_dma) decides everything and says it in notes, in the order of its
// payload write commands:
//   - flush: H goes out alone (its own write command);
//   - range: the realigner's beats of one payload piece (positioned, with their strobes); with
//     `merge` the first one is merged with H (byte by byte: the piece's bytes, H's elsewhere),
//     with `hold` the last one becomes H instead of going out.
// Each note's output beats are exactly the beats of its write command, so the data mux can
// count them. Output beats carry their write strobes (`out_strb`): bytes of a stride that no
// payload covers are never written.
// Reset: synchronous, active high; H is empty after reset.
module rx_pay_merge #(
  parameter int unsigned DATA_W = 64
) (
  input  logic                clk,
  input  logic                rst,
  // notes from the planner
  input  logic                note_valid,
  output logic                note_ready,
  input  logic                note_flush,
  input  logic                note_merge,
  input  logic                note_hold,
  // positioned payload beats from the realigner
  input  logic                in_valid,
  output logic                in_ready,
  input  logic [DATA_W-1:0]   in_data,
  input  logic [DATA_W/8-1:0] in_strb,
  input  logic                in_last,
  // payload write beats
  output logic                out_valid,
  input  logic                out_ready,
  output logic [DATA_W-1:0]   out_data,
  output logic [DATA_W/8-1:0] out_strb
);
  localparam int unsigned DB = DATA_W / 8;

  logic [DATA_W-1:0] h_data_q, mdata;
  logic [DB-1:0]     h_strb_q;
  logic              first_q;          // the next input beat is its range's first
  logic              use_h, absorb;

  // The piece's bytes where it has them, H's bytes elsewhere.
  always_comb begin
    for (int b = 0; b < DB; b++) mdata[8*b +: 8] = in_strb[b] ? in_data[8*b +: 8] : h_data_q[8*b +: 8];
  end

  assign use_h  = first_q && note_merge;
  assign absorb = in_last && note_hold;

  always_comb begin
    out_valid  = 1'b0;
    out_data   = in_data;
    out_strb   = in_strb;
    in_ready   = 1'b0;
    note_ready = 1'b0;
    if (note_valid) begin
      if (note_flush) begin
        out_valid  = 1'b1;
        out_data   = h_data_q;
        out_strb   = h_strb_q;
        note_ready = out_ready;
      end else if (in_valid) begin
        if (use_h) begin
          out_data = mdata;
          out_strb = in_strb | h_strb_q;
        end
        if (absorb) begin
          in_ready   = 1'b1;                 // the beat stays: it is the new H
          note_ready = 1'b1;
        end else begin
          out_valid  = 1'b1;
          in_ready   = out_ready;
          note_ready = out_ready && in_last;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      h_strb_q <= '0;
      first_q  <= 1'b1;
    end else begin
      if (note_valid && note_flush && out_ready) h_strb_q <= '0;
      if (in_valid && in_ready) begin
        first_q <= in_last;
        if (absorb) begin
          h_strb_q <= out_strb;
        end else if (use_h) begin
          h_strb_q <= '0;                    // H went out with this beat
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (in_valid && in_ready && absorb) h_data_q <= out_data;
  end
endmodule
