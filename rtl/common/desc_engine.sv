// Descriptor prefetch engine for NR rings of 16-byte descriptors in host memory, with the
// state of every ring in small arrays (as NICs with many queues build it): only the ring
// being fetched and the ring being unpacked are computed in a cycle, so an idle or disabled
// ring costs (nearly) nothing, in silicon and in a simulator. rx_desc_engine (every RX
// queue's header and payload ring) is built on it; tx_desc_engine (every TX queue's ring)
// has its own cache and window but shares the read planning (desc_batch).
//
// Fetching: a ring wants a read when it may fetch (`fetch_en`) and runs, no read of it is in
// flight, software posted descriptors past its fetch index (`sw_idx`), its cache has room
// and it is less than a ring ahead of what was consumed. Two pipeline stages (for timing:
// the pick and the batch arithmetic are not in one cycle): a registered candidate ring
// (`cand_q`) is issued, when the engine's AR register is free (so at most every other
// cycle), as one AXI read burst (ARID = ID_BASE + ring) of a batch of up to MAX_BATCH
// consecutive descriptors (the rules: batch_size below), computed from the candidate's state
// in that cycle; it issues only if it still wants a read then. Meanwhile a round-robin pick
// among the other rings that want one chooses the next candidate; when none does, the
// candidate is the ring whose read ends in that cycle (a busy ring wants its next read
// right after), else the ring after the last one issued (the ring a round-robin pick would
// try first), so a ring that becomes ready is usually issued in the same cycle as with an
// unregistered pick. One read per ring is in flight at a time;
// reads of different rings may overlap and their beats may interleave.
//
// Unpacking: one whole descriptor per cycle from the R beat of ring m_rid - ID_BASE (a
// 512-bit beat holds four, a 64-bit descriptor takes two beats), shown on rd_valid/rd_ring/
// rd_desc/rd_err (rd_err: its read returned SLVERR/DECERR). In the same cycle the user either
// gives what to cache for it (rd_data, CACHE_W bits) or asserts rd_skip to consume it
// without caching (counted in hw_idx at once).
//
// Per ring, hw_idx counts descriptors consumed (popped or skipped). `run` low empties the
// ring's cache and holds its indices at zero (cleared when `run` falls, then nothing moves
// them); a read still in flight then is waited for and its data discarded. `fetch_en` low
// only stops new reads. The user reads the heads of NHEAD caches through `head_sel`/
// `head_data` (combinational, like register-file read ports) and pops with `desc_pop`.
// Reset: synchronous, active high (the candidate ring too; any candidate is safe, since its
// read is planned from its state in the cycle it issues).
module desc_engine
  import nic_pkg::*;
