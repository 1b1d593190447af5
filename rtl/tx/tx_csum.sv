// Pipelined ones'-complement sum over the words of a frame (RFC 1071), for TCP/UDP checksum
// offload (docs/tx.md).
//
// Each input word carries a byte mask: masked-out bytes count as zero, so the caller selects
// [csum_start, frame length) and an odd last byte is padded with zero. Byte pairs (2j, 2j+1)
// are big-endian 16-bit words. The reduction is cut into registered stages so the adder depth
// per stage stays small at 1024 bits (64 words):
//   A: mask                       (register)
//   B: sums of groups of 8 words  (19 bits each; register)
//   C: sum of the groups          (up to 22 bits; register)
//   D: frame accumulator (32 bits); at the frame's last word the folded 16-bit sum is output
// `out_valid` pulses 4 cycles after the frame's last word with the folded sum (not
// complemented) and the side information given with that word.
// Reset: synchronous, active high.
module tx_csum #(
  parameter int unsigned DATA_W = 128,
  parameter int unsigned SIDE_W = 1,
  localparam int unsigned DB    = DATA_W / 8
) (
  input  logic              clk,
  input  logic              rst,
  input  logic              in_valid,
  input  logic [DATA_W-1:0] in_data,
  input  logic [DB-1:0]     in_mask,
  input  logic              in_last,
  input  logic [SIDE_W-1:0] in_side,
  output logic              out_valid,
  output logic [15:0]       out_sum,
  output logic [SIDE_W-1:0] out_side
);
  localparam int unsigned LANES = DB / 2;
  localparam int unsigned GS    = (LANES < 8) ? LANES : 8;
  localparam int unsigned NG    = LANES / GS;

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "tx_csum: DATA_W must be a power of two >= 64");
  end

  // ---------------------------------------------------------------- A: mask
  logic              a_valid_q, a_last_q;
  logic [DATA_W-1:0] a_data_q;
  logic [SIDE_W-1:0] a_side_q;
  logic [DATA_W-1:0] bytemask;

  always_comb begin
    for (int j = 0; j < DB; j++) bytemask[8*j +: 8] = {8{in_mask[j]}};
  end

  always_ff @(posedge clk) begin
    if (rst) a_valid_q <= 1'b0;
    else     a_valid_q <= in_valid;
    a_data_q <= in_data & bytemask;
    a_last_q <= in_valid && in_last;
    a_side_q <= in_side;
  end

  // ---------------------------------------------------------------- B: group sums
  logic              b_valid_q, b_last_q;
  logic [SIDE_W-1:0] b_side_q;
  logic [18:0]       b_sum_q [NG];
  logic [18:0]       gsum [NG];

  always_comb begin
    for (int g = 0; g < NG; g++) begin
      gsum[g] = '0;
      for (int k = 0; k < GS; k++) begin
        gsum[g] = gsum[g] + {3'd0, a_data_q[16*(g*GS+k) +: 8], a_data_q[16*(g*GS+k) + 8 +: 8]};
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) b_valid_q <= 1'b0;
    else     b_valid_q <= a_valid_q;
    b_last_q <= a_last_q;
    b_side_q <= a_side_q;
    for (int g = 0; g < NG; g++) b_sum_q[g] <= gsum[g];
  end

  // ---------------------------------------------------------------- C: word sum
  logic              c_valid_q, c_last_q;
  logic [SIDE_W-1:0] c_side_q;
  logic [21:0]       c_sum_q, wsum;

  always_comb begin
    wsum = '0;
    for (int g = 0; g < NG; g++) wsum = wsum + {3'd0, b_sum_q[g]};
  end

  always_ff @(posedge clk) begin
    if (rst) c_valid_q <= 1'b0;
    else     c_valid_q <= b_valid_q;
    c_last_q <= b_last_q;
    c_side_q <= b_side_q;
    c_sum_q  <= wsum;
  end

  // ---------------------------------------------------------------- D: frame accumulator
  logic [31:0] acc_q, acc_d;
  logic [16:0] fold1;
  logic [15:0] fold2;

  assign acc_d = acc_q + {10'd0, c_sum_q};
  assign fold1 = {1'b0, acc_d[15:0]} + {1'b0, acc_d[31:16]};
  assign fold2 = fold1[15:0] + {15'd0, fold1[16]};

  always_ff @(posedge clk) begin
    if (rst) begin
      acc_q     <= '0;
      out_valid <= 1'b0;
    end else begin
      out_valid <= c_valid_q && c_last_q;
      if (c_valid_q) acc_q <= c_last_q ? '0 : acc_d;
    end
    out_sum  <= fold2;
    out_side <= c_side_q;
  end
endmodule
