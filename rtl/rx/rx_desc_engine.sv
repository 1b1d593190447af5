// Descriptor prefetch for every RX buffer ring: one engine, per-ring state in small arrays.
//
// Each RX queue q has two rings of 16-byte descriptors in host memory, its header ring (ring
// 2q) and its payload ring (ring 2q+1). For each ring the engine reads posted descriptors
// (between its fetch index and the driver's SW_IDX) into a per-ring cache that the DMA
// engine pops from, as a NIC with many queues does: the state of a ring is a few words in a
// RAM-like array, and only the ring being fetched or unpacked is computed in a cycle, so an
// idle or disabled queue costs (nearly) nothing, in silicon and in a simulator.
//
// Fetching: a ring wants a read when its queue is enabled, no read of it is in flight, the
// driver posted descriptors past its fetch index, its cache has room and it is less than a
// ring ahead of what was consumed. Among the rings that want one, a round-robin pick issues
// one AXI read burst (ARID = ring number) of a batch of up to MAX_BATCH consecutive
// descriptors, never past the ring's end or a 4 KiB boundary, never more than the cache has
// room for, never more than one ring ahead of what was consumed. One read per ring is in
// flight at a time; reads of different rings may overlap, and their beats may interleave.
//
// Unpacking: one whole descriptor per cycle from the R beat of ring `m_rid` (a 512-bit beat
// holds four, a 64-bit descriptor takes two beats). A descriptor whose read returned
// SLVERR/DECERR (`rd_err`), or whose buffer address is not aligned to the DMA width
// (`desc_err`), is skipped and counted (docs/dma-formats.md); the others are cached as buffer
// address and buffer id.
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
  import nic_pkg::*;
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
  localparam int unsigned DB   = DMA_DATA_W / 8;
  localparam int unsigned DPB  = (DB >= 16) ? DB / 16 : 1;       // descriptors per beat
  localparam int unsigned BPD  = (DB >= 16) ? 1 : 16 / DB;       // beats per descriptor
  localparam int unsigned LW   = (DPB > 1) ? $clog2(DPB) : 1;    // lane index width
  localparam int unsigned HW   = $clog2(BPD + 1);                // beat-in-descriptor width
  localparam int unsigned KW   = $clog2(MAX_BATCH + 1);
  localparam int unsigned AW   = $clog2(CACHE_DEPTH);
  localparam int unsigned RW   = $clog2(NR);                     // ring index width
  localparam int unsigned EW   = 80;                             // cached: {buf_id, addr}

  initial begin
    if (NUM_RXQ < 1 || NUM_RXQ > 8) $fatal(1, "rx_desc_engine: NUM_RXQ must be 1..8");
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "rx_desc_engine: DMA_DATA_W must be a power of two >= 64");
    if (CACHE_DEPTH < 2 || (CACHE_DEPTH & (CACHE_DEPTH - 1)) != 0) begin
      $fatal(1, "rx_desc_engine: CACHE_DEPTH must be a power of two >= 2");
    end
    if (MAX_BATCH < 1 || MAX_BATCH > CACHE_DEPTH) $fatal(1, "rx_desc_engine: MAX_BATCH must be 1..CACHE_DEPTH");
    if ((1 << ID_W) < NR) $fatal(1, "rx_desc_engine: ID_W too narrow for one ARID per ring");
  end

  // ---------------------------------------------------------------- per-ring state
  logic [15:0]       fetch_idx_q [NR];
  logic [15:0]       hw_idx_q    [NR];
  logic [AW:0]       wr_ptr_q    [NR];    // cache write / read pointers (one wrap bit)
  logic [AW:0]       rd_ptr_q    [NR];
  logic [KW-1:0]     left_q      [NR];    // descriptors of the ring's read still to unpack
  logic [LW-1:0]     lane_q      [NR];    // lane of its next descriptor in the current beat
  logic [HW-1:0]     half_q      [NR];    // 64-bit bus: beat within the descriptor
  logic [63:0]       lo_q        [NR];    // 64-bit bus: the descriptor's first 8 bytes
  logic [NR-1:0]     lo_err_q;
  logic [NR-1:0]     inflight_q, discard_q;
  logic [EW-1:0]     cache_q     [NR * CACHE_DEPTH];
  logic [NUM_RXQ-1:0] enable_q;           // enable one cycle ago: a falling edge clears a queue

  // Ring r's settings (constant r: no select logic).
  function automatic logic [15:0] sw_of(input int unsigned r);
    return (r % 2 == 1) ? pay_sw_idx[r / 2] : hdr_sw_idx[r / 2];
  endfunction
  function automatic logic [3:0] log2_of(input int unsigned r);
    return (r % 2 == 1) ? pay_ring_log2[r / 2] : hdr_ring_log2[r / 2];
  endfunction

  // ---------------------------------------------------------------- outputs per queue
  logic [AW:0] count [NR];
  always_comb begin
    for (int unsigned r = 0; r < NR; r++) count[r] = wr_ptr_q[r] - rd_ptr_q[r];
    for (int unsigned q = 0; q < NUM_RXQ; q++) begin
      hdr_desc_valid[q] = count[2 * q] != '0;
      pay_desc_valid[q] = count[2 * q + 1] != '0;
      pay_cached[q]     = CW'(count[2 * q + 1]);
      hdr_hw_idx[q]     = hw_idx_q[2 * q];
      pay_hw_idx[q]     = hw_idx_q[2 * q + 1];
      hdr_posted[q]     = hdr_sw_idx[q] - hw_idx_q[2 * q];
      pay_posted[q]     = pay_sw_idx[q] - hw_idx_q[2 * q + 1];
    end
  end

  // Heads read by the DMA engine.
  logic [RW-1:0] hdr_ring, pay_ring;
  assign hdr_ring = RW'({hdr_sel, 1'b0});
  assign pay_ring = RW'({pay_sel, 1'b1});
  assign {hdr_desc_id, hdr_desc_addr} = cache_q[{hdr_ring, rd_ptr_q[hdr_ring][AW-1:0]}];
  assign {pay_desc_id, pay_desc_addr} = cache_q[{pay_ring, rd_ptr_q[pay_ring][AW-1:0]}];

  // ---------------------------------------------------------------- which ring to fetch
  // A ring wants a read when a batch of at least one descriptor is possible (see batch_size):
  // its queue enabled, nothing in flight, something posted, cache room, less than a ring ahead.
  logic          ar_valid_q;
  logic [NR-1:0] want;
  logic          can_issue, pick_valid;
  logic [RW-1:0] pick;

  assign can_issue = !ar_valid_q || m_arready;

  always_comb begin
    want = '0;
    if (can_issue) begin
      for (int unsigned r = 0; r < NR; r++) begin
        if (enable[r / 2] && !inflight_q[r] && sw_of(r) != fetch_idx_q[r]) begin
          automatic logic [15:0] ahead = fetch_idx_q[r] - hw_idx_q[r];
          want[r] = (count[r] != (AW + 1)'(CACHE_DEPTH)) && (ahead < (16'd1 << log2_of(r)));
        end
      end
    end
  end

  rr_arbiter #(.N(NR)) u_pick (
    .clk,
    .rst,
    .req       (want),
    .accept    (1'b1),       // the pick is issued in the cycle it is made
    .gnt_valid (pick_valid),
    .gnt_idx   (pick)
  );

  // ---------------------------------------------------------------- batch size
  // The batch rules are nic_pkg::desc_batch (shared with desc_fetch).
  function automatic logic [15:0] batch_size(input logic [RW-1:0] r, input logic [11:0] addr_lo);
    return desc_batch(16'(MAX_BATCH), r[0] ? pay_sw_idx[QW'(r >> 1)] : hdr_sw_idx[QW'(r >> 1)],
                      fetch_idx_q[r], hw_idx_q[r],
                      r[0] ? pay_ring_log2[QW'(r >> 1)] : hdr_ring_log2[QW'(r >> 1)], addr_lo,
                      16'(CACHE_DEPTH) - 16'(count[r]));
  endfunction

  // Ring r's entry at its fetch index, in bus address space.
  function automatic logic [63:0] entry_at(input logic [RW-1:0] r);
    logic [3:0]  l2;
    logic [63:0] base;
    l2   = r[0] ? pay_ring_log2[QW'(r >> 1)] : hdr_ring_log2[QW'(r >> 1)];
    base = r[0] ? pay_ring_base[QW'(r >> 1)] : hdr_ring_base[QW'(r >> 1)];
    return base + {44'd0, fetch_idx_q[r] & ((16'd1 << l2) - 16'd1), 4'd0};
  endfunction

  // ---------------------------------------------------------------- unpacking
  // The R beat belongs to ring m_rid; only that ring's unpack state is read.
  logic [RW-1:0]  rr;                 // the beat's ring
  logic           r_mine;             // the beat is for an RX ring
  logic [127:0]   cur;                // the descriptor at the current position
  logic           cur_ready, cur_err, beat_done, take, skip, push;

  assign rr     = RW'(m_rid);
  assign r_mine = m_rvalid && (32'(m_rid) < NR);

  if (DB >= 16) begin : g_wide
    if (DPB > 1) begin : g_lanes
      assign cur = m_rdata[128 * lane_q[rr] +: 128];   // an indexed select, not a shift
    end else begin : g_one_lane
      assign cur = m_rdata[127:0];
    end
    assign cur_ready = r_mine;
    assign cur_err   = m_rresp[1];
    assign beat_done = (32'(lane_q[rr]) == DPB - 1) || (left_q[rr] == KW'(1));
    logic unused_narrow;   // the 64-bit bus's state, constant here
    assign unused_narrow = ^{lo_q[rr], lo_err_q, half_q[rr]};
  end else begin : g_narrow
    assign cur       = {m_rdata, lo_q[rr]};
    assign cur_ready = r_mine && (32'(half_q[rr]) == BPD - 1);
    assign cur_err   = lo_err_q[rr] || m_rresp[1];
    assign beat_done = 1'b1;
    logic unused_lane;     // one descriptor per two or more beats: no lanes
    assign unused_lane = ^lane_q[rr];
  end

  assign take     = cur_ready && inflight_q[rr] && (left_q[rr] != '0);
  assign skip     = cur_err || (cur[$clog2(DB)-1:0] != '0);
  assign push     = take && !discard_q[rr] && !skip && enable[QW'(rr >> 1)] && (count[rr] != (AW + 1)'(CACHE_DEPTH));
  assign rd_err   = take && !discard_q[rr] && cur_err;
  assign desc_err = take && !discard_q[rr] && !cur_err && skip;
  // A beat is consumed when its last needed descriptor is taken (narrow: every beat); a beat
  // with nothing left to take is consumed at once.
  assign m_rready = (DB >= 16) ? ((take && beat_done) || (r_mine && left_q[rr] == '0)) : r_mine;

  assign m_arvalid = ar_valid_q;

  // ---------------------------------------------------------------- state
  logic [ADDR_W-1:0] ar_addr_q;
  logic [7:0]        ar_len_q;
  logic [RW-1:0]     ar_ring_q;
  assign m_araddr = ar_addr_q;
  assign m_arlen  = ar_len_q;
  assign m_arid   = ID_W'(ar_ring_q);

  logic r_done;                       // the beat ends its ring's read
  assign r_done = r_mine && m_rready && m_rlast;

  always_ff @(posedge clk) begin
    if (rst) begin
      ar_valid_q <= 1'b0;
      ar_addr_q  <= '0;
      ar_len_q   <= '0;
      ar_ring_q  <= '0;
      inflight_q <= '0;
      discard_q  <= '0;
      lo_err_q   <= '0;
      enable_q   <= '0;
      for (int unsigned r = 0; r < NR; r++) begin
        fetch_idx_q[r] <= '0;
        hw_idx_q[r]    <= '0;
        wr_ptr_q[r]    <= '0;
        rd_ptr_q[r]    <= '0;
        left_q[r]      <= '0;
        lane_q[r]      <= '0;
        half_q[r]      <= '0;
        lo_q[r]        <= '0;
      end
    end else begin
      enable_q <= enable;
      if (ar_valid_q && m_arready) ar_valid_q <= 1'b0;

      // Issue the picked ring's read. A ring that wants one has a batch of at least one
      // descriptor (rings are 16-byte aligned, so an entry is never within 16 bytes of a
      // 4 KiB boundary: want above is exactly batch_size != 0).
      if (pick_valid) begin
        automatic logic [63:0] entry_addr = entry_at(pick);
        automatic logic [15:0] k16        = batch_size(pick, entry_addr[11:0]);
        ar_valid_q        <= 1'b1;
        ar_ring_q         <= pick;
        ar_addr_q         <= ADDR_W'(desc_araddr(entry_addr, DB));
        ar_len_q          <= desc_arlen(entry_addr[11:0], k16, DB);
        lane_q[pick]      <= LW'(desc_lane(entry_addr[9:0], DB));
        half_q[pick]      <= '0;
        left_q[pick]      <= KW'(k16);
        inflight_q[pick]  <= 1'b1;
        fetch_idx_q[pick] <= fetch_idx_q[pick] + k16;
      end

      // Unpack the beat of ring rr.
      if (r_mine) begin
        if (DB < 16 && m_rready) begin
          lo_q[rr]     <= m_rdata[63:0];
          lo_err_q[rr] <= (32'(half_q[rr]) == 0) ? m_rresp[1] : lo_err_q[rr] || m_rresp[1];
          half_q[rr]   <= (32'(half_q[rr]) == BPD - 1) ? '0 : half_q[rr] + 1'b1;
        end
        if (take) begin
          left_q[rr] <= left_q[rr] - 1'b1;
          lane_q[rr] <= beat_done ? '0 : lane_q[rr] + 1'b1;
        end
        if (push) begin
          cache_q[{rr, wr_ptr_q[rr][AW-1:0]}] <= {cur[79:64], cur[63:0]};
          wr_ptr_q[rr] <= wr_ptr_q[rr] + 1'b1;
        end
        if (r_done) begin
          inflight_q[rr] <= 1'b0;
          discard_q[rr]  <= 1'b0;
        end
      end

      // Consumed descriptors: popped by the DMA engine, or skipped here.
      if (hdr_desc_pop != '0 || pay_desc_pop != '0 || (desc_err || rd_err)) begin
        for (int unsigned r = 0; r < NR; r++) begin
          automatic logic popped  = ((r % 2 == 1) ? pay_desc_pop[r / 2] : hdr_desc_pop[r / 2]) && count[r] != '0;
          automatic logic skipped = (rd_err || desc_err) && rr == RW'(r);
          if (popped) rd_ptr_q[r] <= rd_ptr_q[r] + 1'b1;
          if (popped || skipped) hw_idx_q[r] <= hw_idx_q[r] + 16'(popped) + 16'(skipped);
        end
      end

      // A queue switched off: its rings' indices to zero, caches emptied, a read in flight
      // (unless it ends now) waited for and discarded. Nothing above moves them while the
      // queue stays off (a fetch needs `enable`, a push too, a pop a non-empty cache; a skip
      // needs a read not discarded), so they stay zero.
      if ((enable_q & ~enable) != '0) begin
        for (int unsigned r = 0; r < NR; r++) begin
          if (enable_q[r / 2] && !enable[r / 2]) begin
            fetch_idx_q[r] <= '0;
            hw_idx_q[r]    <= '0;
            wr_ptr_q[r]    <= '0;
            rd_ptr_q[r]    <= '0;
            if (inflight_q[r] && !(r_done && rr == RW'(r))) discard_q[r] <= 1'b1;
          end
        end
      end
    end
  end

  logic unused;
  assign unused = ^{m_rresp[0], cur[127:80]};
endmodule
