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
// complemented) and the side information given with that word; `out_sum` and `out_side`
// hold their value until the next frame's.
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

  // Each stage's registers load only with that stage's valid, and its logic is a function
  // called inside that branch, so an idle cycle computes nothing (a simulator evaluates every
  // always_comb on every clock; in silicon these are ordinary enable flops). Data, last and
  // side registers hold their previous value while their valid is low; every consumer looks
  // at them only with the valid.

  // ---------------------------------------------------------------- A: mask
  logic              a_valid_q, a_last_q;
  logic [DATA_W-1:0] a_data_q;
  logic [SIDE_W-1:0] a_side_q;

  function automatic logic [DATA_W-1:0] masked(input logic [DATA_W-1:0] data, input logic [DB-1:0] mask);
    for (int j = 0; j < DB; j++) masked[8*j +: 8] = mask[j] ? data[8*j +: 8] : 8'd0;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) a_valid_q <= 1'b0;
    else     a_valid_q <= in_valid;
    if (in_valid) begin
      a_data_q <= masked(in_data, in_mask);
      a_last_q <= in_last;
      a_side_q <= in_side;
    end
  end

  // ---------------------------------------------------------------- B: group sums
  logic              b_valid_q, b_last_q;
  logic [SIDE_W-1:0] b_side_q;
  logic [18:0]       b_sum_q [NG];

  function automatic logic [18:0] group_sum(input logic [DATA_W-1:0] data, input int unsigned g);
    group_sum = '0;
    for (int k = 0; k < GS; k++) begin
      group_sum = group_sum + {3'd0, data[16*(g*GS+k) +: 8], data[16*(g*GS+k) + 8 +: 8]};
    end
  endfunction

  always_ff @(posedge clk) begin
    if (rst) b_valid_q <= 1'b0;
    else     b_valid_q <= a_valid_q;
    if (a_valid_q) begin
      b_last_q <= a_last_q;
      b_side_q <= a_side_q;
      for (int g = 0; g < NG; g++) b_sum_q[g] <= group_sum(a_data_q, g);
    end
  end

  // ---------------------------------------------------------------- C: word sum
  logic              c_valid_q, c_last_q;
  logic [SIDE_W-1:0] c_side_q;
  logic [21:0]       c_sum_q;

  function automatic logic [21:0] word_sum(input logic [18:0] sums [NG]);
    word_sum = '0;
    for (int g = 0; g < NG; g++) word_sum = word_sum + {3'd0, sums[g]};
  endfunction

  always_ff @(posedge clk) begin
    if (rst) c_valid_q <= 1'b0;
    else     c_valid_q <= b_valid_q;
    if (b_valid_q) begin
      c_last_q <= b_last_q;
      c_side_q <= b_side_q;
      c_sum_q  <= word_sum(b_sum_q);
    end
  end

  // ---------------------------------------------------------------- D: frame accumulator
  logic [31:0] acc_q;

  // The 32-bit accumulator folded to 16 bits with end-around carry (RFC 1071).
  function automatic logic [15:0] fold(input logic [31:0] acc);
    automatic logic [16:0] f1 = {1'b0, acc[15:0]} + {1'b0, acc[31:16]};
    return f1[15:0] + {15'd0, f1[16]};
  endfunction

  always_ff @(posedge clk) begin
    if (rst) begin
      acc_q     <= '0;
      out_valid <= 1'b0;
    end else begin
      out_valid <= c_valid_q && c_last_q;
      if (c_valid_q) acc_q <= c_last_q ? '0 : acc_q + {10'd0, c_sum_q};
    end
    if (c_valid_q && c_last_q) begin
      out_sum  <= fold(acc_q + {10'd0, c_sum_q});
      out_side <= c_side_q;
    end
  end
endmodule
