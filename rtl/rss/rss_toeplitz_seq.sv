// The RSS Toeplitz hash of docs/rss.md section 2 for MAC widths that give several cycles per
// frame: the address part is hashed a slice per cycle while the parser still works on the
// frame's L4 header, the ports part when the tuple is complete (rx_classify uses this below
// 512 bits; rss_toeplitz hashes the whole input in one go).
//
// The hash is linear in its input: over the input string src | dst | sport | dport (IPv4:
// 4 + 4 + 2 + 2 bytes, IPv6: 16 + 16 + 2 + 2), hash = A ^ P, A the XOR of the key windows of
// the address bits that are 1 (input bytes 0..7 or 0..31) and P that of the port bits (input
// bytes 8..11 or 32..35). A frame's 2-tuple hash is A, its 4-tuple hash A ^ P, no hash 0.
//
//   addr_valid, v6/src/dst ──► STEPS cycles: A += 32/STEPS bytes a cycle (key window of the
//                               slice: a STEPS:1 choice, no shifter) ──┐
//   in_valid (ADDR_LEAD = 3 cycles after addr_valid), type, ports ──► stage 1: P, the type ──►
//                                                                stage 2: A ^ P by type ──► out
//
// Latency 2 from in_valid, as rss_toeplitz's; one frame per STEPS cycles at most: v6/src/dst
// must hold their values for the STEPS cycles from addr_valid (the parser's registers hold
// them until its next frame, at least 60 bytes later), and in_valid of that frame comes
// ADDR_LEAD cycles after its addr_valid, with STEPS = ADDR_LEAD + 1: the last slice is
// hashed in the cycle of in_valid, so the next frame's addr_valid (STEPS cycles on at the
// earliest) never overwrites a sum still to be used. The key is sampled over the
// cycles of the address slices and with in_valid (it is not double-buffered: docs/rss.md
// allows a frame hashed while the key is rewritten to be hashed with a partly written one).
// Data registers load only with their stage's valid: out_hash holds while out_valid is low.
// Reset: synchronous, active high; clears the valid pipeline and the slice counter.
module rss_toeplitz_seq #(
  parameter int unsigned STEPS     = 4,      // cycles over which the 32 address bytes are hashed
  parameter int unsigned ADDR_LEAD = 3       // addr_valid to in_valid of the same frame, cycles
) (
  input  logic          clk,
  input  logic          rst,
  // the frame's addresses (numbers in network byte order; IPv4 in bits [31:0])
  input  logic          addr_valid,
  input  logic          v6,
  input  logic [127:0]  src,
  input  logic [127:0]  dst,
  // the frame, ADDR_LEAD cycles later
  input  logic          in_valid,
  input  logic          in_v6,             // the tuple's IP version (where its ports sit)
  input  logic          in_hashed,         // a hash type other than none
  input  logic          in_four,           // a 4-tuple type (TCP/UDP over IPv4/IPv6)
  input  logic [15:0]   sport,
  input  logic [15:0]   dport,
  input  logic [319:0]  key,               // key byte 0 in [319:312]
  output logic          out_valid,
  output logic [31:0]   out_hash
);
  localparam int unsigned SB = 256 / STEPS;          // address bits per slice

  initial begin
    if (STEPS != ADDR_LEAD + 1 || (256 % STEPS) != 0 || (SB % 8) != 0) begin
      $fatal(1, "rss_toeplitz_seq: STEPS must be ADDR_LEAD + 1 and divide the 32 address bytes");
    end
  end

  // XOR of the key windows of the 1 bits of d, d's bit 0 (its last input bit) being input
  // bit pos + W - 1: window of input bit i = key bits i .. i+31 from the top.
  function automatic logic [31:0] window_xor(input logic [SB-1:0] d, input logic [SB+30:0] kw);
    logic [31:0] h;
    h = '0;
    for (int unsigned b = 0; b < SB; b++) begin
      // input bit (SB-1-b) of the slice: key bits from the slice's top at offset SB-1-b
      h ^= {32{d[b]}} & kw[b +: 32];
    end
    return h;
  endfunction

  // ---------------------------------------------------------------- the address part
  // Slice k covers input bits [k*SB, (k+1)*SB) of the 256-bit address string (IPv4: the 64
  // bits of src | dst, zero beyond); its key window is key bits [k*SB, k*SB + SB + 31).
  logic [$clog2(STEPS+1)-1:0] step_q;        // slices still to hash
  logic [31:0]                acc_q;

  logic [255:0] astr;
  assign astr = v6 ? {src, dst} : {src[31:0], dst[31:0], 192'd0};

  function automatic logic [SB-1:0] slice(input logic [255:0] s, input int unsigned k);
    return s[255 - k * SB -: SB];
  endfunction

  function automatic logic [SB+30:0] key_slice(input logic [319:0] k, input int unsigned i);
    return k[319 - i * SB -: SB + 31];
  endfunction

  // The slice hashed this cycle: STEPS - step_q (the first in the cycle of addr_valid).
  logic [SB-1:0]  cur_d;
  logic [SB+30:0] cur_k;
  always_comb begin
    automatic int unsigned k = addr_valid ? 0 : STEPS - 32'(step_q);
    cur_d = '0;
    cur_k = '0;
    for (int unsigned i = 0; i < STEPS; i++) begin
      if (k == i) begin
        cur_d = slice(astr, i);
        cur_k = key_slice(key, i);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      step_q <= '0;
    end else if (addr_valid) begin
      step_q <= ($clog2(STEPS+1))'(STEPS - 1);
    end else if (step_q != '0) begin
      step_q <= step_q - 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (addr_valid)         acc_q <= window_xor(cur_d, cur_k);
    else if (step_q != '0)  acc_q <= acc_q ^ window_xor(cur_d, cur_k);
  end

  // ---------------------------------------------------------------- stage 1: the ports part
  // Ports are input bits [64, 96) (IPv4) or [256, 288) (IPv6): key windows from key bit 64 or
  // 256 on.
  logic        s1_valid_q, s1_hashed_q, s1_four_q;
  logic [31:0] port_q;

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= in_valid;
  end

  always_ff @(posedge clk) begin
    if (in_valid) begin
      automatic logic [62:0] kw = in_v6 ? key[319 - 256 -: 63] : key[319 - 64 -: 63];
      automatic logic [31:0] pd = {sport, dport};
      automatic logic [31:0] p  = '0;
      for (int unsigned b = 0; b < 32; b++) p ^= {32{pd[b]}} & kw[b +: 32];
      port_q      <= p;
      s1_hashed_q <= in_hashed;
      s1_four_q   <= in_four;
    end
  end

  // ---------------------------------------------------------------- stage 2: A ^ P
  logic        s2_valid_q;
  logic [31:0] hash_q;

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= s1_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s1_valid_q) hash_q <= s1_hashed_q ? (acc_q ^ (s1_four_q ? port_q : 32'd0)) : 32'd0;
  end

  assign out_valid = s2_valid_q;
  assign out_hash  = hash_q;

endmodule
