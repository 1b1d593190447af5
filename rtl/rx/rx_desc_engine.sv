// Descriptor prefetch for every RX buffer ring: one desc_engine (rtl/common/desc_engine.sv)
// over the 2 * NUM_RXQ rings, presented per queue.
//
// Each RX queue q has two rings of 16-byte descriptors in host memory, its header ring (ring
// q, ARID q) and its payload ring (ring NUM_RXQ + q, ARID NUM_RXQ + q). The engine reads posted
// descriptors into a per-ring cache the DMA engine pops from, with the rings' state in arrays
// so that an idle or disabled queue costs (nearly) nothing: a round-robin pick among the
// rings that want a read issues one burst of up to MAX_BATCH descriptors, and R beats are
// unpacked for the ring their RID names (reads of different rings overlap and may
// interleave).
//
// A descriptor whose read returned SLVERR/DECERR (`rd_err`), or whose buffer address is not
// aligned to the DMA width (`desc_err`), is skipped and counted (docs/dma-formats.md); the
// others are cached as buffer address and buffer id.
//
// Per ring, hw_idx counts descriptors consumed (popped by the DMA engine or skipped); posted =
// SW_IDX - hw_idx is what the DMA engine may still count on, whether already cached or not.
// While a queue is disabled its rings are idle, their caches empty and hw_idx zero; a read
// still in flight when the queue is disabled is waited for and its data discarded.
//
// The DMA engine reads the head of two caches: header ring of queue `hdr_sel`, payload ring of
// queue `pay_sel` (combinational, like a register-file read port).
// Reset: synchronous, active high.
module rx_desc_engine
  import nic_dma_pkg::*;
