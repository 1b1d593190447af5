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
// consumed. Two pipeline stages (for timing, as in desc_engine: the pick and the batch
// arithmetic are not in one cycle): a registered candidate ring (`cand_q`) is issued, when
// the engine's AR register is free, as one burst (ARID = ID_BASE + ring) of up to MAX_BATCH
// consecutive entries (never past the ring's end or a 4 KiB boundary, never more than the
// cache has room for, so R beats are always taken at once), planned from its state in that
// cycle, if it wants a read then. Meanwhile a round-robin pick among the other rings that
// want one chooses the next candidate; when none does, the candidate stays (a queue served
// alone is always the candidate, so it is issued in the same cycle as with an unregistered
// pick; another ring that becomes ready is issued one cycle later). A read that leaves
// posted entries behind ends at a DMA beat boundary, so no R beat carries ring entries twice
// (at 1024 bits a 64-byte frame costs its ring entries' bytes / 128 beats, not more).
//
// Cache: per queue SLOTS entries in DPB banks (DPB = entries per DMA beat, the bank of cache
// position p is p mod DPB), one write and one asynchronous read port each (LUT RAM: one
// memory per bank, rtl/memories.tsv). Entry i of a ring goes to
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
// failed read) of `win_q`'s first TX_FRAME_MAX_ENTRIES (35) cached entries, as many as a
// frame can own, for the scheduler's "is this long frame all cached" question. Every output
// to the scheduler is a register or, with several queues, a register selected by the registered `win_q` (`count`, `head_ends`): the
// scheduler's decisions start at this engine's flip-flops, not behind its pointer arithmetic
// (per queue the engine keeps the cache count and the end bits in head order, from the
// cache's read position, besides the pointers). Beside each window entry the engine keeps two decoded fields, so
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
  output logic [TX_FRAME_MAX_ENTRIES-1:0] head_ends,
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
    if ((SLOTS & (SLOTS - 1)) != 0 || SLOTS < TX_FRAME_MAX_ENTRIES + DPB) begin
      $fatal(1, "tx_desc_engine: SLOTS must be a power of two >= a frame's most entries (TX_FRAME_MAX_ENTRIES) + a beat of entries");
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
  logic [PW:0]        count_q     [NUM_TXQ];     // wr_ptr_q - rd_ptr_q, kept as a register
  logic [NUM_TXQ-1:0] stopping;
  // Per queue, the end bits (EOP or read failed) of its cached entries in head order: bit i
  // is cache position rd_ptr + i; 0 from bit count up.
  logic [NUM_TXQ-1:0][SLOTS-1:0] ends_q;

  assign stopping = run_q & ~run;

  always_comb begin
    for (int unsigned t = 0; t < NUM_TXQ; t++) begin
      count[t]  = count_q[t];
      hw_idx[t] = hw_idx_q[t];
    end
  end

  // ---------------------------------------------------------------- fetch pick and issue
  logic               ar_valid_q;
  logic               can_issue;
  logic [NUM_TXQ-1:0] want;
  logic               pick_valid;
  logic [RW-1:0]      pick;
  logic [RW-1:0]      cand_q;          // the ring issued next (stage 2 of the fetch pipeline)

  assign can_issue = !ar_valid_q;

  // Whether ring t may fetch now: everything but the 4 KiB bound (checked at the issue).
  function automatic logic ring_wants(input int unsigned t);
    automatic logic [15:0] ahead   = fetch_idx_q[t] - hw_idx_q[t];
    automatic logic [15:0] pending = sw_idx[t] - fetch_idx_q[t];
    automatic logic [PW:0] room    = (PW + 1)'(SLOTS) - count_q[t];
    // Room for a whole beat of entries, or for all that is posted: a read limited by a cache
    // with less room than a beat would end mid-beat, and the next read would fetch that beat
    // again (the cache then holds more than SLOTS - DPB entries, more than any frame has, so
    // waiting for the room starves nothing).
    return enable[t] && run[t] && !inflight_q[t] && sw_idx[t] != fetch_idx_q[t] &&
           (32'(room) >= DPB || (room != '0 && 32'(pending) <= 32'(room))) &&
           (ahead < (16'd1 << ring_log2[t]));
  endfunction

  // The next candidate is picked among the other rings that want a read, in a cycle the AR
  // register is free (the candidate is then issued or found not ready and replaced).
  always_comb begin
    want = '0;
    if (can_issue) begin
      for (int unsigned t = 0; t < NUM_TXQ; t++) begin
        want[t] = cand_q != RW'(t) && ring_wants(t);
      end
    end
  end

  rr_arbiter #(.N(NUM_TXQ)) u_pick (
    .clk,
    .rst,
    .req       (want),
    .accept    (1'b1),       // the pick becomes the candidate in the cycle it is made
    .gnt_valid (pick_valid),
    .gnt_idx   (pick)
  );

  always_ff @(posedge clk) begin
    if (rst)                           cand_q <= '0;
    else if (can_issue && pick_valid)  cand_q <= pick;
  end

  // The candidate's next entry and batch; its read: the bus word holding the first entry
  // (a 64-bit bus reads the entry itself, two beats each) and the burst length to the last
  // one's end. Only the entry's low 12 bits feed the batch (the 4 KiB bound).
  logic [63:0]   cand_entry;
  logic [KW-1:0] cand_k;
  logic [16:0]   cand_span;           // bytes from the first beat's start to the last entry's end
  assign cand_entry = ring_base[cand_q] + {44'd0, fetch_idx_q[cand_q] & ((16'd1 << ring_log2[cand_q]) - 16'd1), 4'd0};
  assign cand_span  = ({5'd0, cand_entry[11:0]} & 17'(DB - 1)) + {4'd0, 9'(cand_k), 4'd0};

  // Entries to fetch next (rtl/common/desc_batch.sv): at most MAX_BATCH, what software posted,
  // what is left before the ring wraps and before the next 4 KiB boundary, what the cache has
  // room for, and never more than one ring ahead of what was consumed, whatever SW_IDX says;
  // cut back to a beat boundary when posted entries are left behind.
  desc_batch #(.MAX_BATCH(MAX_BATCH), .BEAT(DPB)) u_batch (
    .sw      (sw_idx[cand_q]),
    .fidx    (fetch_idx_q[cand_q]),
    .hw      (hw_idx_q[cand_q]),
    .log2    (ring_log2[cand_q]),
    .addr_lo (cand_entry[11:0]),
    .room    (16'(SLOTS) - 16'(count_q[cand_q])),
    .k       (cand_k)
  );

  // The candidate's read is issued this cycle: exactly when cand_k != 0 (it wants a read
  // and the entry is not in a 4 KiB boundary's last 16 bytes), from those conditions
  // directly, in parallel with the batch arithmetic.
  logic issue;
  assign issue = can_issue && ring_wants(32'(cand_q)) &&
                 !(cand_entry[11:4] == 8'hff && cand_entry[3:0] != 4'd0);

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

  // Read: W consecutive positions from `rp` of queue `rq`, one from each bank.
  logic [RW-1:0]         rq;
  logic [PW:0]           rp;
  logic [PW:0]           wp;
  logic [DPB-1:0][128:0] bank_rd;          // bank b's entry of the read
  logic [W-1:0][128:0]   rd_ent;
  assign wp = wr_ptr_q[rr];

  // Bank b: the write takes the beat lane whose entry lands on a position of bank b, the
  // read the position of bank b among rp .. rp + W - 1.
  for (genvar b = 0; b < DPB; b++) begin : g_bank
    logic [128:0]  mem_q [NUM_TXQ * ROWS];
    logic [LW-1:0] w_off, r_off;           // (b - wp) mod DPB, (b - rp) mod DPB
    logic [LW:0]   w_j;
    logic [PW-1:0] w_pos, r_pos;
    assign w_off = (DPB > 1) ? LW'(32'(b) - 32'(wp)) : '0;
    assign r_off = (DPB > 1) ? LW'(32'(b) - 32'(rp)) : '0;
    assign w_j   = lo + (LW+1)'(w_off);
    assign w_pos = PW'(wp + (PW+1)'(w_off));
    assign r_pos = PW'(rp + (PW+1)'(r_off));
    always_ff @(posedge clk) begin
      if (keep && w_j < hi) mem_q[row_of(rr, w_pos)] <= beat_ent[LW'(w_j)];
    end
    assign bank_rd[b] = mem_q[row_of(rq, r_pos)];
  end

  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      rd_ent[i] = bank_rd[(32'(rp) + i) % DPB];
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

  // End bits of the window queue's first TX_FRAME_MAX_ENTRIES cached entries, from the head
  // (0 past them).
  assign head_ends = ends_q[win_q_q][TX_FRAME_MAX_ENTRIES-1:0];

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
        ar_valid_q         <= 1'b1;
        ar_ring_q          <= cand_q;
        ar_addr_q          <= (DB >= 16) ? ADDR_W'(cand_entry & ~64'(DB - 1)) : ADDR_W'(cand_entry);
        ar_len_q           <= (DB >= 16) ? 8'((cand_span + 17'(DB - 1)) / 17'(DB) - 17'd1)
                                         : 8'(16'(cand_k) * 16'd2 - 16'd1);
        inflight_n[cand_q] = 1'b1;
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
      lane_q[cand_q] <= (DPB > 1) ? LW'(cand_entry[11:4]) : '0;   // (entry address / 16) mod DPB
      left_q[cand_q] <= cand_k;
      half_q[cand_q] <= 1'b0;
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

  // Per-ring indices, cache pointers, counts and end bits: one loop, run only in a cycle
  // where one can move. Reset, or a ring stopped: indices to zero and the cache emptied.
  // A pop shifts the queue's end bits down by pop_n; a push writes its entries' end bits
  // after the entries left (count - pop_n).
  logic push;
  assign push = keep && (DB >= 16 || half_q[rr]);

  always_comb begin
    pushed = '0;
    if (push) pushed[rr] = 1'b1;
  end

  logic [DPB-1:0] beat_end;
  always_comb begin
    for (int unsigned j = 0; j < DPB; j++) beat_end[j] = entry_end(beat_ent[j]);
  end

  always_ff @(posedge clk) begin
    if (rst || issue || push || pop_n != '0 || stopping != '0) begin
      for (int unsigned t = 0; t < NUM_TXQ; t++) begin
        automatic logic stop    = rst || stopping[t];
        automatic logic fetched = issue && cand_q == RW'(t);
        automatic logic pu      = push && rr == RW'(t);
        automatic logic po      = pop_n != '0 && win_q_q == QW'(t);
        automatic logic [PW:0] popped = po ? (PW+1)'(pop_n) : '0;
        automatic logic [PW:0] added  = pu ? (PW+1)'(n_beat) : '0;
        automatic logic [PW:0] at     = count_q[t] - popped - (PW+1)'(lo);   // lane 0's place
        automatic logic [SLOTS-1:0] e = ends_q[t] >> popped;
        if (stop || fetched) fetch_idx_q[t] <= stop ? '0 : fetch_idx_q[t] + 16'(cand_k);
        if (stop || pu)      wr_ptr_q[t]    <= stop ? '0 : wr_ptr_q[t] + (PW+1)'(n_beat);
        if (stop || po)      rd_ptr_q[t]    <= stop ? '0 : rd_ptr_q[t] + (PW+1)'(pop_n);
        if (stop || po)      hw_idx_q[t]    <= stop ? '0 : hw_idx_q[t] + 16'(pop_n);
        if (stop || pu || po) begin
          count_q[t] <= stop ? '0 : count_q[t] + added - popped;
          if (pu) begin
            for (int unsigned j = 0; j < DPB; j++) begin
              if (lane_v[j]) e[PW'(at + (PW+1)'(j))] = beat_end[j];
            end
          end
          ends_q[t] <= stop ? '0 : e;
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
  assign unused = ^{m_rresp[0], fetch_idx_q[0], lane_q[0], rd_ptr_q[0]};
endmodule
