// Flow-steering rule table: the storage of the STEER[] registers (rtl/csr/nic_csr.rdl,
// regfile steer_rule_t in STEER_BLOCK; docs/registers.md), behind the CSR block's
// external-block port.
//
// The register block (peakrdl-regblock) hands every access inside STEER_BLOCK (STEER[r] at
// r * 0x80) to this module as one request with the byte address in the block (rule
// csr_addr[7 +: RULE_W], register word csr_addr[6:2] within the rule). The rules are
// held here in the field form flow_steer compares against, not as one flop-and-mux per
// register field in the generated block: an access costs one indexed update, and a cycle
// without an access costs nothing (in silicon and in the simulator).
//
// Register layout of one rule (byte offsets; must match steer_rule_t in nic_csr.rdl, which
// tests/rtl/test_csr.py checks through the generated driver/regs.py):
//   0x00 CTRL      enable[0], ipver[11:8], ipver_mask[15:12], proto[23:16], proto_mask[31:24]
//   0x04 QUEUE     queue[7:0]
//   0x08 PORTS     sport[15:0], dport[31:16]
//   0x0C PORT_MASK sport_mask[15:0], dport_mask[31:16]
//   0x10-0x1C SRC_ADDR[0..3], 0x20-0x2C SRC_MASK[0..3], 0x30-0x3C DST_ADDR[0..3],
//   0x40-0x4C DST_MASK[0..3]: word w is bits [32w+31:32w] of the 128-bit value.
// Bits outside the fields, and offsets 0x50-0x7F of each rule, read as zero and ignore writes;
// writes honour the byte/bit enables (csr_wr_biten).
//
// Timing: every access is answered (acked) in the cycle of its request, csr_rd_data with the
// read ack, as the generated block answers its own registers; a write takes effect at that
// clock edge.
// Reset: synchronous, active high; every rule field to zero (the RDL reset).
module steer_table
  import nic_pkg::*;
