// Flow steering: the n-tuple rule table in block RAM and its lookup, one flow per cycle
// (docs/rss.md section 4).
//
// The table: 2 banks x BUCKETS buckets x 2 ways of steer_slot_t (324 bits), one memory per
// bank and way (four simple dual-port block RAMs: the lookup reads, the slot port writes). A
// key lives in bucket h0 = crc[IW-1:0] of bank 0 or h1 = crc[16+IW-1:16] of bank 1, crc being
// the CRC-32C of the key string; the driver decides which (driver/steer_table.py).
//
// Latency 4 to the result, which comes out of stage 4 unregistered (rx_classify registers
// it with its own choice). Pipeline, one flow per cycle, no backpressure:
//   stage 1: the flow type (IP version and proto), that type's mask (type_mask[t]) applied:
//            the key, and whether a rule can match at all (an IP frame, and valid ports if
//            the type's port masks are not zero); registered;
//   stage 2: the two bucket numbers from the CRC of the key (a constant XOR matrix);
//            registered with the key;
//   stage 3: the four slots read (block RAM, read address = the stage 2 registers); a slot
//            written in that same cycle is marked (its read data is not to be trusted);
//   stage 4: out_*: the slots whose valid key equals the key, unless written as they were
//            read; the first in the order bank 0 way 0, bank 0 way 1, bank 1 way 0, bank 1
//            way 1 wins (several slots hit only while the driver moves or replaces a rule,
//            and then each of them is a right answer).
//            Beside the compare, each slot's queue: its rxq, or, for a rule with an RSS
//            context (ctx_en), ctx_entry[ctx] + rxq (ethtool's ring offset, docs/rss.md 3a).
// type_mask is sampled in stage 1, the slots in stage 3. Data registers load only with their
// stage's valid; out_* other than out_valid hold no meaning while out_valid is low.
// Slot writes (slot_wr_*): one slot, or with slot_wr_all the bucket in every bank and way,
// written at the clock edge.
// Memories (rtl/memories.tsv): the four slot memories are block RAM.
// Reset: synchronous, active high; clears the valid pipeline. The slots are not reset here:
// steer_table clears them (every bucket, one per cycle) after reset.
module flow_steer
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned BUCKETS = 512,
  parameter int unsigned NUM_CTX = NUM_RSS_CTX,     // RSS contexts besides the default
  localparam int unsigned IW     = $clog2(BUCKETS)
) (
  input  logic                  clk,
  input  logic                  rst,
  // the flow of one frame
  input  logic                  in_valid,
  input  rx_tuple_t             in_tuple,
  // configuration (steer_table)
  input  steer_mask_t [7:0]     type_mask,
  input  logic                  slot_wr_valid,
  input  logic                  slot_wr_all,
  input  logic                  slot_wr_bank,
  input  logic                  slot_wr_way,
  input  logic [IW-1:0]         slot_wr_bucket,
  input  steer_slot_t           slot_wr_data,
  // result, in stage 4 (combinational from the stage 3 registers and the slot memories)
  output logic                  out_valid,
  // the indirection entry of each context for this frame's hash (0: the default table,
  // c: RSS context c), in stage 4 (rx_classify's stage 3 registers)
  input  logic [NUM_CTX:0][7:0] ctx_entry,
  output logic                  out_hit,
  // the winning slot's queue: its rxq, or with ctx_en ctx_entry[ctx] + rxq (docs/rss.md 3a);
  // out_ctx_bad: ctx_en with a context above NUM_CTX (out_queue is then rxq)
  output logic [8:0]            out_queue,
  output logic                  out_ctx_bad,
  output logic [10:0]           out_loc
);
  localparam int unsigned KW = $bits(steer_key_t) + 5;    // the key string: 304 bits
  localparam logic [31:0] POLY = 32'h1EDC6F41;            // CRC-32C

  initial begin
    if (BUCKETS < 2 || BUCKETS > 65536 || (BUCKETS & (BUCKETS - 1)) != 0) begin
      $fatal(1, "flow_steer: BUCKETS must be a power of two, 2..65536");
    end
    if (KW != 304) $fatal(1, "flow_steer: the key string must be 38 bytes");
    if (NUM_CTX < 1 || NUM_CTX > 15) $fatal(1, "flow_steer: NUM_CTX must be 1..15 (a 4-bit ctx)");
  end

  // ---------------------------------------------------------------- stage 1: the key
  // The first n bits of an address (IPv6: of 128, IPv4: of its 32), n above the address
  // width acting as the width: ones shifted out of the top. (Written as a shift of a
  // constant, not as 160 compares with constants, which synthesis would build as carry
  // chains.)
  function automatic logic [127:0] prefix(input logic [7:0] n, input logic v6);
    logic [127:0] m;
    logic [31:0]  m4;
    m  = ~({128{1'b1}} >> n);
    m4 = ~({32{1'b1}} >> n);
    return v6 ? m : {96'd0, m4};
  endfunction

  typedef struct packed {
    logic       look;       // a rule can match this frame
    steer_key_t key;
  } lookup_t;

  function automatic lookup_t make_key(input rx_tuple_t t);
    lookup_t     o;
    flow_type_e  ft;
    steer_mask_t m;
    logic        is_ip, v6, ports, ports_valid;
    is_ip       = (t.l3_type == L3_IPV4) || (t.l3_type == L3_IPV6);
    v6          = t.l3_type == L3_IPV6;
    ports_valid = ((t.l4_type == L4_TCP) || (t.l4_type == L4_UDP)) && !t.ip_frag;
    if (t.proto == 8'd6)       ft = v6 ? FT_TCP6 : FT_TCP4;
    else if (t.proto == 8'd17) ft = v6 ? FT_UDP6 : FT_UDP4;
    else                       ft = v6 ? FT_IP6 : FT_IP4;
    ports = (t.proto == 8'd6) || (t.proto == 8'd17);
    m     = type_mask[ft];
    o.key.ftype = ft;
    o.key.proto = ports ? 8'd0 : (t.proto & m.proto_mask);
    o.key.src   = t.src_addr & prefix(m.src_len, v6);
    o.key.dst   = t.dst_addr & prefix(m.dst_len, v6);
    o.key.sport = (ports && ports_valid) ? (t.sport & m.sport_mask) : 16'd0;
    o.key.dport = (ports && ports_valid) ? (t.dport & m.dport_mask) : 16'd0;
    o.look      = is_ip && !(ports && !ports_valid && (m.sport_mask != '0 || m.dport_mask != '0));
    return o;
  endfunction

  logic    s1_valid_q;
  lookup_t s1_q;

  always_ff @(posedge clk) begin
    if (rst) s1_valid_q <= 1'b0;
    else     s1_valid_q <= in_valid;
  end

  always_ff @(posedge clk) begin
    if (in_valid) s1_q <= make_key(in_tuple);
  end

  // ---------------------------------------------------------------- stage 2: bucket numbers
  // crc = XOR over key-string bits k (bit 0 the last one fed in) of COL[k], COL[0] = POLY and
  // COL[k+1] = COL[k] * x mod P: the bit-serial CRC of docs/rss.md, unrolled.
  // The CRC matrix, row j (the key-string bits that feed crc bit j) in ROWS[j*KW +: KW]:
  // evaluated at elaboration.
  function automatic logic [32*KW-1:0] crc_rows();
    logic [32*KW-1:0] rows;
    logic [31:0]      col;
    col = POLY;             // every bit of rows is assigned below
    for (int k = 0; k < KW; k++) begin
      for (int j = 0; j < 32; j++) rows[j * KW + k] = col[j];
      col = col[31] ? ((col << 1) ^ POLY) : (col << 1);
    end
    return rows;
  endfunction

  localparam logic [32*KW-1:0] ROWS = crc_rows();

  // The two bucket numbers of a key: {h1, h0} = {crc[16 +: IW], crc[0 +: IW]}.
  function automatic logic [2*IW-1:0] key_buckets(input steer_key_t k);
    logic [KW-1:0]   bits;
    logic [2*IW-1:0] h;
    bits = {5'd0, k};
    for (int j = 0; j < IW; j++) begin
      h[j]      = ^(bits & ROWS[j * KW +: KW]);
      h[IW + j] = ^(bits & ROWS[(16 + j) * KW +: KW]);
    end
    return h;
  endfunction

  logic          s2_valid_q;
  lookup_t       s2_q;
  logic [IW-1:0] s2_h0_q, s2_h1_q;

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= s1_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s1_valid_q) begin
      s2_q               <= s1_q;
      {s2_h1_q, s2_h0_q} <= key_buckets(s1_q.key);
    end
  end

  // ---------------------------------------------------------------- stage 3: slot reads
  logic        s3_valid_q;
  lookup_t     s3_q;
  steer_slot_t [1:0][1:0] rd_q;      // [bank][way]
  logic        [1:0][1:0] wrote_q;   // written in the cycle it was read

  always_ff @(posedge clk) begin
    if (rst) s3_valid_q <= 1'b0;
    else     s3_valid_q <= s2_valid_q;
  end

  always_ff @(posedge clk) begin
    if (s2_valid_q) s3_q <= s2_q;
  end

  for (genvar b = 0; b < 2; b++) begin : g_bank
    for (genvar w = 0; w < 2; w++) begin : g_way
      (* no_rw_check *) steer_slot_t mem [BUCKETS];
      logic          we;
      logic [IW-1:0] ra;
      assign we = slot_wr_valid && (slot_wr_all || (slot_wr_bank == 1'(b) && slot_wr_way == 1'(w)));
      assign ra = (b == 0) ? s2_h0_q : s2_h1_q;

      always_ff @(posedge clk) begin
        if (we) mem[slot_wr_bucket] <= slot_wr_data;
      end

      always_ff @(posedge clk) begin
        if (s2_valid_q) begin
          rd_q[b][w]    <= mem[ra];
          wrote_q[b][w] <= we && (slot_wr_bucket == ra);
        end
      end
    end
  end

  // ---------------------------------------------------------------- stage 4: compare
  // Each slot's queue is worked out beside the key compare (its context's entry plus its
  // offset), so the compare is followed only by the choice among the four, as before contexts.
  logic [3:0]      hit, sq_bad;
  logic [3:0][8:0] sq;
  always_comb begin
    for (int s = 0; s < 4; s++) begin
      hit[s] = s3_q.look && rd_q[s / 2][s % 2].valid && !wrote_q[s / 2][s % 2]
               && (rd_q[s / 2][s % 2].key == s3_q.key);
      sq_bad[s] = rd_q[s / 2][s % 2].ctx_en && 32'(rd_q[s / 2][s % 2].ctx) > NUM_CTX;
      sq[s]     = 9'(rd_q[s / 2][s % 2].rxq);
      if (rd_q[s / 2][s % 2].ctx_en && !sq_bad[s]) begin
        sq[s] = sq[s] + 9'(ctx_entry[rd_q[s / 2][s % 2].ctx]);
      end
    end
    out_hit     = |hit;
    out_queue   = sq[3];
    out_ctx_bad = sq_bad[3];
    out_loc     = rd_q[1][1].loc;
    for (int s = 3; s >= 0; s--) begin
      if (hit[s]) begin
        out_queue   = sq[s];
        out_ctx_bad = sq_bad[s];
        out_loc     = rd_q[s / 2][s % 2].loc;
      end
    end
  end

  assign out_valid = s3_valid_q;

endmodule