#(
  parameter int unsigned NR          = 2,      // rings
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 5,
  parameter int unsigned ID_BASE     = 0,      // ARID of ring 0; ring r uses ID_BASE + r
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  parameter int unsigned CACHE_W     = 128,    // bits cached per descriptor
  parameter int unsigned NHEAD       = 1,      // cache-head read ports
  localparam int unsigned RW = (NR > 1) ? $clog2(NR) : 1,
  localparam int unsigned CW = $clog2(CACHE_DEPTH) + 1
) (
  input  logic                          clk,
  input  logic                          rst,
  // per-ring settings
  input  logic [NR-1:0]                 fetch_en,    // may start reads
  input  logic [NR-1:0]                 run,         // 0: idle, cache empty, indices zero
  input  logic [NR-1:0][63:0]           ring_base,
  input  logic [NR-1:0][3:0]            ring_log2,
  input  logic [NR-1:0][15:0]           sw_idx,
  // AXI read address / data (the caller routes R beats with this engine's IDs here)
  output logic                          m_arvalid,
  input  logic                          m_arready,
  output logic [ADDR_W-1:0]             m_araddr,
  output logic [7:0]                    m_arlen,
  output logic [ID_W-1:0]               m_arid,
  input  logic                          m_rvalid,
  output logic                          m_rready,
  input  logic [ID_W-1:0]               m_rid,
  input  logic [DMA_DATA_W-1:0]         m_rdata,
  input  logic [1:0]                    m_rresp,
  input  logic                          m_rlast,
  // the descriptor unpacked this cycle
  output logic                          rd_valid,    // of a live read (not discarded)
  output logic [RW-1:0]                 rd_ring,
  output logic [127:0]                  rd_desc,
  output logic                          rd_err,      // its read returned SLVERR/DECERR
  input  logic                          rd_skip,     // consume it without caching
  input  logic [CACHE_W-1:0]            rd_data,     // what to cache for it
  output logic                          cache_push,  // it is cached this cycle
  // caches
  output logic [NR-1:0]                 desc_valid,
  output logic [NR-1:0][CW-1:0]         cache_count,
  input  logic [NR-1:0]                 desc_pop,
  input  logic [NHEAD-1:0][RW-1:0]      head_sel,
  output logic [NHEAD-1:0][CACHE_W-1:0] head_data,
  // indices
  output logic [NR-1:0][15:0]           hw_idx,
  output logic [NR-1:0]                 stopping     // run fell this cycle: the ring is cleared
);
  localparam int unsigned DB   = DMA_DATA_W / 8;
  localparam int unsigned DPB  = (DB >= 16) ? DB / 16 : 1;       // descriptors per beat
  localparam int unsigned BPD  = (DB >= 16) ? 1 : 16 / DB;       // beats per descriptor
  localparam int unsigned LW   = (DPB > 1) ? $clog2(DPB) : 1;    // lane index width
  localparam int unsigned HW   = $clog2(BPD + 1);                // beat-in-descriptor width
  localparam int unsigned KW   = $clog2(MAX_BATCH + 1);
  localparam int unsigned AW   = $clog2(CACHE_DEPTH);

  initial begin
    if (NR < 1) $fatal(1, "desc_engine: NR must be at least 1");
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "desc_engine: DMA_DATA_W must be a power of two >= 64");
    if (CACHE_DEPTH < 2 || (CACHE_DEPTH & (CACHE_DEPTH - 1)) != 0) begin
      $fatal(1, "desc_engine: CACHE_DEPTH must be a power of two >= 2");
    end
    if (MAX_BATCH < 1 || MAX_BATCH > CACHE_DEPTH || MAX_BATCH * 16 > 4096) begin
      $fatal(1, "desc_engine: MAX_BATCH must be 1..CACHE_DEPTH and at most 256 (a 4 KiB read)");
    end
    if (ID_W < 1 || ID_W > 16 || ID_BASE + NR > (1 << ID_W)) $fatal(1, "desc_engine: ID_W must be 1..16 and give one ARID per ring");
    if (CACHE_W < 1 || NHEAD < 1) $fatal(1, "desc_engine: CACHE_W and NHEAD must be at least 1");
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
  logic [CACHE_W-1:0] cache_q    [NR * CACHE_DEPTH];
  logic [NR-1:0]     run_q;               // run one cycle ago: a falling edge clears a ring

  assign stopping = run_q & ~run;

  // ---------------------------------------------------------------- caches and indices
  logic [AW:0] count [NR];
  always_comb begin
    for (int unsigned r = 0; r < NR; r++) begin
      count[r]       = wr_ptr_q[r] - rd_ptr_q[r];
      desc_valid[r]  = count[r] != '0;
      cache_count[r] = CW'(count[r]);
      hw_idx[r]      = hw_idx_q[r];
    end
  end

  // A cache slot's index: ring r, slot s (NR need not be a power of two).
  function automatic int unsigned slot(input logic [RW-1:0] r, input logic [AW-1:0] s);
    return 32'(r) * CACHE_DEPTH + 32'(s);
  endfunction

  always_comb begin
    for (int unsigned h = 0; h < NHEAD; h++) begin
      head_data[h] = cache_q[slot(head_sel[h], rd_ptr_q[head_sel[h]][AW-1:0])];
    end
  end

  // ---------------------------------------------------------------- which ring to fetch
  // A ring wants a read exactly when batch_size would give at least one descriptor: it may
  // fetch and runs, nothing in flight, something posted, cache room, less than a ring ahead
  // (rings are 16-byte aligned, so an entry is never within 16 bytes of a 4 KiB boundary;
  // the issue below still checks the batch is not empty). The next candidate is chosen in a
  // cycle the engine's AR register is free (the candidate is then issued or found not ready
  // and replaced): it depends only on this engine's registers, not on m_arready (a path from
  // the AXI port through the pick and the batch arithmetic would be long), at the cost of
  // one cycle between two reads of this engine. The candidate in place is not picked again.
  logic          ar_valid_q;
  logic [NR-1:0] want;
  logic          can_issue, pick_valid;
  logic [RW-1:0] pick;
  logic [RW-1:0] cand_q;              // the ring issued next (stage 2 of the fetch pipeline)
  logic [RW-1:0] last_q;              // the ring issued last

  assign can_issue = !ar_valid_q;

  always_comb begin
    want = '0;
    if (can_issue) begin
      for (int unsigned r = 0; r < NR; r++) begin
        if (fetch_en[r] && run[r] && !inflight_q[r] && sw_idx[r] != fetch_idx_q[r] && cand_q != RW'(r)) begin
          automatic logic [15:0] ahead = fetch_idx_q[r] - hw_idx_q[r];
          want[r] = (count[r] != (AW + 1)'(CACHE_DEPTH)) && (ahead < (16'd1 << ring_log2[r]));
        end
      end
    end
  end

  rr_arbiter #(.N(NR)) u_pick (
    .clk,
    .rst,
    .req       (want),
    .accept    (1'b1),       // the pick becomes the candidate in the cycle it is made
    .gnt_valid (pick_valid),
    .gnt_idx   (pick)
  );

  // ---------------------------------------------------------------- unpacking
  // The R beat belongs to ring rr; only that ring's unpack state is read.
  logic [RW-1:0]  rr;
  logic [127:0]   cur;                // the descriptor at the current position
  logic           cur_ready, cur_err, beat_done, take, push;

  assign rr = RW'(m_rid - ID_W'(ID_BASE));

  if (DB >= 16) begin : g_wide
    if (DPB > 1) begin : g_lanes
      assign cur = m_rdata[128 * lane_q[rr] +: 128];   // an indexed select, not a shift
    end else begin : g_one_lane
      assign cur = m_rdata[127:0];
    end
    assign cur_ready = m_rvalid;
    assign cur_err   = m_rresp[1];
    assign beat_done = (32'(lane_q[rr]) == DPB - 1) || (left_q[rr] == KW'(1));
    logic unused_narrow;   // the 64-bit bus's state, constant here
    assign unused_narrow = ^{lo_q[rr], lo_err_q, half_q[rr]};
  end else begin : g_narrow
    assign cur       = {m_rdata, lo_q[rr]};
    assign cur_ready = m_rvalid && (32'(half_q[rr]) == BPD - 1);
    assign cur_err   = lo_err_q[rr] || m_rresp[1];
    assign beat_done = 1'b1;
    logic unused_lane;     // one descriptor per two or more beats: no lanes
    assign unused_lane = ^lane_q[rr];
  end

  assign take       = cur_ready && inflight_q[rr] && (left_q[rr] != '0);
  assign rd_valid   = take && !discard_q[rr];
  assign rd_ring    = rr;
  assign rd_desc    = cur;
  assign rd_err     = cur_err;
  assign push       = rd_valid && !rd_skip && run[rr] && (count[rr] != (AW + 1)'(CACHE_DEPTH));
  assign cache_push = push;
  // A beat is consumed when its last needed descriptor is taken (narrow: every beat); a beat
  // with nothing left to take (none in flight for its ring) is consumed at once.
  assign m_rready = (DB >= 16) ? ((take && beat_done) || (m_rvalid && (!inflight_q[rr] || left_q[rr] == '0)))
                               : m_rvalid;

  // ---------------------------------------------------------------- state
  logic [ADDR_W-1:0] ar_addr_q;
  logic [7:0]        ar_len_q;
  logic [RW-1:0]     ar_ring_q;
  assign m_arvalid = ar_valid_q;
  assign m_araddr  = ar_addr_q;
  assign m_arlen   = ar_len_q;
  assign m_arid    = ID_W'(ID_BASE) + ID_W'(ar_ring_q);

  logic r_done;                       // the beat ends its ring's read
  assign r_done = m_rvalid && m_rready && m_rlast;

  // ---------------------------------------------------------------- read planning
  // The candidate ring's next entry and batch; its read: the bus word holding the first
  // descriptor (a 64-bit bus reads the descriptor itself, two beats each), the burst length
  // to the last one's end, and the 16-byte lane of the first one in the first beat. Only
  // the entry's low 12 bits feed the batch (the 4 KiB bound); the full 64-bit sum goes to
  // the AR register alone.
  logic [63:0]   cand_entry;
  logic [KW-1:0] cand_k;
  logic [16:0]   cand_span;           // bytes from the first beat's start to the last descriptor's end
  logic          cand_ready;          // the candidate may fetch now (the rest is in cand_k != 0)
  assign cand_entry = ring_base[cand_q] + {44'd0, fetch_idx_q[cand_q] & ((16'd1 << ring_log2[cand_q]) - 16'd1), 4'd0};
  assign cand_ready = fetch_en[cand_q] && run[cand_q] && !inflight_q[cand_q];
  assign cand_span  = ({5'd0, cand_entry[11:0]} & 17'(DB - 1)) + {13'(cand_k), 4'd0};

  // Descriptors to fetch next (rtl/common/desc_batch.sv): at most MAX_BATCH, what software
  // posted, what is left before the ring wraps and before the next 4 KiB boundary, what the
  // cache has room for, and never more than one ring ahead of what was consumed, whatever
  // SW_IDX says. No cut at beat boundaries: a beat's descriptors are unpacked one at a time.
  desc_batch #(.MAX_BATCH(MAX_BATCH), .BEAT(1)) u_batch (
    .sw      (sw_idx[cand_q]),
    .fidx    (fetch_idx_q[cand_q]),
    .hw      (hw_idx_q[cand_q]),
    .log2    (ring_log2[cand_q]),
    .addr_lo (cand_entry[11:0]),
    .room    (16'(CACHE_DEPTH) - 16'(count[cand_q])),
    .k       (cand_k)
  );

  // The candidate's read is issued this cycle: exactly when cand_k != 0 (every bound at least
  // one: something posted, less than a ring ahead, cache room, not at a 4 KiB boundary), but
  // from those conditions directly, in parallel with the batch arithmetic.
  logic issue;
  logic cand_posted, cand_in_ring, cand_room, cand_before_4k;
  always_comb begin
    automatic logic [15:0] ahead = fetch_idx_q[cand_q] - hw_idx_q[cand_q];
    cand_posted    = sw_idx[cand_q] != fetch_idx_q[cand_q];
    cand_in_ring   = ahead < (16'd1 << ring_log2[cand_q]);
    cand_room      = count[cand_q] != (AW + 1)'(CACHE_DEPTH);
    cand_before_4k = !(cand_entry[11:4] == 8'hff && cand_entry[3:0] != 4'd0);
  end
  assign issue = can_issue && cand_ready && cand_posted && cand_in_ring && cand_room && cand_before_4k;

  // The next candidate: chosen when the AR register is free (the candidate is used now).
  always_ff @(posedge clk) begin
    if (rst) begin
      cand_q <= '0;
      last_q <= RW'(NR - 1);
    end else if (can_issue) begin
      automatic logic [RW-1:0] last_n = issue ? cand_q : last_q;
      last_q <= last_n;
      // Nothing else wants a read: the ring whose read ends now (it may want the next one
      // in the next cycle, as a ring kept busy does), else the one after the last issued.
      cand_q <= pick_valid ? pick : (r_done && 32'(rr) < NR) ? rr : ((32'(last_n) == NR - 1) ? '0 : last_n + 1'b1);
    end
  end

  // Engine-wide state and per-ring flags.
  always_ff @(posedge clk) begin
    if (rst) begin
      ar_valid_q <= 1'b0;
      ar_addr_q  <= '0;
      ar_len_q   <= '0;
      ar_ring_q  <= '0;
      inflight_q <= '0;
      discard_q  <= '0;
      lo_err_q   <= '0;
      run_q      <= '0;
    end else begin
      automatic logic [NR-1:0] inflight_n = inflight_q;
      automatic logic [NR-1:0] discard_n  = discard_q;
      run_q <= run;
      if (ar_valid_q && m_arready) ar_valid_q <= 1'b0;
      // Issue the picked ring's read.
      if (issue) begin
        ar_valid_q         <= 1'b1;
        ar_ring_q          <= cand_q;
        ar_addr_q          <= (DB >= 16) ? ADDR_W'(cand_entry & ~64'(DB - 1)) : ADDR_W'(cand_entry);
        ar_len_q           <= (DB >= 16) ? 8'((cand_span + 17'(DB - 1)) / 17'(DB) - 17'd1)
                                         : 8'(16'(cand_k) * 16'(BPD) - 16'd1);
        inflight_n[cand_q] = 1'b1;
      end
      if (DB < 16 && m_rvalid && m_rready) begin
        lo_err_q[rr] <= (32'(half_q[rr]) == 0) ? m_rresp[1] : lo_err_q[rr] || m_rresp[1];
      end
      if (r_done) begin
        inflight_n[rr] = 1'b0;
        discard_n[rr]  = 1'b0;
      end
      // A ring stopped with a read in flight (unless it ends now): its data is discarded.
      discard_n  = discard_n | (stopping & inflight_n);
      inflight_q <= inflight_n;
      discard_q  <= discard_n;
    end
  end

  // The unpack state of a ring: loaded when its read is issued, stepped by its beats (no
  // reset needed: it is used only while the ring's read is in flight).
  always_ff @(posedge clk) begin
    if (issue) begin
      lane_q[cand_q] <= (DPB > 1) ? LW'(cand_entry >> 4) : '0;   // entry bits [log2(DB)-1:4]
      half_q[cand_q] <= '0;
      left_q[cand_q] <= cand_k;
    end
    if (m_rvalid) begin
      if (DB < 16 && m_rready) begin
        lo_q[rr]   <= m_rdata[63:0];
        half_q[rr] <= (32'(half_q[rr]) == BPD - 1) ? '0 : half_q[rr] + 1'b1;
      end
      if (take) begin
        left_q[rr] <= left_q[rr] - 1'b1;
        lane_q[rr] <= beat_done ? '0 : lane_q[rr] + 1'b1;
      end
    end
    if (push) cache_q[slot(rr, wr_ptr_q[rr][AW-1:0])] <= rd_data;
  end

  // Per-ring indices and cache pointers: one write per ring and array, in one loop that runs
  // only in a cycle where some ring's indices can move (each write site of an array costs a
  // simulator a test every cycle, so there are as few as possible). Reset, or a ring stopped:
  // indices to zero and the cache emptied; nothing moves them while it stays stopped (a fetch
  // needs `run`, a push or skip too, a pop a non-empty cache).
  logic skip_now;
  assign skip_now = rd_valid && rd_skip;

  always_ff @(posedge clk) begin
    if (rst || issue || push || skip_now || desc_pop != '0 || stopping != '0) begin
      for (int unsigned r = 0; r < NR; r++) begin
        automatic logic stop    = rst || stopping[r];
        automatic logic fetched = issue && cand_q == RW'(r);
        automatic logic pushed  = push && rr == RW'(r);
        automatic logic popped  = desc_pop[r] && count[r] != '0;
        automatic logic skipped = skip_now && rr == RW'(r) && run[r];
        if (stop || fetched)            fetch_idx_q[r] <= stop ? '0 : fetch_idx_q[r] + 16'(cand_k);
        if (stop || pushed)             wr_ptr_q[r]    <= stop ? '0 : wr_ptr_q[r] + 1'b1;
        if (stop || popped)             rd_ptr_q[r]    <= stop ? '0 : rd_ptr_q[r] + 1'b1;
        if (stop || popped || skipped)  hw_idx_q[r]    <= stop ? '0 : hw_idx_q[r] + 16'(popped) + 16'(skipped);
      end
    end
  end

  logic unused;
  assign unused = m_rresp[0];
endmodule