#(
  parameter int unsigned NUM_RULES = 32,
  localparam int unsigned RULE_W   = NUM_RULES > 1 ? $clog2(NUM_RULES) : 1
) (
  input  logic                         clk,
  input  logic                         rst,
  // CSR external block (all rules): one request, its byte address in the block
  input  logic                         csr_req,
  input  logic [RULE_W+6:0]            csr_addr,
  input  logic                         csr_req_is_wr,
  input  logic [31:0]                  csr_wr_data,
  input  logic [31:0]                  csr_wr_biten,
  output logic                         csr_rd_ack,
  output logic                         csr_wr_ack,
  output logic [31:0]                  csr_rd_data,
  // the rules, rule r in element [r]
  output logic [NUM_RULES-1:0]         rule_en,
  output logic [NUM_RULES-1:0][3:0]    rule_ipver,
  output logic [NUM_RULES-1:0][3:0]    rule_ipver_mask,
  output logic [NUM_RULES-1:0][7:0]    rule_proto,
  output logic [NUM_RULES-1:0][7:0]    rule_proto_mask,
  output logic [NUM_RULES-1:0][127:0]  rule_src_addr,
  output logic [NUM_RULES-1:0][127:0]  rule_src_mask,
  output logic [NUM_RULES-1:0][127:0]  rule_dst_addr,
  output logic [NUM_RULES-1:0][127:0]  rule_dst_mask,
  output logic [NUM_RULES-1:0][15:0]   rule_sport,
  output logic [NUM_RULES-1:0][15:0]   rule_sport_mask,
  output logic [NUM_RULES-1:0][15:0]   rule_dport,
  output logic [NUM_RULES-1:0][15:0]   rule_dport_mask,
  output logic [NUM_RULES-1:0][7:0]    rule_queue
);
  initial begin
    if (NUM_RULES < 1 || NUM_RULES > 256 || (NUM_RULES & (NUM_RULES - 1)) != 0) begin
      $fatal(1, "steer_table: NUM_RULES must be a power of two, 1..256");
    end
  end

  // Register word w = csr_word of a rule: group w[4:2] (0: the four control words,
  // selected by w[1:0]; 1..4: SRC_ADDR, SRC_MASK, DST_ADDR, DST_MASK word w[1:0]).
  localparam logic [2:0] G_CTRL = 3'd0, G_SRC_ADDR = 3'd1, G_SRC_MASK = 3'd2, G_DST_ADDR = 3'd3,
                         G_DST_MASK = 3'd4;

  // The addressed rule and register word.
  logic [RULE_W-1:0] csr_rule;
  logic [4:0]        csr_word;
  assign csr_rule = NUM_RULES > 1 ? RULE_W'(csr_addr[RULE_W+6:7]) : '0;
  assign csr_word = csr_addr[6:2];

  // Register word `w` of rule `r` as software reads it.
  function automatic logic [31:0] rule_word(input logic [RULE_W-1:0] r, input logic [4:0] w);
    logic [31:0] v;
    v = '0;
    unique case (w[4:2])
      G_CTRL: begin
        unique case (w[1:0])
          2'd0: v = {rule_proto_mask[r], rule_proto[r], rule_ipver_mask[r], rule_ipver[r],
                     7'd0, rule_en[r]};
          2'd1: v = {24'd0, rule_queue[r]};
          2'd2: v = {rule_dport[r], rule_sport[r]};
          2'd3: v = {rule_dport_mask[r], rule_sport_mask[r]};
        endcase
      end
      G_SRC_ADDR: v = rule_src_addr[r][32 * w[1:0] +: 32];
      G_SRC_MASK: v = rule_src_mask[r][32 * w[1:0] +: 32];
      G_DST_ADDR: v = rule_dst_addr[r][32 * w[1:0] +: 32];
      G_DST_MASK: v = rule_dst_mask[r][32 * w[1:0] +: 32];
      default:    v = '0;     // not a register of the rule
    endcase
    return v;
  endfunction

  // The addressed word as software reads it, for reads and for the write merge, in its own
  // process; the write only writes (nic_pkg, "external register tables").
  logic [31:0] cur_word;
  always_comb begin
    cur_word = '0;
    if (csr_req) cur_word = rule_word(csr_rule, csr_word);
  end

  // Writes: nothing but the test of the request in a cycle without one.
  always_ff @(posedge clk) begin
    if (rst) begin
      rule_en         <= '0;
      rule_ipver      <= '0;
      rule_ipver_mask <= '0;
      rule_proto      <= '0;
      rule_proto_mask <= '0;
      rule_queue      <= '0;
      rule_sport      <= '0;
      rule_dport      <= '0;
      rule_sport_mask <= '0;
      rule_dport_mask <= '0;
      rule_src_addr   <= '0;
      rule_src_mask   <= '0;
      rule_dst_addr   <= '0;
      rule_dst_mask   <= '0;
    end else if (csr_req && csr_req_is_wr) begin
      // the addressed word after the write, bit enables applied
      automatic logic [31:0] v = csr_merge(cur_word, csr_wr_data, csr_wr_biten);
      for (int r = 0; r < NUM_RULES; r++) begin
        if (csr_rule == RULE_W'(r)) begin
          for (int k = 0; k < 4; k++) begin
            if (csr_word[1:0] == 2'(k)) begin
              unique case (csr_word[4:2])
                G_CTRL: begin
                  if (k == 0) begin
                    rule_en[r]         <= v[0];
                    rule_ipver[r]      <= v[11:8];
                    rule_ipver_mask[r] <= v[15:12];
                    rule_proto[r]      <= v[23:16];
                    rule_proto_mask[r] <= v[31:24];
                  end
                  if (k == 1) rule_queue[r] <= v[7:0];
                  if (k == 2) {rule_dport[r], rule_sport[r]} <= v;
                  if (k == 3) {rule_dport_mask[r], rule_sport_mask[r]} <= v;
                end
                G_SRC_ADDR: rule_src_addr[r][32 * k +: 32] <= v;
                G_SRC_MASK: rule_src_mask[r][32 * k +: 32] <= v;
                G_DST_ADDR: rule_dst_addr[r][32 * k +: 32] <= v;
                G_DST_MASK: rule_dst_mask[r][32 * k +: 32] <= v;
                default: ;
              endcase
            end
          end
        end
      end
    end
  end

  // Answers, in the cycle of the request (as the generated block answers its own registers).
  assign csr_rd_ack  = csr_req && !csr_req_is_wr;
  assign csr_wr_ack  = csr_req && csr_req_is_wr;
  assign csr_rd_data = csr_req_is_wr ? '0 : cur_word;

  logic unused_addr;
  assign unused_addr = ^csr_addr[1:0];   // 32-bit registers: byte bits unused

endmodule
