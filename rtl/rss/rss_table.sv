// RSS key and indirection table: the storage of the RSS_KEY[] and RSS_INDIR[] registers
// (rtl/csr/nic_csr.rdl; docs/registers.md, docs/rss.md), behind the CSR block's
// external-register ports.
//
// The register block (peakrdl-regblock) decodes the address and hands each access to one of
// these registers here (key_req[i] or indir_req[j]). The key and table are held in the form
// rx_classify uses; an access costs one indexed update, and a cycle without an access costs
// nothing beyond the test of the request lines (in silicon and in the simulator).
//
// RSS_KEY[i]   key bytes 4i..4i+3, byte 4i in bits [31:24]: key = {RSS_KEY[0], .., RSS_KEY[9]}
// RSS_INDIR[j] entries 4j..4j+3, entry 4j+k in bits [8k+7:8k]
// Writes honour the bit enables (csr_wr_biten). Every bit is a field, so nothing reads as a
// reserved zero.
//
// Timing: an access is answered in the cycle of its request (rd/wr ack on the requested
// register's bit, csr_rd_data with the read ack), as the generated block answers its own
// registers; a write takes effect at that clock edge.
// Reset: synchronous, active high; key and table to zero (the RDL reset).
module rss_table
  import nic_pkg::*;
#(
  parameter int unsigned KEY_WORDS   = 10,
  parameter int unsigned INDIR_WORDS = 32
) (
  input  logic                              clk,
  input  logic                              rst,
  // CSR external registers: one request line per register, the rest shared
  input  logic [KEY_WORDS-1:0]              key_req,
  input  logic [INDIR_WORDS-1:0]            indir_req,
  input  logic                              csr_req_is_wr,
  input  logic [31:0]                       csr_wr_data,
  input  logic [31:0]                       csr_wr_biten,
  output logic [KEY_WORDS-1:0]              key_rd_ack,
  output logic [KEY_WORDS-1:0]              key_wr_ack,
  output logic [INDIR_WORDS-1:0]            indir_rd_ack,
  output logic [INDIR_WORDS-1:0]            indir_wr_ack,
  output logic [31:0]                       csr_rd_data,
  // the key (byte 0 in the top byte) and the table (entry e in element [e])
  output logic [KEY_WORDS*32-1:0]           key,
  output logic [4*INDIR_WORDS-1:0][7:0]     indir
);
  localparam int unsigned KEY_IDX_W   = KEY_WORDS > 1 ? $clog2(KEY_WORDS) : 1;
  localparam int unsigned INDIR_IDX_W = INDIR_WORDS > 1 ? $clog2(INDIR_WORDS) : 1;

  initial begin
    if (KEY_WORDS < 1 || INDIR_WORDS < 1) $fatal(1, "rss_table: KEY_WORDS and INDIR_WORDS must be at least 1");
  end

  // The requested register of a one-hot request vector (the block decodes one at a time).
  function automatic logic [KEY_IDX_W-1:0] key_index(input logic [KEY_WORDS-1:0] req);
    return KEY_IDX_W'(onehot_index(256'(req)));
  endfunction

  function automatic logic [INDIR_IDX_W-1:0] indir_index(input logic [INDIR_WORDS-1:0] req);
    return INDIR_IDX_W'(onehot_index(256'(req)));
  endfunction

  // RSS_KEY[i] is key bits [KEY_W-1-32i -: 32]; RSS_INDIR[j] is entries 4j+3..4j.
  function automatic logic [31:0] key_word(input logic [KEY_IDX_W-1:0] i);
    return key[32 * (KEY_WORDS - 1 - int'(i)) +: 32];
  endfunction

  function automatic logic [31:0] indir_word(input logic [INDIR_IDX_W-1:0] j);
    return {indir[4 * j + 3], indir[4 * j + 2], indir[4 * j + 1], indir[4 * j]};
  endfunction

  function automatic logic [31:0] merge(input logic [31:0] old);
    return (old & ~csr_wr_biten) | (csr_wr_data & csr_wr_biten);
  endfunction

  // Writes: computed only in the access branch.
  always_ff @(posedge clk) begin
    if (rst) begin
      key   <= '0;
      indir <= '0;
    end else if (csr_req_is_wr) begin
      if (|key_req) begin
        automatic logic [KEY_IDX_W-1:0] i = key_index(key_req);
        key[32 * (KEY_WORDS - 1 - int'(i)) +: 32] <= merge(key_word(i));
      end
      if (|indir_req) begin
        automatic logic [INDIR_IDX_W-1:0] j = indir_index(indir_req);
        {indir[4 * j + 3], indir[4 * j + 2], indir[4 * j + 1], indir[4 * j]} <= merge(indir_word(j));
      end
    end
  end

  // Answers, in the cycle of the request (as the generated block answers its own registers).
  assign key_rd_ack   = csr_req_is_wr ? '0 : key_req;
  assign key_wr_ack   = csr_req_is_wr ? key_req : '0;
  assign indir_rd_ack = csr_req_is_wr ? '0 : indir_req;
  assign indir_wr_ack = csr_req_is_wr ? indir_req : '0;

  always_comb begin
    csr_rd_data = '0;
    if (!csr_req_is_wr) begin
      if (|key_req)        csr_rd_data = key_word(key_index(key_req));
      else if (|indir_req) csr_rd_data = indir_word(indir_index(indir_req));
    end
  end

endmodule
