// Exact-match flow steering with per-field masks (docs/rss.md section 4).
//
// Rule r matches a flow when rule_en[r] is set, the flow is IPv4 or IPv6, and every field
// agrees with the rule's value on the bits its mask sets: IP version (4 or 6), protocol,
// source and destination address, source and destination port. A rule with a non-zero port
// mask never matches a flow without valid ports (not TCP/UDP, or a fragment). The
// lowest-numbered matching rule wins.
//
// Latency 2: out_* follow in_valid/in_tuple two cycles later, one flow per cycle, no
// backpressure. Pipeline:
//   stage 1: NUM_RULES masked compares in parallel; the match vector is registered;
//   stage 2: priority encoder (lowest index first) and the winning rule's queue, registered.
// Match fields and enables are sampled in stage 1, rule_queue in stage 2 (one cycle later);
// the driver only changes a rule while it is disabled (docs/rss.md, "Changing rules").
// Data registers load only with their stage's valid (clock enables), so out_hit/out_rule/
// out_queue hold their last values while out_valid is low.
// Reset: synchronous, active high; clears the valid pipeline (data registers are not reset).
module flow_steer
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned NUM_RULES = 32,
  localparam int unsigned RULE_W   = NUM_RULES > 1 ? $clog2(NUM_RULES) : 1
) (
  input  logic                         clk,
  input  logic                         rst,
  // the flow of one frame
  input  logic                         in_valid,
  input  rx_tuple_t                    in_tuple,
  // the rules (from the CSR block)
  input  logic [NUM_RULES-1:0]         rule_en,
  input  logic [NUM_RULES-1:0][3:0]    rule_ipver,
  input  logic [NUM_RULES-1:0][3:0]    rule_ipver_mask,
  input  logic [NUM_RULES-1:0][7:0]    rule_proto,
  input  logic [NUM_RULES-1:0][7:0]    rule_proto_mask,
  input  logic [NUM_RULES-1:0][127:0]  rule_src_addr,
  input  logic [NUM_RULES-1:0][127:0]  rule_src_mask,
  input  logic [NUM_RULES-1:0][127:0]  rule_dst_addr,
  input  logic [NUM_RULES-1:0][127:0]  rule_dst_mask,
  input  logic [NUM_RULES-1:0][15:0]   rule_sport,
  input  logic [NUM_RULES-1:0][15:0]   rule_sport_mask,
  input  logic [NUM_RULES-1:0][15:0]   rule_dport,
  input  logic [NUM_RULES-1:0][15:0]   rule_dport_mask,
  input  logic [NUM_RULES-1:0][7:0]    rule_queue,
  // result, LATENCY cycles after in_valid
  output logic                         out_valid,
  output logic                         out_hit,
  output logic [RULE_W-1:0]            out_rule,
  output logic [7:0]                   out_queue
);
  initial begin
    if (NUM_RULES < 1 || NUM_RULES > 256) $fatal(1, "flow_steer: NUM_RULES must be 1..256");
  end

  // ---------------------------------------------------------------- stage 1: compares
  logic [NUM_RULES-1:0] match_q;
  logic                 s1_valid_q;

  // The match vector of one flow. Called only for a valid flow (match_q loads with
  // in_valid), so an idle cycle costs a simulator nothing.
  function automatic logic [NUM_RULES-1:0] match_rules(input rx_tuple_t t);
    logic [NUM_RULES-1:0] m;
    logic [3:0]           ipver;
    logic                 is_ip, ports_valid;
    is_ip       = (t.l3_type == L3_IPV4) || (t.l3_type == L3_IPV6);
    ipver       = (t.l3_type == L3_IPV4) ? 4'd4 : (t.l3_type == L3_IPV6) ? 4'd6 : 4'd0;
    ports_valid = ((t.l4_type == L4_TCP) || (t.l4_type == L4_UDP)) && !t.ip_frag;
    for (int unsigned r = 0; r < NUM_RULES; r++) begin
      logic fields_ok, ports_ok;
      fields_ok = (((ipver      ^ rule_ipver[r])    & rule_ipver_mask[r]) == '0)
               && (((t.proto    ^ rule_proto[r])    & rule_proto_mask[r]) == '0)
               && (((t.src_addr ^ rule_src_addr[r]) & rule_src_mask[r])   == '0)
               && (((t.dst_addr ^ rule_dst_addr[r]) & rule_dst_mask[r])   == '0);
      if (ports_valid) begin
        ports_ok = (((t.sport ^ rule_sport[r]) & rule_sport_mask[r]) == '0)
                && (((t.dport ^ rule_dport[r]) & rule_dport_mask[r]) == '0);
      end else begin
        ports_ok = (rule_sport_mask[r] == '0) && (rule_dport_mask[r] == '0);
      end
      m[r] = rule_en[r] && is_ip && fields_ok && ports_ok;
    end
    return m;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= in_valid;
  end

  always_ff @(posedge clk) begin
    if (in_valid) match_q <= match_rules(in_tuple);
  end

  // ---------------------------------------------------------------- stage 2: priority
  logic              hit_q;
  logic [RULE_W-1:0] rule_q;
  logic [7:0]        queue_q;
  logic              s2_valid_q;

  // Lowest matching index: scanned from the top, so the lowest match is assigned last.
  function automatic logic [RULE_W-1:0] lowest_match(input logic [NUM_RULES-1:0] m);
    logic [RULE_W-1:0] f;
    f = '0;
    for (int r = NUM_RULES - 1; r >= 0; r--) begin
      if (m[r]) f = RULE_W'(r);
    end
    return f;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= s1_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s1_valid_q) begin
      automatic logic [RULE_W-1:0] first = lowest_match(match_q);
      hit_q   <= |match_q;
      rule_q  <= first;
      queue_q <= rule_queue[first];
    end
  end

  assign out_valid = s2_valid_q;
  assign out_hit   = hit_q;
  assign out_rule  = rule_q;
  assign out_queue = queue_q;

endmodule
