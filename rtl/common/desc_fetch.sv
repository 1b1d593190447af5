// Descriptor ring prefetcher shared by rx_desc_fetch and tx_desc_fetch.
//
// Reads posted descriptors (between its own fetch index and the driver's SW_IDX) from a ring of
// 16-byte descriptors in host memory into a cache its user pops from. One AXI read burst fetches
// a batch of up to MAX_BATCH consecutive descriptors (never past the ring's end or a 4 KiB
// boundary, never more than the cache has room for, never more than one ring ahead of what was
// consumed); the beats are unpacked one whole descriptor per cycle (a 512-bit beat holds four, a
// 64-bit descriptor takes two beats), with a flag for a descriptor whose read returned
// SLVERR/DECERR. One read is in flight at a time.
//
// Each unpacked descriptor is shown on `rd_valid`/`rd_desc`/`rd_err` for one cycle. The user
// either caches `rd_data` (CACHE_W bits it derives from the descriptor), or asserts `rd_skip`
// in the same cycle to consume it without caching (counted in hw_idx at once).
//
// hw_idx counts descriptors consumed (popped or skipped). `run` low empties the cache and holds
// the indices at zero; a read still in flight then is waited for and discarded. `enable` low
// stops new reads only.
// Reset: synchronous, active high.
module desc_fetch
  import nic_pkg::*;
