// RX classification: RSS (Toeplitz hash + indirection table) and flow steering, choosing the
// RX queue of every frame (docs/rss.md).
//
//   in_tuple ──► hash type + hash input ──► rss_toeplitz (2 stages) ──► stage 3: table lookup,
//            │   (up to 128-bit MACs: rss_toeplitz_seq, the addresses     RSS queue range check
//            │    hashed over the 3 cycles before in_valid)
//            └──► flow_steer (key, buckets, slot reads: 3 stages) ─────► stage 4: slot compare,
//                                                                          queue choice
// One flow per cycle, no backpressure: out_valid/out_class follow in_valid/in_tuple exactly
// LATENCY = 4 cycles later, in order.
//
// Hash type (section 2): the 4-tuple type (TCP/UDP over IPv4/IPv6) when the ports are valid
// and its enable is set, else the 2-tuple type (addresses) when enabled, else none (hash 0).
// rss_type_en bit t-1 enables nic_pkg::rss_type_e value t. Queue (sections 3, 4): the queue of
// the slot that matches the frame's key, else the indirection table's entry hash mod
// INDIR_ENTRIES when hashed, else 0. A chosen queue >= num_queues (or >= 128) becomes queue 0 and raises
// out_steer_bad_queue or out_rss_bad_queue for one cycle with out_valid (for
// RX_STEER_BAD_QUEUE / RX_RSS_BAD_QUEUE). The hash and its type are reported whether or not a
// rule steered the frame.
//
// RSS contexts (section 3a): a rule with ctx_en sends its frames to queue
// table_ctx[hash mod INDIR_ENTRIES] + its queue, table_0 being the default table and table_c
// RSS context c's (1..NUM_CTX); the sum is range checked like a rule's queue. Every context's
// entry for the frame's hash is read in stage 3 (one LUT RAM per context, read in parallel),
// and flow_steer adds the offset of each slot beside its key compare in stage 4, so the
// throughput (one frame per cycle) and the latency are those of a single table.
// Configuration ports are sampled as the frame passes: key, enables and type masks in stage
// 1, the slots and the indirection tables in stage 3, num_queues in stages 3 and 4. The
// indirection tables arrive as their register writes (indir_wr_*, ctx_wr_*) and are kept here
// as LUT RAM. The context tables are not reset (undefined until written: the driver writes a
// context's whole table before a rule can point at it).
// Memories (rtl/memories.tsv): indir_mem and ctx_mem are LUT RAM, flow_steer's slots block RAM.
// out_class holds no meaning while out_valid is low (it may hold an earlier frame's class).
// Reset: synchronous, active high; clears the valid pipeline (data registers are not reset).
module rx_classify
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W        = 64,      // MAC width: up to 128 the hash is sequential
  parameter int unsigned BUCKETS       = 512,     // flow_steer's buckets per bank
  parameter int unsigned INDIR_ENTRIES = 128,
  parameter int unsigned NUM_CTX       = NUM_RSS_CTX,   // RSS contexts besides the default
  localparam int unsigned IW           = $clog2(BUCKETS),
  localparam int unsigned IXW          = $clog2(INDIR_ENTRIES / 4),
  localparam int unsigned CXW          = $clog2(NUM_CTX * INDIR_ENTRIES / 4)
) (
  input  logic                            clk,
  input  logic                            rst,
  // the flow of each frame, at most one per cycle (one per 4 cycles up to 128 bits)
  input  logic                            in_valid,
  input  rx_tuple_t                       in_tuple,
  // its addresses, ADDR_LEAD = 3 cycles earlier, held until the next frame's (the parser's
  // stage 1 registers; used up to 128 bits, where frames are at least 4 cycles apart)
  input  logic                            addr_valid,
  input  logic                            addr_v6,
  input  logic [127:0]                    addr_src,
  input  logic [127:0]                    addr_dst,
  // RSS configuration (RSS_CTRL, RSS_KEY, RSS_INDIR)
  input  logic [5:0]                      rss_type_en,
  input  logic [319:0]                    rss_key,      // key byte 0 in [319:312]
  input  logic                            indir_wr_valid,  // RSS_INDIR word written (rss_table)
  input  logic [IXW-1:0]                  indir_wr_word,   // word j: entries 4j+3..4j
  input  logic [31:0]                     indir_wr_data,   // entry 4j+k in [8k+7:8k]
  input  logic                            ctx_wr_valid,    // RSS_CTX_INDIR word written (rss_table)
  input  logic [CXW-1:0]                  ctx_wr_idx,      // word i: context i/32 + 1, word i%32
  input  logic [31:0]                     ctx_wr_data,
  input  logic [3:0]                      ctx_wr_be,       // bytes written
  input  logic [7:0]                      num_queues,   // RX queues that exist (1..128)
  // flow steering (steer_table): the type masks and the slot write port
  input  steer_mask_t [7:0]               type_mask,
  input  logic                            slot_wr_valid,
  input  logic                            slot_wr_all,
  input  logic                            slot_wr_bank,
  input  logic                            slot_wr_way,
  input  logic [IW-1:0]                   slot_wr_bucket,
  input  steer_slot_t                     slot_wr_data,
  // result, LATENCY cycles after in_valid
  output logic                            out_valid,
  output rx_class_t                       out_class,
  output logic                            out_steer_bad_queue,
  output logic                            out_rss_bad_queue
);
  localparam int unsigned LATENCY   = 4;    // in_valid to out_valid, cycles
  localparam int unsigned HASH_LAT  = 2;    // rss_toeplitz
  localparam int unsigned IN_BYTES  = 36;   // longest hash input: IPv6 addresses + ports
  localparam int unsigned IDX_W     = $clog2(INDIR_ENTRIES);

  initial begin
    if (INDIR_ENTRIES < 8 || INDIR_ENTRIES > 4096 || (INDIR_ENTRIES & (INDIR_ENTRIES - 1)) != 0) begin
      $fatal(1, "rx_classify: INDIR_ENTRIES must be a power of two, 8..4096");
    end
    if (LATENCY != HASH_LAT + 2) $fatal(1, "rx_classify: LATENCY out of date");
    if (NUM_CTX < 1 || NUM_CTX > 8 || (NUM_CTX & (NUM_CTX - 1)) != 0) begin
      $fatal(1, "rx_classify: NUM_CTX must be 1, 2, 4 or 8");
    end
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

  // Up to 128-bit MACs a frame takes at least 4 cycles: the address part of the hash is
  // worked out over the parser's last cycles, a quarter a cycle (rss_toeplitz_seq); wider,
  // the whole input is hashed in two stages from the tuple.
  localparam bit SEQ = DATA_W <= 128;

  if (SEQ) begin : g_seq_hash
    rss_toeplitz_seq #(.STEPS(4), .ADDR_LEAD(3)) u_toeplitz (
      .clk,
      .rst,
      .addr_valid,
      .v6        (addr_v6),
      .src       (addr_src),
      .dst       (addr_dst),
      .in_valid  (in_valid),
      .in_v6     (is_v6),
      .in_hashed (type_d != RSS_NONE),
      .in_four   (type_d == RSS_TCP_IPV4 || type_d == RSS_UDP_IPV4 ||
                  type_d == RSS_TCP_IPV6 || type_d == RSS_UDP_IPV6),
      .sport     (in_tuple.sport),
      .dport     (in_tuple.dport),
      .key       (rss_key),
      .out_valid (hash_valid),
      .out_hash  (hash)
    );
    logic unused_in;
    assign unused_in = ^hash_in;
  end else begin : g_par_hash
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
    logic unused_addr;
    assign unused_addr = ^{addr_valid, addr_v6, addr_src, addr_dst};
  end

  // Flow steering: the result comes out of its stage 4, combinationally.
  logic        steer_valid, steer_hit, steer_ctx_bad;
  logic [8:0]  steer_queue;
  logic [10:0] steer_loc;
  logic [NUM_CTX:0][7:0] s3_ctx_ent_q;     // each table's entry for the frame's hash (stage 3)

  flow_steer #(.BUCKETS(BUCKETS), .NUM_CTX(NUM_CTX)) u_steer (
    .clk,
    .rst,
    .in_valid  (in_valid),
    .in_tuple  (in_tuple),
    .type_mask,
    .slot_wr_valid, .slot_wr_all, .slot_wr_bank, .slot_wr_way, .slot_wr_bucket, .slot_wr_data,
    .ctx_entry (s3_ctx_ent_q),
    .out_valid (steer_valid),
    .out_hit   (steer_hit),
    .out_queue (steer_queue),
    .out_ctx_bad (steer_ctx_bad),
    .out_loc   (steer_loc)
  );

  // The hash type travels beside the two hash stages.
  rss_type_e type_s1_q, type_s2_q;

  always_ff @(posedge clk) begin
    type_s1_q <= type_d;
    type_s2_q <= type_s1_q;
  end

  // ---------------------------------------------------------------- stage 3: RSS queue
  logic        s3_valid_q, s3_rss_bad_q;
  logic [6:0]  s3_rss_q;
  logic [31:0] s3_hash_q;
  rss_type_e   s3_type_q;

  always_ff @(posedge clk) begin
    if (rst) s3_valid_q <= 1'b0;
    else     s3_valid_q <= hash_valid;
  end

  // The indirection table: a copy of rss_table's, written with it, as LUT RAM (a word that was
  // never written since reset reads zero: its valid bit).
  logic [31:0]                indir_mem [INDIR_ENTRIES / 4];
  logic [INDIR_ENTRIES/4-1:0] indir_ok_q;

  always_ff @(posedge clk) begin
    if (rst)                 indir_ok_q <= '0;
    else if (indir_wr_valid) indir_ok_q[indir_wr_word] <= 1'b1;
  end

  always_ff @(posedge clk) begin
    if (indir_wr_valid) indir_mem[indir_wr_word] <= indir_wr_data;
  end

  function automatic logic [7:0] indir_entry(input logic [IDX_W-1:0] e);
    logic [31:0] w;
    w = indir_ok_q[e[IDX_W-1:2]] ? indir_mem[e[IDX_W-1:2]] : 32'd0;
    return w[8 * e[1:0] +: 8];
  endfunction

  // The context tables: one LUT RAM each (read in parallel at the frame's hash), written a
  // byte at a time from RSS_CTX_INDIR writes; not reset.
  localparam int unsigned CTX_WORDS = INDIR_ENTRIES / 4;
  logic [NUM_CTX-1:0][7:0] ctx_ent;

  for (genvar c = 0; c < NUM_CTX; c++) begin : g_ctx
    logic [31:0] ctx_mem [CTX_WORDS];
    logic        we;
    assign we = ctx_wr_valid && (ctx_wr_idx / CXW'(CTX_WORDS)) == CXW'(c);

    always_ff @(posedge clk) begin
      for (int k = 0; k < 4; k++) begin
        if (we && ctx_wr_be[k]) ctx_mem[IXW'(ctx_wr_idx % CXW'(CTX_WORDS))][8 * k +: 8] <= ctx_wr_data[8 * k +: 8];
      end
    end

    always_comb begin
      automatic logic [31:0] w = ctx_mem[hash[IDX_W-1:2]];
      ctx_ent[c] = w[8 * hash[1:0] +: 8];
    end
  end

  always_ff @(posedge clk) begin
    if (hash_valid) begin
      s3_ctx_ent_q <= {ctx_ent, indir_entry(hash[IDX_W-1:0])};
    end
  end

  always_ff @(posedge clk) begin
    if (hash_valid) begin
      automatic logic [7:0] q   = indir_entry(hash[IDX_W-1:0]);
      automatic logic       bad = (q >= num_queues) || q[7];
      s3_rss_q     <= (type_s2_q == RSS_NONE || bad) ? 7'd0 : q[6:0];
      s3_rss_bad_q <= type_s2_q != RSS_NONE && bad;
      s3_hash_q    <= hash;
      s3_type_q    <= type_s2_q;
    end
  end

  // ---------------------------------------------------------------- stage 4: queue choice
  rx_class_t class_d, class_q;
  logic      steer_bad, steer_bad_q, rss_bad_q, out_valid_q;

  always_comb begin
    steer_bad        = (steer_queue >= 9'(num_queues)) || (steer_queue[8:7] != 2'd0) || steer_ctx_bad;
    class_d.qid      = steer_hit ? (steer_bad ? 7'd0 : steer_queue[6:0]) : s3_rss_q;
    class_d.rss_hash = s3_hash_q;
    class_d.rss_type = s3_type_q;
    class_d.steered  = steer_hit;
  end

  always_ff @(posedge clk) begin
    if (rst) out_valid_q <= 1'b0;
    else     out_valid_q <= s3_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s3_valid_q) begin
      class_q     <= class_d;
      steer_bad_q <= steer_hit && steer_bad;
      rss_bad_q   <= !steer_hit && s3_rss_bad_q;
    end
  end

  assign out_valid           = out_valid_q;
  assign out_class           = class_q;
  assign out_steer_bad_queue = out_valid_q && steer_bad_q;
  assign out_rss_bad_queue   = out_valid_q && rss_bad_q;

  // steer_valid equals s3_valid_q (same latency); steer_loc is for a future per-rule counter.
  logic unused_steer;
  assign unused_steer = steer_valid ^ (|steer_loc);

endmodule
