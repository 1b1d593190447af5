// Descriptor prefetch for one RX buffer ring (header or payload).
//
// Reads posted descriptors (between its own fetch index and the driver's SW_IDX) from the ring
// in host memory, one 16-byte descriptor per AXI read (a narrow 16-byte transfer on a wider
// bus, two 8-byte beats on a 64-bit one), into a small cache the DMA engine pops from. A descriptor whose read returns SLVERR/DECERR, or whose buffer address is not
// aligned to the DMA width, is skipped and counted (docs/dma-formats.md).
//
// hw_idx counts descriptors consumed (popped by the engine or skipped); posted = SW_IDX - hw_idx
// is what the engine may still count on, whether already cached or not.
// While `enable` is low the ring is idle, the cache empty and hw_idx zero; a read still in
// flight when the queue is disabled is waited for and discarded.
// Reset: synchronous, active high.
module rx_desc_fetch #(
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned CACHE_DEPTH = 16
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  enable,
  input  logic [63:0]           ring_base,
  input  logic [3:0]            ring_log2,
  input  logic [15:0]           sw_idx,
  // AXI read address / data (the caller owns the ID)
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
  localparam int unsigned DB         = DMA_DATA_W / 8;
  localparam int unsigned DESC_BEATS = (DB >= 16) ? 1 : 16 / DB;
  localparam int unsigned LANE_W     = (DB > 16) ? $clog2(DB / 16) : 1;

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "rx_desc_fetch: DMA_DATA_W must be a power of two >= 64");
  end

  logic [15:0]  fetch_idx_q, hw_idx_q;
  logic         ar_valid_q;
  logic [ADDR_W-1:0] ar_addr_q;
  logic         inflight_q, discard_q, err_q;
  logic [LANE_W-1:0] lane_q;         // which 16-byte lane of a wide beat holds the descriptor
  logic [127:0] desc_q;
  logic [$clog2(DESC_BEATS+1)-1:0] rbeat_q;
  logic [15:0]  mask;
  logic [63:0]  entry_addr;
  logic         issue, r_fire, r_done, push, skip_rd, skip_align;
  logic         cache_in_ready;
  logic [127:0] desc_d;
  logic [63:0]  got_addr;

  assign mask       = (16'd1 << ring_log2) - 16'd1;
  assign entry_addr = ring_base + {44'd0, fetch_idx_q & mask, 4'd0};
  assign posted     = sw_idx - hw_idx_q;
  assign hw_idx     = hw_idx_q;

  // One read in flight at a time; its address is registered and held until accepted (AXI).
  assign issue     = enable && !inflight_q && (fetch_idx_q != sw_idx) && cache_in_ready &&
                     (cache_count < CACHE_DEPTH[$clog2(CACHE_DEPTH):0]);
  assign m_arvalid = ar_valid_q;
  assign m_araddr  = ar_addr_q;
  assign m_arlen   = 8'(DESC_BEATS - 1);
  assign m_rready  = 1'b1;
  assign r_fire    = m_rvalid && m_rready;
  assign r_done    = r_fire && m_rlast;

  // Assemble the 16 descriptor bytes from the beat(s).
  if (DB >= 16) begin : g_wide
    /* verilator lint_off UNUSEDSIGNAL */
    logic [DMA_DATA_W-1:0] lane_shifted;   // the descriptor's lane moved to the bottom
    logic unused_q;
    /* verilator lint_on UNUSEDSIGNAL */
    assign lane_shifted = m_rdata >> {lane_q, 7'd0};
    assign desc_d = lane_shifted[127:0];
    assign unused_q = ^desc_q;             // one beat holds the whole descriptor
  end else begin : g_narrow
    always_comb begin
      desc_d = desc_q;
      for (int b = 0; b < DESC_BEATS; b++) begin
        if (32'(rbeat_q) == b) desc_d[b*DMA_DATA_W +: DMA_DATA_W] = m_rdata;
      end
    end
    logic unused_lane;
    assign unused_lane = ^lane_q;   // every descriptor starts a beat at this width
  end

  assign got_addr   = desc_d[63:0];
  assign skip_rd    = r_done && !discard_q && (err_q || m_rresp[1]);
  assign skip_align = r_done && !discard_q && !skip_rd && (got_addr[$clog2(DB)-1:0] != '0);
  assign push       = r_done && !discard_q && !skip_rd && !skip_align && enable;
  assign rd_err     = skip_rd;

  logic unused;
  assign unused = m_rresp[0];
  assign desc_err   = skip_align;

  always_ff @(posedge clk) begin
    if (rst) begin
      fetch_idx_q <= '0;
      hw_idx_q    <= '0;
      inflight_q  <= 1'b0;
      ar_valid_q  <= 1'b0;
      ar_addr_q   <= '0;
      discard_q   <= 1'b0;
      err_q       <= 1'b0;
      rbeat_q     <= '0;
      lane_q      <= '0;
      desc_q      <= '0;
    end else begin
      if (m_arvalid && m_arready) begin
        ar_valid_q <= 1'b0;
      end
      if (issue) begin
        ar_valid_q  <= 1'b1;
        ar_addr_q   <= ADDR_W'(entry_addr);
        inflight_q  <= 1'b1;
        fetch_idx_q <= fetch_idx_q + 1'b1;
        rbeat_q     <= '0;
        err_q       <= 1'b0;
        lane_q      <= (DB > 16) ? LANE_W'(entry_addr >> 4) : '0;  // 16-byte lane in a wide beat
      end
      if (r_fire) begin
        desc_q  <= desc_d;
        rbeat_q <= rbeat_q + 1'b1;
        err_q   <= err_q || m_rresp[1];
      end
      if (r_done) begin
        inflight_q <= 1'b0;
        discard_q  <= 1'b0;
      end
      if (!enable) begin
        fetch_idx_q <= '0;
        hw_idx_q    <= '0;
        if (inflight_q && !r_done) discard_q <= 1'b1;
      end else begin
        hw_idx_q <= hw_idx_q + {15'd0, desc_pop && desc_valid} + {15'd0, skip_rd || skip_align};
      end
    end
  end

  sync_fifo #(.WIDTH(80), .DEPTH(CACHE_DEPTH)) u_cache (
    .clk,
    .rst,
    .clear     (!enable),
    .in_valid  (push),
    .in_ready  (cache_in_ready),
    .in_data   ({desc_d[79:64], got_addr}),
    .out_valid (desc_valid),
    .out_ready (desc_pop),
    .out_data  ({desc_buf_id, desc_addr}),
    .count     (cache_count)
  );
endmodule
