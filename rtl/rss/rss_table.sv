// RSS settings: the storage of the RSS_CTRL, RSS_KEY[] and RSS_INDIR[] registers
// (rtl/csr/nic_csr.rdl, RSS_BLOCK; docs/registers.md, docs/rss.md), behind the CSR block's
// external-block port.
//
// The register block (peakrdl-regblock) hands every access inside RSS_BLOCK here as one
// request with the byte address in the block. The enables and the key are held in
// flip-flops in the form rx_classify uses. The indirection table is a LUT RAM of INDIR_WORDS
// 32-bit words read by software (a valid bit per word makes a word never written since reset
// read zero, as the RDL reset says); every write of it is also given, merged, on the
// indir_wr_* port to rx_classify, which keeps its own copy to look frames up in. An access
// costs one indexed update, and a cycle without an access costs nothing beyond the test of
// the request (in silicon and in the simulator).
// The context tables (RSS_CTX_INDIR, docs/rss.md section 3a) are write-only: a write of one is
// only given on the ctx_wr_* port to rx_classify, which holds them (reads return 0; the driver
// keeps the tables, as the kernel's ethtool_rxfh_context does).
// Memories (rtl/memories.tsv): indir_mem is LUT RAM.
//
// Block layout (byte offsets; must match RSS_BLOCK in nic_csr.rdl, checked by
// tests/rtl/test_csr.py through the generated driver/regs.py):
//   0x000              RSS_CTRL     hash type enables, bits [5:0] (bit t-1 = type t)
//   0x010 + 4i         RSS_KEY[i]   key bytes 4i..4i+3, byte 4i in bits [31:24]:
//                                   key = {RSS_KEY[0], .., RSS_KEY[KEY_WORDS-1]}
//   0x004              RSS_CTX_CAPS contexts[7:0] = NUM_CTX, indir_entries[31:16] (RO)
//   0x100 + 4j         RSS_INDIR[j] entries 4j..4j+3, entry 4j+k in bits [8k+7:8k]
//   0x400 + 4i         RSS_CTX_INDIR[i] (write-only): word i mod 32 of context i/32 + 1;
//                                   written per byte (byte k when csr_wr_biten[8k] is set:
//                                   AXI4-Lite strobes enable whole bytes)
// Writes honour the bit enables (csr_wr_biten). RSS_CTRL bits [31:6] and every other address
// of the block read as zero and ignore writes.
//
// Timing: every access is answered (acked) in the cycle of its request, csr_rd_data with the
// read ack, as the generated block answers its own registers; a write takes effect at that
// clock edge.
// Reset: synchronous, active high; RSS_CTRL, key and table to zero (the RDL reset): the table
// words read zero until written (their valid bits clear), here and in rx_classify's copy. The
// context tables hold no state here (rx_classify keeps them, not reset); no ctx_wr_* write
// is given while rst is high.
module rss_table
  import nic_pkg::*;
