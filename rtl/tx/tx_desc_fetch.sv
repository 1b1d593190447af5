// Descriptor prefetch for one TX descriptor ring (docs/tx.md): a desc_fetch
// (rtl/common/desc_fetch.sv) that caches whole descriptors and says when a frame is cached.
//
// desc_fetch reads posted descriptors into a cache the scheduler pops from (batched bursts,
// one read in flight): whole 16-byte descriptors with a flag for a descriptor whose read
// returned SLVERR/DECERR (its contents are unknown; it ends its frame with status DESC_RD_ERR).
//
// `frame_ready` says the cache holds a whole frame: a descriptor with EOP (or a failed one),
// or MAX_SEGS descriptors. The scheduler starts a frame only then, so a half-posted frame
// stalls its own queue only.
//
// hw_idx counts descriptors consumed (popped). `run` low (queue disabled and not busy) empties
// the cache and holds the indices at zero; a read still in flight then is waited for and
// discarded. `enable` low stops new reads only, so a started frame still finds its
// descriptors.
// Reset: synchronous, active high.
module tx_desc_fetch #(
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  parameter int unsigned MAX_SEGS    = 16
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  enable,      // may fetch
  input  logic                  run,         // 0: idle, cache empty, indices zero
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
  output logic [127:0]          desc,
  output logic                  desc_err,    // the descriptor's read failed
  output logic                  frame_ready,
  // indices
  output logic [15:0]           hw_idx
);
  localparam int unsigned CW = $clog2(CACHE_DEPTH) + 1;

  // The other parameter checks are in desc_fetch.
  initial begin
    if (CACHE_DEPTH < MAX_SEGS) $fatal(1, "tx_desc_fetch: the cache must hold MAX_SEGS descriptors");
  end

  logic          f_valid, f_err, f_push;
  logic [127:0]  f_desc;
  logic [128:0]  cache_out;
  logic [CW-1:0] cache_count;

  desc_fetch #(
    .DMA_DATA_W  (DMA_DATA_W),
    .ADDR_W      (ADDR_W),
    .CACHE_DEPTH (CACHE_DEPTH),
    .MAX_BATCH   (MAX_BATCH),
    .CACHE_W     (129)
  ) u_fetch (
    .clk,
    .rst,
    .enable,
    .run,
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
    .rd_skip     (1'b0),
    .rd_data     ({f_err, f_desc}),
    .cache_push  (f_push),
    .desc_valid,
    .desc_pop,
    .desc_data   (cache_out),
    .cache_count,
    .hw_idx
  );

  // ---------------------------------------------------------------- whole frames cached
  // ends_q counts cached descriptors that end a frame (EOP, or a failed read).
  logic [CW-1:0] ends_q;
  logic          in_ends, out_ends;

  assign in_ends  = f_desc[80] || f_err;
  assign out_ends = cache_out[80] || cache_out[128];

  always_ff @(posedge clk) begin
    if (rst || !run) begin
      ends_q <= '0;
    end else begin
      ends_q <= ends_q + CW'(f_push && in_ends) - CW'(desc_pop && desc_valid && out_ends);
    end
  end

  assign desc        = cache_out[127:0];
  assign desc_err    = cache_out[128];
  assign frame_ready = (ends_q != '0) || (32'(cache_count) >= MAX_SEGS);

  logic unused;
  assign unused = f_valid;
endmodule
