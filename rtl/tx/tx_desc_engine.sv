// TX descriptor fetch (docs/tx.md): every TX queue's ring is read in bursts into a cache of
// ring entries per queue, whole R beats at a time, and the scheduler sees the head of the
// queue it serves as a registered window of W entries.
//
// Ring entries are cached as they are (16 bytes and a read-error flag): whether an entry is
// a descriptor or inline header bytes is the scheduler's to say (it parses frames from their
// first descriptor; docs/tx.md, "Inline headers"), so an R beat is written in one cycle
// whatever it holds and the R channel is never held by this engine.
//
// Fetching: a ring wants a read when it may fetch (`enable`) and runs, no read of it is in
// flight, software posted entries past its fetch index, its cache has room (for a whole R
// beat of entries, or for every posted one) and it is less than a ring ahead of what was
// consumed. Among the rings that want one, a round-robin pick,
// made while the engine's AR register is free, issues one burst (ARID = ID_BASE + ring) of up
// to MAX_BATCH consecutive entries (never past the ring's end or a 4 KiB boundary, never
// more than the cache has room for, so R beats are always taken at once). A read that leaves
// posted entries behind ends at a DMA beat boundary, so no R beat carries ring entries twice
// (at 1024 bits a 64-byte frame costs its ring entries' bytes / 128 beats, not more).
//
// Cache: per queue SLOTS entries in DPB banks (DPB = entries per DMA beat, the bank of cache
// position p is p mod DPB), one write and one read port each. Entry i of a ring goes to
// position i mod SLOTS. An R beat writes up to DPB entries, a read of W = DPB consecutive
// positions from any start takes one row of every bank; a 64-bit bus assembles an entry
// from two beats.
//
// Window: `win` holds entries head .. head + W - 1 of queue `win_q` (`win_n` of them valid:
// min(W, cached)), registered. The scheduler pops `pop_n` of them in a cycle; the next cycle
// the window shows the entries after them, refilled from the cache (a read at head + win_n,
// so popping never waits for the cache). `load` makes the next cycle's window show queue
// `load_q`'s head instead (the scheduler switching queues; `pop_n` still applies to `win_q`
// in that cycle, and `load_q` must differ from `win_q`). `head_ends` has the end bits (EOP or
// failed read) of `win_q`'s first 32 cached entries for the scheduler's "is this long frame
// all cached" question. Beside each window entry the engine keeps two decoded fields, so
// that the scheduler's per-cycle decision starts from registers: `win_end` (EOP, or the read
// failed) and `win_k`, the inline entries the entry would own as a frame's first descriptor
// (`ceil(inline_len / 16)` with INLINE on a queue with `inline_en`, else 0; 0 when its read
// failed).
//
// hw_idx counts entries consumed (popped). `run` low (queue disabled and not busy) empties the
// queue's cache and holds its indices at zero; a read still in flight then is waited for and
// its data discarded. `enable` low stops new reads only, so a started frame still finds its
// entries.
// Reset: synchronous, active high: no read in flight, caches empty, window empty (queue 0).
module tx_desc_engine
  import nic_dma_pkg::*;