#(
  parameter int unsigned NUM_RXQ     = 8,
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 5,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  localparam int unsigned NR = 2 * NUM_RXQ,                 // rings
  localparam int unsigned CW = $clog2(CACHE_DEPTH) + 1,     // cache count width
  localparam int unsigned QW = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1
) (
  input  logic                       clk,
  input  logic                       rst,
  // per-queue ring settings (rxq_regs)
  input  logic [NUM_RXQ-1:0]         enable,
  input  logic [NUM_RXQ-1:0][63:0]   hdr_ring_base,
  input  logic [NUM_RXQ-1:0][3:0]    hdr_ring_log2,
  input  logic [NUM_RXQ-1:0][15:0]   hdr_sw_idx,
  input  logic [NUM_RXQ-1:0][63:0]   pay_ring_base,
  input  logic [NUM_RXQ-1:0][3:0]    pay_ring_log2,
  input  logic [NUM_RXQ-1:0][15:0]   pay_sw_idx,
  // AXI read address / data (ARID = ring; the caller routes R beats with RID < 2 * NUM_RXQ here)
  output logic                       m_arvalid,
  input  logic                       m_arready,
  output logic [ADDR_W-1:0]          m_araddr,
  output logic [7:0]                 m_arlen,
  output logic [ID_W-1:0]            m_arid,
  input  logic                       m_rvalid,
  output logic                       m_rready,
  input  logic [ID_W-1:0]            m_rid,
  input  logic [DMA_DATA_W-1:0]      m_rdata,
  input  logic [1:0]                 m_rresp,
  input  logic                       m_rlast,
  // caches, per queue
  output logic [NUM_RXQ-1:0]         hdr_desc_valid,
  output logic [NUM_RXQ-1:0]         pay_desc_valid,
  output logic [NUM_RXQ-1:0][CW-1:0] pay_cached,
  input  logic [NUM_RXQ-1:0]         hdr_desc_pop,
  input  logic [NUM_RXQ-1:0]         pay_desc_pop,
  // head of the header cache of queue hdr_sel and of the payload cache of queue pay_sel
  input  logic [QW-1:0]              hdr_sel,
  output logic [63:0]                hdr_desc_addr,
  output logic [15:0]                hdr_desc_id,
  input  logic [QW-1:0]              pay_sel,
  output logic [63:0]                pay_desc_addr,
  output logic [15:0]                pay_desc_id,
  // indices, per queue
  output logic [NUM_RXQ-1:0][15:0]   hdr_hw_idx,
  output logic [NUM_RXQ-1:0][15:0]   pay_hw_idx,
  output logic [NUM_RXQ-1:0][15:0]   hdr_posted,
  output logic [NUM_RXQ-1:0][15:0]   pay_posted,
  // events (at most one descriptor is unpacked per cycle)
  output logic                       rd_err,
  output logic                       desc_err
);
  localparam int unsigned RW = $clog2(NR);
  localparam int unsigned DB = DMA_DATA_W / 8;

  initial begin
    if (NUM_RXQ < 1 || NUM_RXQ > 8) $fatal(1, "rx_desc_engine: NUM_RXQ must be 1..8");
  end

  // The rings in engine order: q header, NUM_RXQ + q payload, so that the per-queue vectors
  // are the halves of the engine's per-ring ones (no per-cycle reshuffling).
  logic [NR-1:0]         ring_run, ring_valid;
  logic [NR-1:0][15:0]   ring_hw_idx;
  logic [NR-1:0][CW-1:0] ring_count;
  logic [NR-1:0]         ring_stopping;

  assign ring_run = {enable, enable};
  assign {pay_desc_valid, hdr_desc_valid} = ring_valid;
  assign {pay_hw_idx, hdr_hw_idx}         = ring_hw_idx;
  assign pay_cached = ring_count[NR-1:NUM_RXQ];

  always_comb begin
    for (int unsigned q = 0; q < NUM_RXQ; q++) begin
      hdr_posted[q] = hdr_sw_idx[q] - hdr_hw_idx[q];
      pay_posted[q] = pay_sw_idx[q] - pay_hw_idx[q];
    end
  end

  logic                  e_valid, e_err, e_skip, e_push;
  logic [RW-1:0]         e_ring;
  rx_desc_t              e_desc;
  logic [1:0][RW-1:0]    head_sel;
  logic [1:0][79:0]      head_data;

  assign head_sel = {RW'(NUM_RXQ) + RW'(pay_sel), RW'(hdr_sel)};
  assign {hdr_desc_id, hdr_desc_addr} = head_data[0];
  assign {pay_desc_id, pay_desc_addr} = head_data[1];

  desc_engine #(
    .NR(NR), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .ID_BASE(0),
    .CACHE_DEPTH(CACHE_DEPTH), .MAX_BATCH(MAX_BATCH), .CACHE_W(80), .NHEAD(2)
  ) u_engine (
    .clk,
    .rst,
    .fetch_en    (ring_run),
    .run         (ring_run),
    .ring_base   ({pay_ring_base, hdr_ring_base}),
    .ring_log2   ({pay_ring_log2, hdr_ring_log2}),
    .sw_idx      ({pay_sw_idx, hdr_sw_idx}),
    .m_arvalid, .m_arready, .m_araddr, .m_arlen, .m_arid,
    .m_rvalid, .m_rready, .m_rid, .m_rdata, .m_rresp, .m_rlast,
    .rd_valid    (e_valid),
    .rd_ring     (e_ring),
    .rd_desc     (e_desc),
    .rd_err      (e_err),
    .rd_skip     (e_skip),
    .rd_data     ({e_desc.buf_id, e_desc.addr}),
    .cache_push  (e_push),
    .desc_valid  (ring_valid),
    .cache_count (ring_count),
    .desc_pop    ({pay_desc_pop, hdr_desc_pop}),
    .head_sel,
    .head_data,
    .hw_idx      (ring_hw_idx),
    .stopping    (ring_stopping)        // nothing here to clear with the rings
  );

  // A failed read, or a buffer address not aligned to the DMA width: skip and count.
  assign e_skip   = e_err || (e_desc[$clog2(DB)-1:0] != '0);
  assign rd_err   = e_valid && e_err;
  assign desc_err = e_valid && !e_err && e_skip;

  logic unused;
  assign unused = ^{e_ring, e_push, e_desc[127:80], ring_count[NUM_RXQ-1:0], ring_stopping};   // header counts: not needed
endmodule