#(
  parameter int unsigned KEY_WORDS   = 10,
  parameter int unsigned INDIR_WORDS = 32,
  parameter int unsigned NUM_CTX     = 8,     // RSS contexts besides the default
  localparam int unsigned INDIR_IDX_W = INDIR_WORDS > 1 ? $clog2(INDIR_WORDS) : 1,
  localparam int unsigned CTX_IDX_W   = $clog2(NUM_CTX * INDIR_WORDS)
) (
  input  logic                              clk,
  input  logic                              rst,
  // CSR external block: one request, its byte address in the block
  input  logic                              csr_req,
  input  logic [10:0]                       csr_addr,
  input  logic                              csr_req_is_wr,
  input  logic [31:0]                       csr_wr_data,
  input  logic [31:0]                       csr_wr_biten,
  output logic                              csr_rd_ack,
  output logic                              csr_wr_ack,
  output logic [31:0]                       csr_rd_data,
  // RSS_CTRL (the hash type enables), the key (byte 0 in the top byte), and each table word
  // written (word j = entries 4j+3..4j, the whole word after the bit enables), in the cycle
  // of the write
  output logic [5:0]                        type_en,
  output logic [KEY_WORDS*32-1:0]           key,
  output logic                              indir_wr_valid,
  output logic [INDIR_IDX_W-1:0]            indir_wr_word,
  output logic [31:0]                       indir_wr_data,
  // each RSS_CTX_INDIR[i] write: word i (context i / INDIR_WORDS + 1), its bytes and their
  // enables, in the cycle of the write
  output logic                              ctx_wr_valid,
  output logic [CTX_IDX_W-1:0]              ctx_wr_idx,
  output logic [31:0]                       ctx_wr_data,
  output logic [3:0]                        ctx_wr_be
);
  localparam int unsigned KEY_IDX_W   = KEY_WORDS > 1 ? $clog2(KEY_WORDS) : 1;
  localparam logic [10:0] KEY_OFF     = 11'h010;
  localparam logic [10:0] INDIR_OFF   = 11'h100;
  localparam logic [10:0] CTX_OFF     = 11'h400;

  initial begin
    if (KEY_WORDS < 1 || 16 + 4 * KEY_WORDS > 256) $fatal(1, "rss_table: KEY_WORDS must be 1..60");
    if (INDIR_WORDS < 1 || INDIR_WORDS > 64) $fatal(1, "rss_table: INDIR_WORDS must be 1..64");
    if (NUM_CTX < 1 || NUM_CTX > 15 || (NUM_CTX & (NUM_CTX - 1)) != 0 ||
        (INDIR_WORDS & (INDIR_WORDS - 1)) != 0 || NUM_CTX * INDIR_WORDS > 256) begin
      $fatal(1, "rss_table: NUM_CTX (a power of two up to 8) x INDIR_WORDS must fit 256 words");
    end
  end

  // What csr_addr names: RSS_CTRL, key word key_i, table word indir_j, or nothing.
  logic                   is_ctrl, is_caps, is_key, is_indir, is_ctx;
  logic [10:0]            key_rel, indir_rel, ctx_rel;
  logic [KEY_IDX_W-1:0]   key_i;
  logic [INDIR_IDX_W-1:0] indir_j;
  assign key_rel   = csr_addr - KEY_OFF;
  assign indir_rel = csr_addr - INDIR_OFF;
  assign ctx_rel   = csr_addr - CTX_OFF;
  assign key_i     = KEY_IDX_W'(key_rel[10:2]);
  assign indir_j   = INDIR_IDX_W'(indir_rel[10:2]);
  assign is_ctrl   = csr_addr[10:2] == 9'd0;
  assign is_caps   = csr_addr[10:2] == 9'd1;
  assign is_key    = csr_addr >= KEY_OFF && 32'(key_rel[10:2]) < KEY_WORDS;
  assign is_indir  = csr_addr >= INDIR_OFF && 32'(indir_rel[10:2]) < INDIR_WORDS;
  assign is_ctx    = csr_addr >= CTX_OFF && 32'(ctx_rel[10:2]) < NUM_CTX * INDIR_WORDS;

  // RSS_KEY[i] is key bits [KEY_W-1-32i -: 32]; RSS_INDIR[j] is entries 4j+3..4j.
  function automatic logic [31:0] key_word(input logic [KEY_IDX_W-1:0] i);
    return key[32 * (KEY_WORDS - 1 - int'(i)) +: 32];
  endfunction

  logic [31:0]            indir_mem [INDIR_WORDS];
  logic [INDIR_WORDS-1:0] indir_ok_q;      // written since reset

  function automatic logic [31:0] indir_word(input logic [INDIR_IDX_W-1:0] j);
    return indir_ok_q[j] ? indir_mem[j] : 32'd0;
  endfunction

  // The addressed register as software reads it, for reads and for the write merge, in its
  // own process; the write only writes (nic_pkg, "external register tables").
  logic [31:0] cur_word;
  always_comb begin
    cur_word = '0;
    if (csr_req) begin
      if (is_ctrl)       cur_word = {26'd0, type_en};
      else if (is_caps)  cur_word = {16'(INDIR_WORDS * 4), 8'd0, 8'(NUM_CTX)};
      else if (is_key)   cur_word = key_word(key_i);
      else if (is_indir) cur_word = indir_word(indir_j);
    end
  end

  // Writes: nothing but the test of the request in a cycle without one.
  logic        wr;
  logic [31:0] v;            // the addressed register after the write, bit enables applied
  assign wr = csr_req && csr_req_is_wr;
  assign v  = csr_merge(cur_word, csr_wr_data, csr_wr_biten);

  always_ff @(posedge clk) begin
    if (rst) begin
      type_en    <= '0;
      key        <= '0;
      indir_ok_q <= '0;
    end else if (wr) begin
      if (is_ctrl) type_en <= v[5:0];
      for (int i = 0; i < KEY_WORDS; i++) begin
        if (is_key && key_i == KEY_IDX_W'(i)) key[32 * (KEY_WORDS - 1 - i) +: 32] <= v;
      end
      if (is_indir) indir_ok_q[indir_j] <= 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (wr && is_indir) indir_mem[indir_j] <= v;
  end

  assign indir_wr_valid = wr && is_indir && !rst;
  assign indir_wr_word  = indir_j;
  assign indir_wr_data  = v;

  assign ctx_wr_valid = wr && is_ctx && !rst;
  assign ctx_wr_idx   = CTX_IDX_W'(ctx_rel[10:2]);
  assign ctx_wr_data  = csr_wr_data;
  assign ctx_wr_be    = {csr_wr_biten[24], csr_wr_biten[16], csr_wr_biten[8], csr_wr_biten[0]};

  // Answers, in the cycle of the request (as the generated block answers its own registers).
  assign csr_rd_ack  = csr_req && !csr_req_is_wr;
  assign csr_wr_ack  = csr_req && csr_req_is_wr;
  assign csr_rd_data = csr_req_is_wr ? '0 : cur_word;

  logic unused;
  assign unused = ^{key_rel[1:0], indir_rel[1:0], ctx_rel[1:0]};   // byte bits unused

endmodule
