// Microsoft RSS Toeplitz hash over a fixed IN_BYTES-byte input (docs/rss.md section 2).
//
// Bit strings are numbered from the most significant bit: input bit i is in_data[IN_W-1-i]
// (input byte 0 in in_data[IN_W-1 -: 8]) and key bit k is key[KEY_W-1-k] (key byte 0 in
// key[KEY_W-1 -: 8]). The hash is the XOR, over every input bit i that is 1, of key bits
// i..i+31, key bit i being the hash's bit 31. Shorter inputs (the 8-, 12- and 32-byte types)
// are hashed by zero-filling the tail: zero bits add nothing.
//
// Latency 2: out_valid/out_hash follow in_valid/in_data two cycles later, one input per
// cycle, no backpressure. Pipeline:
//   stage 1: each input bit ANDed with its key window, XORed in groups of GROUP_BITS terms;
//            the NUM_GROUPS partial sums are registered;
//   stage 2: the partial sums are XORed and the hash registered.
// The key is sampled in stage 1 together with the data. Data registers load only with their
// stage's valid (clock enables): out_hash holds its last value while out_valid is low.
// Reset: synchronous, active high; clears the valid pipeline (data registers are not reset).
module rss_toeplitz #(
  parameter int unsigned IN_BYTES   = 36,
  parameter int unsigned KEY_BYTES  = 40,
  parameter int unsigned GROUP_BITS = 16
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  in_valid,
  input  logic [IN_BYTES*8-1:0] in_data,
  input  logic [KEY_BYTES*8-1:0] key,
  output logic                  out_valid,
  output logic [31:0]           out_hash
);
  localparam int unsigned IN_W       = IN_BYTES * 8;
  localparam int unsigned KEY_W      = KEY_BYTES * 8;
  localparam int unsigned NUM_GROUPS = (IN_W + GROUP_BITS - 1) / GROUP_BITS;

  initial begin
    if (IN_BYTES < 1) $fatal(1, "rss_toeplitz: IN_BYTES must be at least 1");
    if (KEY_W < IN_W + 31) $fatal(1, "rss_toeplitz: the key must be 4 bytes longer than the input");
    if (GROUP_BITS < 1 || GROUP_BITS > IN_W) $fatal(1, "rss_toeplitz: GROUP_BITS must be 1..IN_BYTES*8");
  end

  // Key window of input bit i: key bits i..i+31, bit i most significant.
  function automatic logic [31:0] key_window(input logic [KEY_W-1:0] k, input int unsigned i);
    return k[KEY_W-1-i -: 32];
  endfunction

  // ---------------------------------------------------------------- stage 1: partial sums
  logic [NUM_GROUPS-1:0][31:0] part_q;
  logic                        s1_valid_q;

  // Stage 1's sums as a function of the input: evaluated only for a valid input (the
  // registers below load with in_valid), so an idle cycle costs a simulator nothing.
  function automatic logic [NUM_GROUPS-1:0][31:0] partial_sums(input logic [IN_W-1:0] d,
                                                               input logic [KEY_W-1:0] k);
    logic [NUM_GROUPS-1:0][31:0] p;
    for (int unsigned g = 0; g < NUM_GROUPS; g++) begin
      p[g] = '0;
      for (int unsigned b = 0; b < GROUP_BITS; b++) begin
        if (g * GROUP_BITS + b < IN_W) begin
          p[g] ^= {32{d[IN_W-1-(g*GROUP_BITS+b)]}} & key_window(k, g * GROUP_BITS + b);
        end
      end
    end
    return p;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= in_valid;
  end

  always_ff @(posedge clk) begin
    if (in_valid) part_q <= partial_sums(in_data, key);
  end

  // ---------------------------------------------------------------- stage 2: final XOR
  logic [31:0] hash_q;
  logic        s2_valid_q;

  function automatic logic [31:0] xor_parts(input logic [NUM_GROUPS-1:0][31:0] p);
    logic [31:0] h;
    h = '0;
    for (int unsigned g = 0; g < NUM_GROUPS; g++) h ^= p[g];
    return h;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= s1_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s1_valid_q) hash_q <= xor_parts(part_q);
  end

  assign out_valid = s2_valid_q;
  assign out_hash  = hash_q;

endmodule