#(
  parameter int unsigned NUM_TXQ    = 4,
  parameter int unsigned DMA_DATA_W = 128,
  parameter int unsigned ADDR_W     = 64,
  parameter int unsigned ID_W       = 5,
  parameter int unsigned ID_BASE    = 16,
  parameter int unsigned SLOTS      = 64,     // cache entries per queue
  parameter int unsigned MAX_BATCH  = 32,     // entries per read
  localparam int unsigned DB  = DMA_DATA_W / 8,
  localparam int unsigned DPB = (DB >= 16) ? DB / 16 : 1,   // entries per beat (bank count)
  localparam int unsigned W   = DPB,                        // window entries
  localparam int unsigned QW  = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1,
  localparam int unsigned PW  = $clog2(SLOTS),              // cache position bits
  localparam int unsigned WW  = $clog2(W + 1)               // window count bits
) (
  input  logic                           clk,
  input  logic                           rst,
  input  logic [NUM_TXQ-1:0]             enable,      // may fetch
  input  logic [NUM_TXQ-1:0]             inline_en,   // CTRL.inline_en: INLINE is honoured
  input  logic [NUM_TXQ-1:0]             run,         // 0: idle, cache empty, indices zero
  input  logic [NUM_TXQ-1:0][63:0]       ring_base,
  input  logic [NUM_TXQ-1:0][3:0]        ring_log2,
  input  logic [NUM_TXQ-1:0][15:0]       sw_idx,
  // AXI read address / data (ARID = ID_BASE + queue; the caller routes those R beats here,
  // and this engine takes every one at once)
  output logic                           m_arvalid,
  input  logic                           m_arready,
  output logic [ADDR_W-1:0]              m_araddr,
  output logic [7:0]                     m_arlen,
  output logic [ID_W-1:0]                m_arid,
  input  logic                           m_rvalid,
  input  logic [ID_W-1:0]                m_rid,
  input  logic [DMA_DATA_W-1:0]          m_rdata,
  input  logic [1:0]                     m_rresp,
  input  logic                           m_rlast,
  // caches
  output logic [NUM_TXQ-1:0][PW:0]       count,       // entries cached per queue
  output logic [NUM_TXQ-1:0]             pushed,      // entries were cached this cycle
  // the scheduler's window
  input  logic                           load,
  input  logic [QW-1:0]                  load_q,
  output logic [QW-1:0]                  win_q,
  output logic [W-1:0][128:0]            win,         // {read failed, entry}
  output logic [W-1:0]                   win_end,     // per entry: EOP or read failed
  output logic [4:0]                     win_k0,      // win[0] as a frame's first: its inline entries
  output logic [WW-1:0]                  win_n,
  input  logic [WW-1:0]                  pop_n,
  output logic [31:0]                    head_ends,
  // indices
  output logic [NUM_TXQ-1:0][15:0]       hw_idx
);
  localparam int unsigned LW   = (DPB > 1) ? $clog2(DPB) : 1;   // bank / lane index width
  localparam int unsigned ROWS = SLOTS / DPB;                   // rows per queue and bank
  localparam int unsigned RBW  = $clog2(NUM_TXQ * ROWS);        // bank row address width
  localparam int unsigned KW   = $clog2(MAX_BATCH + 1);
  localparam int unsigned RW   = QW;

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "tx_desc_engine: DMA_DATA_W must be a power of two >= 64");
    if (SLOTS < 32 || (SLOTS & (SLOTS - 1)) != 0 || SLOTS < 2 * DPB) begin
      $fatal(1, "tx_desc_engine: SLOTS must be a power of two >= 32 (a frame's most entries)");
    end
    if (MAX_BATCH < 1 || MAX_BATCH > SLOTS || MAX_BATCH > 256) $fatal(1, "tx_desc_engine: MAX_BATCH must be 1..SLOTS, at most 256");
    if (ID_BASE + NUM_TXQ > (1 << ID_W)) $fatal(1, "tx_desc_engine: ID_W must give one ARID per queue");
  end

  // ---------------------------------------------------------------- per-ring state
  logic [15:0]        fetch_idx_q [NUM_TXQ];
  logic [15:0]        hw_idx_q    [NUM_TXQ];
  logic [PW:0]        wr_ptr_q    [NUM_TXQ];     // cache positions (one wrap bit)
  logic [PW:0]        rd_ptr_q    [NUM_TXQ];
  logic [KW-1:0]      left_q      [NUM_TXQ];     // entries of the ring's read still to come
  logic [LW-1:0]      lane_q      [NUM_TXQ];     // lane of its next entry in the next beat
  logic [NUM_TXQ-1:0] inflight_q, discard_q, run_q;
  logic [NUM_TXQ-1:0] stopping;
  logic [SLOTS-1:0]   ends_q      [NUM_TXQ];     // per position: EOP bit or read failed

  assign stopping = run_q & ~run;

  always_comb begin
    for (int unsigned t = 0; t < NUM_TXQ; t++) begin
      count[t]  = wr_ptr_q[t] - rd_ptr_q[t];
      hw_idx[t] = hw_idx_q[t];
    end
  end

  // ---------------------------------------------------------------- fetch pick and issue
  logic               ar_valid_q;
  logic [NUM_TXQ-1:0] want;
  logic               pick_valid;
  logic [RW-1:0]      pick;

  always_comb begin
    want = '0;
    if (!ar_valid_q) begin
      for (int unsigned t = 0; t < NUM_TXQ; t++) begin
        if (enable[t] && run[t] && !inflight_q[t] && sw_idx[t] != fetch_idx_q[t]) begin
          automatic logic [15:0] ahead   = fetch_idx_q[t] - hw_idx_q[t];
          automatic logic [15:0] pending = sw_idx[t] - fetch_idx_q[t];
          automatic logic [PW:0] room    = (PW + 1)'(SLOTS) - count[t];
          // Room for a whole beat of entries, or for all that is posted: a read limited by
          // a cache with less room than a beat would end mid-beat, and the next read would
          // fetch that beat again (the cache then holds more than SLOTS - DPB entries, more
          // than any frame has, so waiting for the room starves nothing).
          want[t] = (32'(room) >= DPB || (room != '0 && 32'(pending) <= 32'(room))) &&
                    (ahead < (16'd1 << ring_log2[t]));
        end
      end
    end
  end

  rr_arbiter #(.N(NUM_TXQ)) u_pick (
    .clk,
    .rst,
    .req       (want),
    .accept    (1'b1),       // the pick is issued in the cycle it is made
    .gnt_valid (pick_valid),
    .gnt_idx   (pick)
  );

  // Entries to fetch next: at most MAX_BATCH, what software posted, what is left before the
  // ring wraps and before the next 4 KiB boundary, what the cache has room for, and never
  // more than one ring ahead of what was consumed, whatever SW_IDX says; cut back to a beat
  // boundary when posted entries are left behind.
  function automatic logic [15:0] batch_size(input logic [15:0] sw, input logic [15:0] fidx,
                                             input logic [15:0] hw, input logic [3:0] log2,
                                             input logic [11:0] addr_lo, input logic [15:0] room);
    logic [15:0] mask, pending, in_ring, to_4k, ahead, ring_room, k, tail;
    mask      = (16'd1 << log2) - 16'd1;
    pending   = sw - fidx;
    in_ring   = (mask + 16'd1) - (fidx & mask);
    to_4k     = (16'h1000 - {4'd0, addr_lo}) >> 4;
    ahead     = fidx - hw;
    ring_room = (ahead >= mask + 16'd1) ? 16'd0 : (mask + 16'd1) - ahead;
    k = 16'(MAX_BATCH);
    if (pending < k)   k = pending;
    if (ring_room < k) k = ring_room;
    if (in_ring < k)   k = in_ring;
    if (to_4k < k)     k = to_4k;
    if (room < k)      k = room;
    // When more entries are posted than this read takes, it ends at a beat boundary (whole R
    // beats: a read ending mid-beat would fetch that beat's row again with the next read).
    if (DPB > 1 && k < pending) begin
      tail = ((({4'd0, addr_lo} & 16'(DB - 1)) >> 4) + k) & 16'(DPB - 1);
      if (k > tail) k = k - tail;
    end
    return k;
  endfunction

  logic [63:0] pick_entry;
  logic [15:0] pick_k;
  logic [16:0] pick_span;           // bytes from the first beat's start to the last entry's end
  always_comb begin
    pick_entry = '0;
    pick_k     = '0;
    if (pick_valid) begin
      pick_entry = ring_base[pick] + {44'd0, fetch_idx_q[pick] & ((16'd1 << ring_log2[pick]) - 16'd1), 4'd0};
      pick_k     = batch_size(sw_idx[pick], fetch_idx_q[pick], hw_idx_q[pick], ring_log2[pick],
                              pick_entry[11:0], 16'(SLOTS) - 16'(count[pick]));
    end
    pick_span = ({5'd0, pick_entry[11:0]} & 17'(DB - 1)) + {pick_k[12:0], 4'd0};
  end

  logic issue;
  assign issue = pick_valid && pick_k != '0;

  logic [ADDR_W-1:0] ar_addr_q;
  logic [7:0]        ar_len_q;
  logic [RW-1:0]     ar_ring_q;
  assign m_arvalid = ar_valid_q;
  assign m_araddr  = ar_addr_q;
  assign m_arlen   = ar_len_q;
  assign m_arid    = ID_W'(ID_BASE) + ID_W'(ar_ring_q);

  // ---------------------------------------------------------------- unpacking an R beat
  // The beat belongs to ring rr; it holds entries in lanes [lo, hi) (wide bus), or half an
  // entry (64-bit bus).
  logic [RW-1:0] rr;
  logic          live;             // a beat of a read in flight, with entries still due
  logic          keep;             // ... whose entries are cached (not discarded)
  logic [LW:0]   lo, hi;
  logic [KW-1:0] n_beat;           // entries the beat completes
  logic          beat_err;

  assign rr       = RW'(m_rid - ID_W'(ID_BASE));
  assign live     = m_rvalid && inflight_q[rr] && left_q[rr] != '0;
  assign keep     = live && !discard_q[rr] && run[rr];
  assign beat_err = m_rresp[1];

  logic [63:0]        lo_half_q [NUM_TXQ];   // 64-bit bus, per ring: an entry's first 8 bytes,
  logic [NUM_TXQ-1:0] lo_err_q, half_q;      // their read error, which half comes next

  if (DB >= 16) begin : g_wide
    logic [LW:0] span;
    assign lo     = {1'b0, lane_q[rr]};
    assign span   = (LW+1)'(DPB) - lo;
    assign n_beat = (32'(left_q[rr]) < 32'(span)) ? left_q[rr] : KW'(span);
    assign hi     = lo + (LW+1)'(n_beat);
    logic unused_half;
    assign unused_half = ^{lo_half_q[rr], lo_err_q, half_q};
  end else begin : g_narrow
    assign lo     = '0;
    assign hi     = (LW+1)'(half_q[rr]);
    assign n_beat = KW'(half_q[rr]);   // the second beat of an entry completes it
  end

  // ---------------------------------------------------------------- cache banks
  logic [128:0] bank_q [DPB][NUM_TXQ * ROWS];

  function automatic logic [RBW-1:0] row_of(input logic [RW-1:0] q, input logic [PW-1:0] pos);
    return RBW'(32'(q) * ROWS + 32'(pos) / DPB);
  endfunction

  // The beat's entries, in lane order, with their error flag.
  logic [DPB-1:0][128:0] beat_ent;
  logic [DPB-1:0]        lane_v;           // the lane holds one of the beat's entries
  if (DB >= 16) begin : g_ent_wide
    for (genvar j = 0; j < DPB; j++) begin : g_lane
      assign beat_ent[j] = {beat_err, m_rdata[128 * j +: 128]};
      assign lane_v[j]   = (LW+1)'(j) >= lo && (LW+1)'(j) < hi;
    end
  end else begin : g_ent_narrow
    assign beat_ent[0] = {lo_err_q[rr] || beat_err, m_rdata[63:0], lo_half_q[rr]};
    assign lane_v[0]   = 1'b1;
  end

  // Write: bank b takes the beat lane whose entry lands on a position of bank b.
  logic [PW:0] wp;
  assign wp = wr_ptr_q[rr];
  always_ff @(posedge clk) begin
    if (keep) begin
      for (int unsigned b = 0; b < DPB; b++) begin
        automatic logic [LW-1:0] off = LW'(b - 32'(wp)) ;    // (b - wp) mod DPB
        automatic logic [LW:0]   j   = lo + (LW+1)'(off);
        automatic logic [PW-1:0] pos = PW'(wp + (PW+1)'(off));
        if (DPB == 1) begin
          j   = lo;
          pos = wp[PW-1:0];
        end
        if (j < hi) bank_q[b][row_of(rr, pos)] <= beat_ent[LW'(j)];
      end
    end
  end

  // Read: W consecutive positions from `rp` of queue `rq`.
  logic [RW-1:0]         rq;
  logic [PW:0]           rp;
  logic [W-1:0][128:0]   rd_ent;
  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      automatic logic [PW-1:0] pos = PW'(rp + (PW+1)'(i));
      rd_ent[i] = bank_q[32'(pos) % DPB][row_of(rq, pos)];
    end
  end

  // ---------------------------------------------------------------- window
  logic [QW-1:0]        win_q_q;
  logic [W-1:0][128:0]  win_q_d;           // the window register (win)
  logic [W-1:0]         win_end_q;
  logic [W-1:0][4:0]    win_k_q;
  logic [WW-1:0]        win_n_q;

  assign win_q   = win_q_q;
  assign win     = win_q_d;
  assign win_end = win_end_q;
  assign win_k0  = win_k_q[0];
  assign win_n   = win_n_q;

  // The decoded fields of an entry (see the header); each needs one or two of the
  // descriptor's fields.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic entry_end(input logic [128:0] e);
    automatic tx_desc_t d = tx_desc_t'(e[127:0]);
    return d.eop || e[128];
  endfunction
  function automatic logic [4:0] entry_k(input logic [128:0] e, input logic en);
    automatic tx_desc_t d = tx_desc_t'(e[127:0]);
    return (en && d.inline && !e[128]) ? 5'((9'(d.inline_len) + 9'd15) >> 4) : 5'd0;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  logic [W-1:0]      rd_end;
  logic [W-1:0][4:0] rd_k;
  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      rd_end[i] = entry_end(rd_ent[i]);
      rd_k[i]   = entry_k(rd_ent[i], inline_en[rq]);
    end
  end
  assign rq    = load ? RW'(load_q) : RW'(win_q_q);
  assign rp    = load ? rd_ptr_q[load_q] : rd_ptr_q[win_q_q] + (PW+1)'(win_n_q);

  // Entries the window can show of a queue holding `c` entries after popping `p`.
  function automatic logic [WW-1:0] fill(input logic [PW:0] c, input logic [WW-1:0] p);
    automatic logic [PW:0] left = c - (PW+1)'(p);
    return (32'(left) >= W) ? WW'(W) : WW'(left);
  endfunction

  always_ff @(posedge clk) begin
    if (rst) begin
      win_q_q <= '0;
      win_n_q <= '0;
    end else if (load) begin
      win_q_q <= load_q;
      win_n_q   <= stopping[load_q] ? '0 : fill(count[load_q], '0);
      win_q_d   <= rd_ent;
      win_end_q <= rd_end;
      win_k_q   <= rd_k;
    end else begin
      win_n_q <= stopping[win_q_q] ? '0 : fill(count[win_q_q], pop_n);
      if (pop_n != '0 || 32'(win_n_q) < W) begin
        for (int unsigned j = 0; j < W; j++) begin
          automatic int unsigned s = j + 32'(pop_n);
          if (s < 32'(win_n_q)) begin
            win_q_d[j]   <= win_q_d[s % W];
            win_end_q[j] <= win_end_q[s % W];
            win_k_q[j]   <= win_k_q[s % W];
          end else begin
            win_q_d[j]   <= rd_ent[(s - 32'(win_n_q)) % W];
            win_end_q[j] <= rd_end[(s - 32'(win_n_q)) % W];
            win_k_q[j]   <= rd_k[(s - 32'(win_n_q)) % W];
          end
        end
      end
    end
  end

  // End bits of the window queue's first 32 cached entries, from the head.
  always_comb begin
    automatic logic [PW:0] c = count[win_q_q];
    for (int unsigned i = 0; i < 32; i++) begin
      head_ends[i] = (i < 32'(c)) && ends_q[win_q_q][PW'(rd_ptr_q[win_q_q] + (PW+1)'(i))];
    end
  end

  // ---------------------------------------------------------------- state
  logic r_done;
  assign r_done = m_rvalid && m_rlast;     // every beat is taken at once

  always_ff @(posedge clk) begin
    if (rst) begin
      ar_valid_q <= 1'b0;
      ar_addr_q  <= '0;
      ar_len_q   <= '0;
      ar_ring_q  <= '0;
      inflight_q <= '0;
      discard_q  <= '0;
      run_q      <= '0;
    end else begin
      automatic logic [NUM_TXQ-1:0] inflight_n = inflight_q;
      automatic logic [NUM_TXQ-1:0] discard_n  = discard_q;
      run_q <= run;
      if (ar_valid_q && m_arready) ar_valid_q <= 1'b0;
      if (issue) begin
        ar_valid_q       <= 1'b1;
        ar_ring_q        <= pick;
        ar_addr_q        <= (DB >= 16) ? ADDR_W'(pick_entry & ~64'(DB - 1)) : ADDR_W'(pick_entry);
        ar_len_q         <= (DB >= 16) ? 8'((pick_span + 17'(DB - 1)) / 17'(DB) - 17'd1)
                                       : 8'(pick_k * 16'd2 - 16'd1);
        inflight_n[pick] = 1'b1;
      end
      if (r_done) begin
        inflight_n[rr] = 1'b0;
        discard_n[rr]  = 1'b0;
      end
      discard_n  = discard_n | (stopping & inflight_n);
      inflight_q <= inflight_n;
      discard_q  <= discard_n;
    end
  end

  // Unpack state (no reset needed: used only while the ring's read is in flight).
  always_ff @(posedge clk) begin
    if (issue) begin
      lane_q[pick] <= (DPB > 1) ? LW'(pick_entry[11:4]) : '0;   // (entry address / 16) mod DPB
      left_q[pick] <= KW'(pick_k);
      half_q[pick] <= 1'b0;
    end
    if (DB < 16 && live) begin
      half_q[rr] <= !half_q[rr];
      if (!half_q[rr]) begin
        lo_half_q[rr] <= m_rdata[63:0];
        lo_err_q[rr]  <= beat_err;
      end
    end
    if (live && (DB >= 16 || half_q[rr])) begin
      left_q[rr] <= left_q[rr] - n_beat;
      lane_q[rr] <= '0;
    end
  end

  // Per-ring indices, cache pointers and end bits: one loop, run only in a cycle where one
  // can move. Reset, or a ring stopped: indices to zero and the cache emptied.
  logic push;
  assign push = keep && (DB >= 16 || half_q[rr]);

  always_comb begin
    pushed = '0;
    if (push) pushed[rr] = 1'b1;
  end

  always_ff @(posedge clk) begin
    if (rst || issue || push || pop_n != '0 || stopping != '0) begin
      for (int unsigned t = 0; t < NUM_TXQ; t++) begin
        automatic logic stop    = rst || stopping[t];
        automatic logic fetched = issue && pick == RW'(t);
        automatic logic pu      = push && rr == RW'(t);
        automatic logic po      = pop_n != '0 && win_q_q == QW'(t);
        if (stop || fetched) fetch_idx_q[t] <= stop ? '0 : fetch_idx_q[t] + pick_k;
        if (stop || pu)      wr_ptr_q[t]    <= stop ? '0 : wr_ptr_q[t] + (PW+1)'(n_beat);
        if (stop || po)      rd_ptr_q[t]    <= stop ? '0 : rd_ptr_q[t] + (PW+1)'(pop_n);
        if (stop || po)      hw_idx_q[t]    <= stop ? '0 : hw_idx_q[t] + 16'(pop_n);
        if (pu) begin
          for (int unsigned j = 0; j < DPB; j++) begin
            if (lane_v[j]) begin
              ends_q[t][PW'(wr_ptr_q[t] + (PW+1)'(j) - (PW+1)'(lo))] <= entry_end(beat_ent[j]);
            end
          end
        end
      end
    end
  end

`ifndef SYNTHESIS
  // Simulation checks start at the first reset: before it every register may hold anything
  // (Verilator --x-initial unique may even show an edge at time 0; xrandom in
  // tests/rtl/test_protocol_bugs.py). Simulation-only code, not part of the design.
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  // The cache room was reserved when the read was issued; the window pops only what it shows.
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen) begin
      if (push && 32'(count[rr]) + 32'(n_beat) > SLOTS) $error("tx_desc_engine: cache overflow");
      if (pop_n > win_n_q) $error("tx_desc_engine: %0d entries popped, %0d in the window", pop_n, win_n_q);
      if (load && load_q == win_q_q && pop_n != '0) $error("tx_desc_engine: load of the popped queue");
      if (m_rvalid && !(inflight_q[rr] && left_q[rr] != '0)) $error("tx_desc_engine: R beat without a read");
    end
  end
`endif

  logic unused;
  assign unused = ^{m_rresp[0], fetch_idx_q[0], lane_q[0]};
endmodule