#(
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  parameter int unsigned CACHE_W     = 128   // bits cached per descriptor
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  enable,      // may start new reads
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
  // the descriptor unpacked this cycle
  output logic                  rd_valid,    // a descriptor of a live read (not discarded)
  output logic [127:0]          rd_desc,
  output logic                  rd_err,      // its read returned SLVERR/DECERR
  input  logic                  rd_skip,     // consume it without caching
  input  logic [CACHE_W-1:0]    rd_data,     // what to cache for it
  output logic                  cache_push,  // it is cached this cycle
  // descriptor cache
  output logic                  desc_valid,
  input  logic                  desc_pop,
  output logic [CACHE_W-1:0]    desc_data,
  output logic [$clog2(CACHE_DEPTH):0] cache_count,
  // indices
  output logic [15:0]           hw_idx
);
  localparam int unsigned DB   = DMA_DATA_W / 8;
  localparam int unsigned DPB  = (DB >= 16) ? DB / 16 : 1;       // descriptors per beat
  localparam int unsigned BPD  = (DB >= 16) ? 1 : 16 / DB;       // beats per descriptor
  localparam int unsigned LW   = (DPB > 1) ? $clog2(DPB) : 1;    // lane index width
  localparam int unsigned KW   = $clog2(MAX_BATCH + 1);

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "desc_fetch: DMA_DATA_W must be a power of two >= 64");
    if (MAX_BATCH < 1 || MAX_BATCH > CACHE_DEPTH || MAX_BATCH * 16 > 4096) begin
      $fatal(1, "desc_fetch: MAX_BATCH must be 1..CACHE_DEPTH");
    end
    if (CACHE_W < 1) $fatal(1, "desc_fetch: CACHE_W must be at least 1");
  end

  logic [15:0]       fetch_idx_q, hw_idx_q;
  logic              ar_valid_q, inflight_q, discard_q;
  logic [ADDR_W-1:0] ar_addr_q;
  logic [7:0]        ar_len_q;
  logic [KW-1:0]     left_q;          // descriptors of the current read still to unpack
  logic [LW-1:0]     lane_q;          // lane of the next descriptor in the current beat
  logic [$clog2(BPD+1)-1:0] half_q;   // 64-bit bus: beat within the descriptor
  logic [63:0]       lo_q;            // 64-bit bus: the descriptor's first 8 bytes
  logic              lo_err_q;

  // ---------------------------------------------------------------- batch size and issue
  // Descriptors to fetch next from fetch position `fidx` (the rules: nic_pkg::desc_batch).
  // Evaluated only while a fetch could start (below), so a disabled or busy queue's
  // prefetcher costs a simulator nothing here.
  // Index mask of the ring (entries - 1).
  function automatic logic [15:0] ring_mask();
    return (16'd1 << ring_log2) - 16'd1;
  endfunction

  function automatic logic [15:0] batch_size(input logic [15:0] fidx, input logic [11:0] addr_lo);
    return desc_batch(16'(MAX_BATCH), sw_idx, fidx, hw_idx_q, ring_log2, addr_lo,
                      16'(CACHE_DEPTH) - 16'(cache_count));
  endfunction

  // Ring entry `fidx` in bus address space.
  function automatic logic [63:0] entry_at(input logic [15:0] fidx);
    return ring_base + {44'd0, fidx & ring_mask(), 4'd0};
  endfunction

  assign m_arvalid = ar_valid_q;
  assign m_araddr  = ar_addr_q;
  assign m_arlen   = ar_len_q;
  assign hw_idx    = hw_idx_q;

  // ---------------------------------------------------------------- unpacking
  logic [127:0] cur;              // the descriptor at the current position
  logic         cur_ready;        // a whole descriptor is available this cycle
  logic         cur_err;
  logic         beat_done;        // the R beat is used up after this descriptor
  logic         take, cache_in_ready;

  if (DB >= 16) begin : g_wide
    // the current lane: an indexed select, not a shift of the whole beat (cheap to simulate)
    if (DPB > 1) begin : g_lanes
      assign cur = m_rdata[128 * lane_q +: 128];
    end else begin : g_one_lane
      assign cur = m_rdata[127:0];
    end
    assign cur_ready = m_rvalid;
    assign cur_err   = m_rresp[1];
    assign beat_done = (32'(lane_q) == DPB - 1) || (left_q == KW'(1));
    logic unused_narrow;
    assign unused_narrow = ^{lo_q, lo_err_q, half_q};
  end else begin : g_narrow
    assign cur       = {m_rdata, lo_q};
    assign cur_ready = m_rvalid && (32'(half_q) == BPD - 1);
    assign cur_err   = lo_err_q || m_rresp[1];
    assign beat_done = 1'b1;
    logic unused_lane;
    assign unused_lane = ^lane_q;
  end

  assign take       = inflight_q && cur_ready && (left_q != '0);
  assign rd_valid   = take && !discard_q;
  assign rd_desc    = cur;
  assign rd_err     = cur_err;
  assign cache_push = rd_valid && !rd_skip && run;
  // A beat is consumed when its last needed descriptor is taken (narrow: every beat).
  assign m_rready   = (DB >= 16) ? (take && beat_done) || (m_rvalid && left_q == '0)
                                 : m_rvalid;

  always_ff @(posedge clk) begin
    if (rst) begin
      fetch_idx_q <= '0;
      hw_idx_q    <= '0;
      inflight_q  <= 1'b0;
      ar_valid_q  <= 1'b0;
      ar_addr_q   <= '0;
      ar_len_q    <= '0;
      discard_q   <= 1'b0;
      left_q      <= '0;
      lane_q      <= '0;
      half_q      <= '0;
      lo_q        <= '0;
      lo_err_q    <= 1'b0;
    end else begin
      if (m_arvalid && m_arready) begin
        ar_valid_q <= 1'b0;
      end
      if (enable && run && !inflight_q) begin
        automatic logic [63:0] entry_addr = entry_at(fetch_idx_q);
        automatic logic [15:0] k16        = batch_size(fetch_idx_q, entry_addr[11:0]);
        if (k16 != '0) begin
          ar_valid_q  <= 1'b1;
          ar_addr_q   <= ADDR_W'(desc_araddr(entry_addr, DB));
          ar_len_q    <= desc_arlen(entry_addr[11:0], k16, DB);
          lane_q      <= LW'(desc_lane(entry_addr[9:0], DB));
          half_q      <= '0;
          left_q      <= KW'(k16);
          inflight_q  <= 1'b1;
          fetch_idx_q <= fetch_idx_q + k16;
        end
      end
      // Unpack.
      if (DB < 16 && m_rvalid && m_rready) begin
        lo_q     <= m_rdata[63:0];
        lo_err_q <= (32'(half_q) == 0) ? m_rresp[1] : lo_err_q || m_rresp[1];
        half_q   <= (32'(half_q) == BPD - 1) ? '0 : half_q + 1'b1;
      end
      if (take) begin
        left_q <= left_q - 1'b1;
        lane_q <= beat_done ? '0 : lane_q + 1'b1;
      end
      if (m_rvalid && m_rready && m_rlast) begin
        inflight_q <= 1'b0;
        discard_q  <= 1'b0;
      end
      if (!run) begin
        fetch_idx_q <= '0;
        hw_idx_q    <= '0;
        if (inflight_q && !(m_rvalid && m_rready && m_rlast)) discard_q <= 1'b1;
      end else begin
        hw_idx_q <= hw_idx_q + {15'd0, desc_pop && desc_valid} + {15'd0, rd_valid && rd_skip};
      end
    end
  end

  // ---------------------------------------------------------------- cache
  sync_fifo #(.WIDTH(CACHE_W), .DEPTH(CACHE_DEPTH)) u_cache (
    .clk,
    .rst,
    .clear     (!run),
    .in_valid  (cache_push),
    .in_ready  (cache_in_ready),
    .in_data   (rd_data),
    .out_valid (desc_valid),
    .out_ready (desc_pop),
    .out_data  (desc_data),
    .count     (cache_count)
  );

  logic unused;
  assign unused = ^{cache_in_ready, m_rresp[0]};
endmodule
