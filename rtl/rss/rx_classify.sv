// RX classification: RSS (Toeplitz hash + indirection table) and flow steering, choosing the
// RX queue of every frame (docs/rss.md).
//
//   in_tuple ──► hash type + hash input ──► rss_toeplitz (2 stages) ──┐
//            └─────────────────────────────► flow_steer   (2 stages) ──┴► stage 3: table
//                                                                          lookup, queue
//                                                                          choice, range check
// One flow per cycle, no backpressure: out_valid/out_class follow in_valid/in_tuple exactly
// LATENCY = 3 cycles later, in order.
//
// Hash type (section 2): the 4-tuple type (TCP/UDP over IPv4/IPv6) when the ports are valid
// and its enable is set, else the 2-tuple type (addresses) when enabled, else none (hash 0).
// rss_type_en bit t-1 enables nic_pkg::rss_type_e value t. Queue (sections 3, 4): the lowest
// matching enabled rule's queue, else rss_indir[hash mod INDIR_ENTRIES] when hashed, else 0.
// A chosen queue >= num_queues (or >= 128) becomes queue 0 and raises out_steer_bad_queue or
// out_rss_bad_queue for one cycle with out_valid (for RX_STEER_BAD_QUEUE / RX_RSS_BAD_QUEUE).
// The hash and its type are reported whether or not a rule steered the frame.
//
// Configuration ports are sampled as the frame passes: key, enables and rule match fields in
// stage 1, rule_queue in stage 2, rss_indir and num_queues in stage 3.
// out_class holds no meaning while out_valid is low (it may hold an earlier frame's class).
// Reset: synchronous, active high; clears the valid pipeline (data registers are not reset).
module rx_classify
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned NUM_RULES     = 32,
  parameter int unsigned INDIR_ENTRIES = 128
) (
  input  logic                            clk,
  input  logic                            rst,
  // the flow of each frame, at most one per cycle
  input  logic                            in_valid,
  input  rx_tuple_t                       in_tuple,
  // RSS configuration (RSS_CTRL, RSS_KEY, RSS_INDIR)
  input  logic [5:0]                      rss_type_en,
  input  logic [319:0]                    rss_key,      // key byte 0 in [319:312]
  input  logic [INDIR_ENTRIES-1:0][7:0]   rss_indir,    // entry i in [8i+7:8i]
  input  logic [7:0]                      num_queues,   // RX queues that exist (1..128)
  // flow-steering rules (STEER[r]); rule r in element [r] of each array
  input  logic [NUM_RULES-1:0]            rule_en,
  input  logic [NUM_RULES-1:0][3:0]       rule_ipver,
  input  logic [NUM_RULES-1:0][3:0]       rule_ipver_mask,
  input  logic [NUM_RULES-1:0][7:0]       rule_proto,
  input  logic [NUM_RULES-1:0][7:0]       rule_proto_mask,
  input  logic [NUM_RULES-1:0][127:0]     rule_src_addr,
  input  logic [NUM_RULES-1:0][127:0]     rule_src_mask,
  input  logic [NUM_RULES-1:0][127:0]     rule_dst_addr,
  input  logic [NUM_RULES-1:0][127:0]     rule_dst_mask,
  input  logic [NUM_RULES-1:0][15:0]      rule_sport,
  input  logic [NUM_RULES-1:0][15:0]      rule_sport_mask,
  input  logic [NUM_RULES-1:0][15:0]      rule_dport,
  input  logic [NUM_RULES-1:0][15:0]      rule_dport_mask,
  input  logic [NUM_RULES-1:0][7:0]       rule_queue,
  // result, LATENCY cycles after in_valid
  output logic                            out_valid,
  output rx_class_t                       out_class,
  output logic                            out_steer_bad_queue,
  output logic                            out_rss_bad_queue
);
  localparam int unsigned LATENCY   = 3;    // in_valid to out_valid, cycles
  localparam int unsigned HASH_LAT  = 2;    // rss_toeplitz and flow_steer
  localparam int unsigned IN_BYTES  = 36;   // longest hash input: IPv6 addresses + ports
  localparam int unsigned IDX_W     = $clog2(INDIR_ENTRIES);
  localparam int unsigned RULE_W    = NUM_RULES > 1 ? $clog2(NUM_RULES) : 1;

  initial begin
    if (NUM_RULES < 32 || NUM_RULES > 256) $fatal(1, "rx_classify: NUM_RULES must be 32..256");
    if (INDIR_ENTRIES < 2 || INDIR_ENTRIES > 4096 || (INDIR_ENTRIES & (INDIR_ENTRIES - 1)) != 0) begin
      $fatal(1, "rx_classify: INDIR_ENTRIES must be a power of two, 2..4096");
    end
    if (LATENCY != HASH_LAT + 1) $fatal(1, "rx_classify: LATENCY out of date");
  end

  // ---------------------------------------------------------------- hash type and input
  rss_type_e           type_d;
  logic [IN_BYTES*8-1:0] hash_in;
  logic                is_v4, is_v6, ports_valid, is_tcp, is_udp;

  always_comb begin
    is_v4       = in_tuple.l3_type == L3_IPV4;
    is_v6       = in_tuple.l3_type == L3_IPV6;
    is_tcp      = in_tuple.l4_type == L4_TCP;
    is_udp      = in_tuple.l4_type == L4_UDP;
    ports_valid = (is_tcp || is_udp) && !in_tuple.ip_frag;

    type_d = RSS_NONE;
    if (is_v4) begin
      if (ports_valid && is_tcp && rss_type_en[RSS_TCP_IPV4 - 1])      type_d = RSS_TCP_IPV4;
      else if (ports_valid && is_udp && rss_type_en[RSS_UDP_IPV4 - 1]) type_d = RSS_UDP_IPV4;
      else if (rss_type_en[RSS_IPV4 - 1])                              type_d = RSS_IPV4;
    end else if (is_v6) begin
      if (ports_valid && is_tcp && rss_type_en[RSS_TCP_IPV6 - 1])      type_d = RSS_TCP_IPV6;
      else if (ports_valid && is_udp && rss_type_en[RSS_UDP_IPV6 - 1]) type_d = RSS_UDP_IPV6;
      else if (rss_type_en[RSS_IPV6 - 1])                              type_d = RSS_IPV6;
    end

    // Input byte string, zero-filled: byte 0 in the top byte. No type: all zero, hash 0.
    hash_in = '0;
    unique case (type_d)
      RSS_IPV4: begin
        hash_in[IN_BYTES*8-1 -: 64] = {in_tuple.src_addr[31:0], in_tuple.dst_addr[31:0]};
      end
      RSS_TCP_IPV4, RSS_UDP_IPV4: begin
        hash_in[IN_BYTES*8-1 -: 96] = {in_tuple.src_addr[31:0], in_tuple.dst_addr[31:0],
                                       in_tuple.sport, in_tuple.dport};
      end
      RSS_IPV6: begin
        hash_in[IN_BYTES*8-1 -: 256] = {in_tuple.src_addr, in_tuple.dst_addr};
      end
      RSS_TCP_IPV6, RSS_UDP_IPV6: begin
        hash_in = {in_tuple.src_addr, in_tuple.dst_addr, in_tuple.sport, in_tuple.dport};
      end
      default: hash_in = '0;
    endcase
  end

  // ---------------------------------------------------------------- stages 1-2
  logic        hash_valid;
  logic [31:0] hash;

  rss_toeplitz #(
    .IN_BYTES  (IN_BYTES),
    .KEY_BYTES (40)
  ) u_toeplitz (
    .clk,
    .rst,
    .in_valid  (in_valid),
    .in_data   (hash_in),
    .key       (rss_key),
    .out_valid (hash_valid),
    .out_hash  (hash)
  );

  logic              steer_valid, steer_hit;
  logic [RULE_W-1:0] steer_rule;
  logic [7:0]        steer_queue;

  flow_steer #(
    .NUM_RULES (NUM_RULES)
  ) u_steer (
    .clk,
    .rst,
    .in_valid  (in_valid),
    .in_tuple  (in_tuple),
    .rule_en,
    .rule_ipver,
    .rule_ipver_mask,
    .rule_proto,
    .rule_proto_mask,
    .rule_src_addr,
    .rule_src_mask,
    .rule_dst_addr,
    .rule_dst_mask,
    .rule_sport,
    .rule_sport_mask,
    .rule_dport,
    .rule_dport_mask,
    .rule_queue,
    .out_valid (steer_valid),
    .out_hit   (steer_hit),
    .out_rule  (steer_rule),
    .out_queue (steer_queue)
  );

  // The hash type travels beside the two stages.
  rss_type_e type_s1_q, type_s2_q;

  always_ff @(posedge clk) begin
    type_s1_q <= type_d;
    type_s2_q <= type_s1_q;
  end

  // ---------------------------------------------------------------- stage 3: queue choice
  logic [7:0] pick_queue;
  logic       pick_bad;
  rx_class_t  class_d, class_q;
  logic       steer_bad_d, rss_bad_d, steer_bad_q, rss_bad_q, out_valid_q;

  always_comb begin
    if (steer_hit)                  pick_queue = steer_queue;
    else if (type_s2_q != RSS_NONE) pick_queue = rss_indir[hash[IDX_W-1:0]];
    else                            pick_queue = 8'd0;
    pick_bad = (steer_hit || type_s2_q != RSS_NONE)
               && ((pick_queue >= num_queues) || pick_queue[7]);

    class_d.qid      = pick_bad ? 7'd0 : pick_queue[6:0];
    class_d.rss_hash = hash;
    class_d.rss_type = type_s2_q;
    class_d.steered  = steer_hit;
    steer_bad_d      = hash_valid && steer_hit && pick_bad;
    rss_bad_d        = hash_valid && !steer_hit && pick_bad;
  end

  always_ff @(posedge clk) begin
    if (rst) out_valid_q <= 1'b0;
    else     out_valid_q <= hash_valid;
  end

  always_ff @(posedge clk) begin
    class_q     <= class_d;
    steer_bad_q <= steer_bad_d;
    rss_bad_q   <= rss_bad_d;
  end

  assign out_valid           = out_valid_q;
  assign out_class           = class_q;
  assign out_steer_bad_queue = out_valid_q && steer_bad_q;
  assign out_rss_bad_queue   = out_valid_q && rss_bad_q;

  // steer_valid equals hash_valid (same latency); steer_rule is for a future per-rule counter.
  logic unused_steer;
  assign unused_steer = steer_valid ^ (|steer_rule);

endmodule
