// Descriptor prefetch for every TX descriptor ring (docs/tx.md): one desc_engine
// (rtl/common/desc_engine.sv) over the NUM_TXQ rings (ring t, ARID ID_BASE + t), caching whole
// descriptors, and per queue whether a whole frame is cached.
//
// The engine reads posted descriptors into a per-queue cache the scheduler pops from, with
// the rings' state in arrays so that an idle or disabled queue costs (nearly) nothing: a
// round-robin pick among the rings that want a read issues one burst of up to MAX_BATCH
// descriptors, and R beats are unpacked for the ring their RID names. Whole 16-byte
// descriptors are cached with a flag for a descriptor whose read returned SLVERR/DECERR (its
// contents are unknown; it ends its frame with status DESC_RD_ERR).
//
// `frame_ready[t]` says queue t's cache holds a whole frame: a descriptor with EOP (or a
// failed one), or MAX_SEGS descriptors. The scheduler starts a frame only then, so a
// half-posted frame stalls its own queue only. The scheduler reads the head of the cache of
// queue `sel` (`desc`, `desc_err`) and pops only that queue.
//
// hw_idx counts descriptors consumed (popped). `run` low (queue disabled and not busy) empties
// the queue's cache and holds its indices at zero; a read still in flight then is waited for
// and discarded. `enable` low stops new reads only, so a started frame still finds its
// descriptors.
// Reset: synchronous, active high.
module tx_desc_engine
  import nic_dma_pkg::*;
#(
  parameter int unsigned NUM_TXQ     = 4,
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 5,
  parameter int unsigned ID_BASE     = 16,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  parameter int unsigned MAX_SEGS    = 16,
  localparam int unsigned QW = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1,
  localparam int unsigned CW = $clog2(CACHE_DEPTH) + 1
) (
  input  logic                       clk,
  input  logic                       rst,
  input  logic [NUM_TXQ-1:0]         enable,      // may fetch
  input  logic [NUM_TXQ-1:0]         run,         // 0: idle, cache empty, indices zero
  input  logic [NUM_TXQ-1:0][63:0]   ring_base,
  input  logic [NUM_TXQ-1:0][3:0]    ring_log2,
  input  logic [NUM_TXQ-1:0][15:0]   sw_idx,
  // AXI read address / data (ARID = ID_BASE + queue; the caller routes those R beats here)
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
  // caches
  output logic [NUM_TXQ-1:0]         desc_valid,
  output logic [NUM_TXQ-1:0]         frame_ready,
  input  logic [NUM_TXQ-1:0]         desc_pop,    // only queue `sel`
  input  logic [QW-1:0]              sel,
  output tx_desc_t                   desc,        // head of queue sel's cache
  output logic                       desc_err,    // its read failed
  // indices
  output logic [NUM_TXQ-1:0][15:0]   hw_idx
);
  localparam int unsigned RW = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1;

  initial begin
    if (CACHE_DEPTH < MAX_SEGS) $fatal(1, "tx_desc_engine: the cache must hold MAX_SEGS descriptors");
  end

  logic                       e_valid, e_err, e_push;
  logic [RW-1:0]              e_ring;
  tx_desc_t                   e_desc;
  logic [NUM_TXQ-1:0][CW-1:0] count;
  logic [0:0][RW-1:0]         head_sel;
  logic [0:0][128:0]          head_data;
  logic [NUM_TXQ-1:0]         stopping;   // the engine empties these queues' caches now

  assign head_sel[0]      = RW'(sel);
  assign {desc_err, desc} = head_data[0];

  desc_engine #(
    .NR(NUM_TXQ), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .ID_BASE(ID_BASE),
    .CACHE_DEPTH(CACHE_DEPTH), .MAX_BATCH(MAX_BATCH), .CACHE_W(129), .NHEAD(1)
  ) u_engine (
    .clk,
    .rst,
    .fetch_en    (enable),
    .run,
    .ring_base,
    .ring_log2,
    .sw_idx,
    .m_arvalid, .m_arready, .m_araddr, .m_arlen, .m_arid,
    .m_rvalid, .m_rready, .m_rid, .m_rdata, .m_rresp, .m_rlast,
    .rd_valid    (e_valid),
    .rd_ring     (e_ring),
    .rd_desc     (e_desc),
    .rd_err      (e_err),
    .rd_skip     (1'b0),
    .rd_data     ({e_err, e_desc}),
    .cache_push  (e_push),
    .desc_valid,
    .cache_count (count),
    .desc_pop,
    .head_sel,
    .head_data,
    .hw_idx,
    .stopping
  );

  // ---------------------------------------------------------------- whole frames cached
  // ends_q[t] counts queue t's cached descriptors that end a frame (EOP, or a failed read):
  // up with a push of one, down with a pop of one (the scheduler pops the head it reads).
  logic [CW-1:0]      ends_q [NUM_TXQ];
  logic               in_ends, out_ends;

  assign in_ends  = e_desc.eop || e_err;
  assign out_ends = desc.eop || desc_err;

  always_ff @(posedge clk) begin
    if (rst) begin
      for (int unsigned t = 0; t < NUM_TXQ; t++) ends_q[t] <= '0;
    end else begin
      if ((e_push && in_ends) || desc_pop != '0 || stopping != '0) begin
        for (int unsigned t = 0; t < NUM_TXQ; t++) begin
          if (stopping[t]) begin
            ends_q[t] <= '0;                        // the cache was emptied
          end else begin
            ends_q[t] <= ends_q[t] + CW'(e_push && in_ends && e_ring == RW'(t))
                                   - CW'(desc_pop[t] && desc_valid[t] && out_ends);
          end
        end
      end
    end
  end

  always_comb begin
    for (int unsigned t = 0; t < NUM_TXQ; t++) begin
      frame_ready[t] = (ends_q[t] != '0) || (32'(count[t]) >= MAX_SEGS);
    end
  end

  logic unused;
  assign unused = e_valid;
endmodule
