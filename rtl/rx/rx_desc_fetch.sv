// Descriptor prefetch for one RX buffer ring (header or payload): a desc_fetch
// (rtl/common/desc_fetch.sv) that skips bad descriptors and reports them.
//
// desc_fetch reads posted descriptors into a small cache the DMA engine pops from (batched
// bursts, one read in flight). Here a descriptor whose read returned SLVERR/DECERR (`rd_err`),
// or whose buffer address is not aligned to the DMA width (`desc_err`), is skipped and counted
// (docs/dma-formats.md); the others are cached as buffer address and buffer id.
//
// hw_idx counts descriptors consumed (popped by the engine or skipped); posted = SW_IDX - hw_idx
// is what the engine may still count on, whether already cached or not.
// While `enable` is low the ring is idle, the cache empty and hw_idx zero; a read still in
// flight when the queue is disabled is waited for and discarded.
// Reset: synchronous, active high.
module rx_desc_fetch #(
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  enable,
  input  logic [63:0]           ring_base,
  input  logic [3:0]            ring_log2,
  input  logic [15:0]           sw_idx,
  // AXI read address / data (the caller owns the ID; bursts are full-width INCR)
  output logic                  m_arvalid,
  input  logic                  m_arready,
  output logic [ADDR_W-1:0]     m_araddr,
  output logic [7:0]            m_arlen,
  input  logic                  m_rvalid,
  output logic                  m_rready,
  input  logic [DMA_DATA_W-1:0] m_rdata,
  input  logic [1:0]            m_rresp,
  input  logic                  m_rlast,
  // descriptor cache
  output logic                  desc_valid,
  input  logic                  desc_pop,
  output logic [63:0]           desc_addr,
  output logic [15:0]           desc_buf_id,
  output logic [$clog2(CACHE_DEPTH):0] cache_count,
  // indices
  output logic [15:0]           hw_idx,
  output logic [15:0]           posted,
  // events
  output logic                  rd_err,
  output logic                  desc_err
);
  localparam int unsigned DB = DMA_DATA_W / 8;

  // Parameter checks are in desc_fetch (DMA_DATA_W a power of two >= 64, MAX_BATCH range).

  logic         f_valid, f_err, f_skip, f_push;
  logic [127:0] f_desc;

  desc_fetch #(
    .DMA_DATA_W  (DMA_DATA_W),
    .ADDR_W      (ADDR_W),
    .CACHE_DEPTH (CACHE_DEPTH),
    .MAX_BATCH   (MAX_BATCH),
    .CACHE_W     (80)
  ) u_fetch (
    .clk,
    .rst,
    .enable,
    .run         (enable),
    .ring_base,
    .ring_log2,
    .sw_idx,
    .m_arvalid,
    .m_arready,
    .m_araddr,
    .m_arlen,
    .m_rvalid,
    .m_rready,
    .m_rdata,
    .m_rresp,
    .m_rlast,
    .rd_valid    (f_valid),
    .rd_desc     (f_desc),
    .rd_err      (f_err),
    .rd_skip     (f_skip),
    .rd_data     (f_desc[79:0]),
    .cache_push  (f_push),
    .desc_valid,
    .desc_pop,
    .desc_data   ({desc_buf_id, desc_addr}),
    .cache_count,
    .hw_idx
  );

  // A failed read, or a buffer address not aligned to the DMA width: skip and count.
  assign f_skip   = f_err || (f_desc[$clog2(DB)-1:0] != '0);
  assign rd_err   = f_valid && f_err;
  assign desc_err = f_valid && !f_err && (f_desc[$clog2(DB)-1:0] != '0);
  assign posted   = sw_idx - hw_idx;

  logic unused;
  assign unused = ^{f_push, f_desc[127:80]};
endmodule
