// TX scheduler (docs/tx.md): takes whole frames from the descriptor engine's window, checks
// them and issues their segment reads, one frame per cycle when a frame fits the window and
// needs one read.
//
// Two stages, each with a frame record of its own (two record banks, used in turn):
//   TAKE  : the window (tx_desc_engine: the next W ring entries of queue win_q, registered,
//           with each entry's end bit and inline-entry count decoded) is parsed from the
//           frame's first descriptor: entries 1..k are its inline header (k = ceil(inline_len
//           / 16) with INLINE), the entries after them are descriptors, and the frame ends at
//           the first descriptor with EOP or a failed read, or at its MAX_SEGS-th descriptor.
//           A frame whose end is in the window is taken (popped) in one cycle. A longer one
//           is taken W entries per cycle, after a one-cycle check that all of it is cached
//           (the engine's end bits of the queue's first TX_FRAME_MAX_ENTRIES = 35 entries, the
//           most a frame can own: a TSO send with a 255-byte inline header and 18 descriptors). The record gathers the
//           first descriptor's fields, the inline bytes, the segments (those of non-zero
//           length) and what the checks need (length, bad segments, failed reads).
//   ISSUE : the status in the order of docs/tx.md ("Bad input"); a failed frame goes to the
//           completion path at once (no reads); a good one waits for room in the TX FIFO
//           (`FIFO_WORDS` words reserved here for the whole frame, so R beats never wait for
//           space), hands the store stage its note and the gather stage its inline header,
//           and issues its reads (ARID is the caller's), one burst per cycle, the first in the
//           cycle of the check; each burst's note for the gather stage is pushed with it.
// Queues are served round robin, one whole frame at a time: when a frame of queue t is taken,
// the next comes from the first queue after t that may start one (enabled, entries cached,
// completion-ring room, its head frame not known to be incomplete), and the window is
// loaded with it in the same cycle, so switching queues costs no cycle. A queue found to
// hold only part of a frame is passed over until new entries arrive for it, so a half-posted
// frame stalls only its own queue.
// A frame with a failed descriptor read gets status DESC_RD_ERR whatever else its known
// descriptors say: its length and checksum fields are unknown.
// Reset: synchronous, active high: both record banks free, no read pending.
module tx_sched
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DMA_DATA_W = 128,
  parameter int unsigned ADDR_W     = 64,
  parameter int unsigned NUM_TXQ    = 4,
  parameter int unsigned MAX_BURST  = 256,
  parameter int unsigned FIFO_WORDS = 128,     // TX FIFO size in DMA words
  parameter int unsigned EGR_FRAMES = 32,      // frames the FIFO may hold at once
  parameter int unsigned SLOTS      = 64,      // descriptor cache entries per queue
  localparam int unsigned DB        = DMA_DATA_W / 8,
  localparam int unsigned LW        = $clog2(DB),
  localparam int unsigned RW        = $clog2(FIFO_WORDS) + 1,
  localparam int unsigned QW        = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1,
  localparam int unsigned W         = (DB >= 16) ? DB / 16 : 1,    // window entries
  localparam int unsigned WW        = $clog2(W + 1),
  localparam int unsigned PW        = $clog2(SLOTS),
  localparam int unsigned HB        = TX_INLINE_MAX * 8              // inline header bits
) (
  input  logic                          clk,
  input  logic                          rst,
  input  logic [15:0]                   max_frame_len,   // TX_FRAME_LIMIT
  // per queue
  input  logic [NUM_TXQ-1:0]            q_enable,
  input  logic [NUM_TXQ-1:0]            q_inline_en,     // CTRL.inline_en
  input  logic [NUM_TXQ-1:0]            run,             // the queue runs (enabled or busy)
  output logic [NUM_TXQ-1:0]            q_halted,        // STATUS.halted
  input  logic [NUM_TXQ-1:0]            cq_room,
  input  logic [NUM_TXQ-1:0][PW:0]      count,           // entries cached
  input  logic [NUM_TXQ-1:0]            pushed,          // entries arrived this cycle
  input  logic [NUM_TXQ-1:0][15:0]      desc_hw_idx,
  // the descriptor engine's window
  output logic                          load,
  output logic [QW-1:0]                 load_q,
  input  logic [QW-1:0]                 win_q,
  input  logic [W-1:0][128:0]           win,
  input  logic [W-1:0]                  win_end,
  input  logic [4:0]                    win_k0,
  input  logic [WW-1:0]                 win_n,
  output logic [WW-1:0]                 pop_n,
  input  logic [TX_FRAME_MAX_ENTRIES-1:0] head_ends,
  output logic                          start_valid,     // a frame of start_queue was taken
  output logic [2:0]                    start_queue,
  // completion order (one entry per frame; 1 = failed before any read)
  output logic                          ord_valid,
  input  logic                          ord_ready,
  output logic                          ord_nodata,
  // failed frames' completions
  output logic                          fail_valid,
  output tx_result_t                    fail_cpl,
  // good frames to the store stage
  output logic                          frame_valid,
  output tx_frame_t                     frame,
  // good frames' inline headers to the gather stage
  output logic                          hn_valid,
  input  logic                          hn_ready,
  output logic [7:0]                    hn_len,          // 0: no inline header
  output logic                          hn_data,         // the frame has segment reads
  output logic [HB-1:0]                 hn_hdr,
  output logic                          hn_tso,          // the note starts a TSO send's header read:
                                                         // its gathered words come back on g_tso_*
  // a TSO send's header, as tx_gather packed it (its words are not for tx_store)
  input  logic                          g_tso_valid,
  input  logic [DMA_DATA_W-1:0]         g_tso_data,
  input  logic                          g_tso_last,
  input  logic                          g_tso_err,
  // TX FIFO reservation: words and frames released
  input  logic                          rel_word,         // egress took a word
  input  logic                          rel_frame,        // egress sent a frame's last beat
  input  logic                          rel_discard,      // the store stage dropped a frame ...
  input  logic [RW-1:0]                 rel_discard_words,// ... of this many words
  // segment reads (ARID is the caller's)
  output logic                          m_arvalid,
  input  logic                          m_arready,
  output logic [ADDR_W-1:0]             m_araddr,
  output logic [7:0]                    m_arlen,
  // burst notes for the gather stage, pushed when the burst is issued
  output logic                          bn_valid,
  input  logic                          bn_ready,
  output logic [8:0]                    bn_beats,
  output logic [LW-1:0]                 bn_lo,           // first valid lane of the first beat
  output logic [LW:0]                   bn_hi,           // one past the last valid lane of the last beat
  output logic                          bn_frame_last
);
  localparam int unsigned SN  = TX_TSO_MAX_SEGS;         // segments a record holds (a TSO send's)
  localparam int unsigned SW  = $clog2(SN);
  localparam int unsigned HE  = TX_INLINE_MAX / 16;     // inline header entries kept

  initial begin
    if (NUM_TXQ < 1 || NUM_TXQ > 8) $fatal(1, "tx_sched: NUM_TXQ must be 1..8");
    if (MAX_BURST < 1 || MAX_BURST > 256) $fatal(1, "tx_sched: MAX_BURST must be 1..256");
    if (FIFO_WORDS * DB < 9216) $fatal(1, "tx_sched: the TX FIFO must hold a 9 KiB frame");
    if (W > 8) $fatal(1, "tx_sched: at most 8 window entries (DMA_DATA_W <= 1024)");
    // head_ends must reach the last descriptor of the longest frame (k inline entries up to
    // 1 + ceil(255 / 16), then TX_TSO_MAX_SEGS - 1 descriptors after the first).
    if (TX_FRAME_MAX_ENTRIES < 2 + (255 + 15) / 16 + TX_TSO_MAX_SEGS - 1 ||
        TX_FRAME_MAX_ENTRIES < 1 + (255 + 15) / 16 + TX_MAX_SEGS - 1) begin
      $fatal(1, "tx_sched: TX_FRAME_MAX_ENTRIES is below a frame's most ring entries");
    end
  end

  // ---------------------------------------------------------------- frame records
  typedef struct packed {
    logic [2:0]  qid;
    logic [15:0] desc_idx;
    logic [15:0] nent;          // ring entries
    logic [15:0] tag;
    logic        csum_en, csum_udp;
    logic [7:0]  csum_start, csum_off;
    logic [7:0]  inline_len;
    logic [20:0] len;           // inline bytes + segment lengths: exact, up to
                                // 255 + 18 * 65535 < 2^21 (descriptor len fields, bad ones too)
    logic        bad_seg, desc_err;
    logic [4:0]  nseg;          // segments to read (non-zero length), 0..MAX_SEGS (TSO: 18)
    logic        tso;           // a TSO send: entry 1 was its context entry
  } rec_t;

  rec_t          rec_q    [2];
  logic [HB-1:0] hdr_q    [2];
  logic [63:0]   seg_addr_q [2][SN];
  logic [12:0]   seg_len_q  [2][SN];
  logic [127:0]  ctx_q      [2];     // a TSO send's context entry
  logic [1:0]    full_q;            // bank holds a frame taken and not yet issued
  logic          tb_q;              // the bank TAKE fills
  logic          ib_q;              // the bank ISSUE works on

  // ---------------------------------------------------------------- TAKE: parse the window
  logic          mid_q;             // inside a frame longer than the window
  logic          lchk_q;            // checking that a long frame is all cached
  logic [4:0]    ri_q;              // inline entries still at the window's start (mid frame)
  logic [4:0]    ji_q;              // inline entries of the frame taken so far
  logic [4:0]    nd_q;              // descriptors of the frame taken so far
  logic [4:0]    lk_q;              // the long frame's inline entries
  logic          leop_q;            // ... and its first descriptor ends it (EOP)
  logic          eop_seen_q;        // mid frame: only inline entries are left
  logic [NUM_TXQ-1:0] incomplete_q; // head frame known to be incomplete
  logic [NUM_TXQ-1:0] pushed_q;     // entries arrived last cycle
  logic [NUM_TXQ-1:0] halted_q;     // a first descriptor's read failed (inline_en)

  logic          first;             // the window starts with a frame's first descriptor
  logic [4:0]    k0;
  logic [W-1:0]  inl, is_desc, endw;
  logic [W-1:0][4:0] di;            // descriptor index in the frame
  logic          found;
  logic [WW-1:0] e_pos;             // the frame's end in the window
  logic          can_start, bank_free;

  // A TSO send's first descriptor is followed by its context entry, then its inline entries:
  // the context entry is taken as one more inline entry (never read as a descriptor), and the
  // send may have TX_TSO_MAX_SEGS descriptors.
  logic          tso_now, tso_fr, ltso_q;
  tx_desc_t      d0;                // the window's first entry as a descriptor
  assign d0        = tx_desc_t'(win[0][127:0]);
  logic [31:0]   maxd;              // descriptors the frame may have
  assign first     = !mid_q;
  assign tso_now   = d0.tso && !win[0][128];
  assign tso_fr    = first ? tso_now : rec_q[tb_q].tso;
  assign maxd      = tso_fr ? TX_TSO_MAX_SEGS : TX_MAX_SEGS;
  assign k0        = win_k0 + 5'(first && tso_now);
  assign bank_free = !full_q[tb_q];
  assign can_start = q_enable[win_q] && cq_room[win_q] && !incomplete_q[win_q] && !halted_q[win_q]
                     && bank_free;

  // The frame ends at its first descriptor with EOP (or a failed read), or at its
  // MAX_SEGS-th; when that is the first descriptor, after its inline entries. Mid frame with
  // the ending descriptor already taken, only the rest of the inline entries are left.
  logic [WW-1:0] e_len;             // entries of the frame in the window, when it ends there (<= W)
  always_comb begin
    for (int unsigned i = 0; i < W; i++) begin
      inl[i]     = first ? (i >= 1 && 5'(i) <= k0) : (5'(i) < ri_q);
      is_desc[i] = !inl[i];
      di[i]      = first ? ((i == 0) ? 5'd0 : 5'(i) - k0) : nd_q + 5'(i) - ri_q;
      endw[i]    = (32'(i) < 32'(win_n)) && is_desc[i] && !(mid_q && eop_seen_q) &&
                   (win_end[i] || 32'(di[i]) == maxd - 1);
    end
    found = 1'b0;
    e_pos = '0;
    for (int i = W - 1; i >= 0; i--) begin
      if (endw[i]) begin
        found = 1'b1;
        e_pos = WW'(i);
      end
    end
    e_len = e_pos + 1'b1;
    if (first && found && e_pos == '0) begin
      e_len = WW'(k0) + 1'b1;                             // with its inline entries
      found = 32'(k0) < 32'(win_n);
    end
    if (mid_q && eop_seen_q) begin
      e_len = WW'(ri_q);
      found = 32'(ri_q) <= 32'(win_n);
    end
  end

  // A long frame is all cached when one of its descriptors ends it (an end bit at entries
  // [1 + k, k + MAX_SEGS)) or all MAX_SEGS of its descriptors are cached. k + MAX_SEGS is at
  // most 17 + 18 = TX_FRAME_MAX_ENTRIES, so every possible end is in head_ends.
  logic        long_ready;
  logic [TX_FRAME_MAX_ENTRIES-1:0] long_mask;
  logic [31:0] lmax;
  assign lmax = ltso_q ? TX_TSO_MAX_SEGS : TX_MAX_SEGS;
  always_comb begin
    for (int unsigned i = 0; i < TX_FRAME_MAX_ENTRIES; i++) begin
      long_mask[i] = 32'(i) > 32'(lk_q) && 32'(i) < 32'(lk_q) + lmax;
    end
    long_ready = leop_q ? 32'(count[win_q]) >= 32'(lk_q) + 1
                        : (head_ends & long_mask) != '0 || 32'(count[win_q]) >= 32'(lk_q) + lmax;
  end

  // What this cycle does with the window.
  logic take, take_done;            // entries are taken; the frame is complete with them
  logic to_lchk;                    // a long frame's head: check it next cycle
  logic mark_incomplete;
  always_comb begin
    take            = 1'b0;
    take_done       = 1'b0;
    to_lchk         = 1'b0;
    mark_incomplete = 1'b0;
    pop_n           = '0;
    if (mid_q) begin
      take      = 1'b1;                                   // all of it is cached
      take_done = found;
      pop_n     = found ? e_len : WW'(W);
    end else if (lchk_q) begin
      if (long_ready && bank_free) begin
        take  = 1'b1;
        pop_n = WW'(W);
      end else if (!long_ready) begin
        mark_incomplete = 1'b1;
      end
    end else if (can_start && win_n != '0) begin
      if (found) begin
        take      = 1'b1;
        take_done = 1'b1;
        pop_n     = e_len;
      end else if (32'(win_n) == W) begin
        to_lchk = 1'b1;
      end else begin
        mark_incomplete = 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------- queue choice
  // Eligible for the next frame; the window's queue after this cycle's pops.
  logic [NUM_TXQ-1:0] eligible;
  logic [QW-1:0]      pick;
  logic               pick_found, frame_end_here, idle_here;

  always_comb begin
    for (int unsigned t = 0; t < NUM_TXQ; t++) begin
      eligible[t] = q_enable[t] && cq_room[t] && count[t] != '0 && !incomplete_q[t] && !halted_q[t];
    end
    pick       = '0;
    pick_found = 1'b0;
    for (int k = 1; k <= NUM_TXQ; k++) begin
      automatic int unsigned t = (32'(win_q) + k) % NUM_TXQ;
      if (!pick_found && eligible[t] && t != 32'(win_q)) begin
        pick       = QW'(t);
        pick_found = 1'b1;
      end
    end
  end

  // Switch when a frame ends and another queue may start one, or when the window's queue
  // cannot start one now and another can.
  assign frame_end_here = take && take_done;
  assign idle_here      = !mid_q && !lchk_q && !take && !to_lchk;
  assign load           = pick_found && (frame_end_here || idle_here) && !(mid_q && !take_done);
  assign load_q         = pick;

  assign start_valid = take && first;
  assign start_queue = 3'(win_q);

  // ---------------------------------------------------------------- TAKE: record writes
  logic [W-1:0]      segw;          // the entry is a segment to read (descriptor, len != 0)
  logic [W-1:0][4:0] segi;          // its segment index
  logic [W-1:0]      badw;          // the entry is a bad segment
  logic [W-1:0]      tk;            // the entry is taken this cycle
  logic [20:0]       add_len;
  logic              add_bad, add_err;
  logic [4:0]        add_seg, add_inl, add_desc;

  logic d0_inl;                      // the window's first entry, as a frame's first: INLINE
  assign d0_inl = d0.inline && q_inline_en[win_q];

  always_comb begin
    automatic logic [4:0] ns = first ? 5'd0 : rec_q[tb_q].nseg;
    add_len  = '0;
    add_bad  = 1'b0;
    add_err  = 1'b0;
    add_seg  = '0;
    add_inl  = '0;
    add_desc = '0;
    for (int unsigned i = 0; i < W; i++) begin
      /* verilator lint_off UNUSEDSIGNAL */           // the checks read some fields only
      automatic tx_desc_t d = tx_desc_t'(win[i][127:0]);
      /* verilator lint_on UNUSEDSIGNAL */
      automatic logic     e = win[i][128];
      automatic logic     d0_inline = first && i == 0 && d.inline && q_inline_en[win_q];
      tk[i]   = take && (WW'(i) < pop_n);
      segw[i] = tk[i] && is_desc[i] && !e && d.len != 16'd0;
      badw[i] = tk[i] && is_desc[i] && !e &&
                ((d.len == 16'd0 && !d0_inline) || d.len > 16'd4096 ||
                 {4'd0, d.addr[11:0]} + d.len > 16'd4096 ||
                 (endw[i] && !win_end[i]));          // MAX_SEGS descriptors without EOP
      segi[i] = ns;
      if (segw[i] && 32'(ns) < SN) ns = ns + 5'd1;
      if (tk[i] && is_desc[i] && !e) add_len = add_len + 21'(d.len);
      if (tk[i] && e) add_err = 1'b1;
      if (badw[i]) add_bad = 1'b1;
      if (tk[i] && inl[i]) add_inl = add_inl + 5'd1;
      if (tk[i] && is_desc[i]) add_desc = add_desc + 5'd1;
    end
    add_seg = ns;
  end

  always_ff @(posedge clk) begin
    if (take) begin
      automatic rec_t r = rec_q[tb_q];
      if (first) begin
        r.qid        = 3'(win_q);
        r.desc_idx   = desc_hw_idx[win_q];
        r.nent       = '0;
        r.tag        = d0.tag;
        r.csum_en    = d0.csum;
        r.csum_udp   = d0.csum_udp;
        r.csum_start = d0.csum_start;
        r.csum_off   = d0.csum_offset;
        r.inline_len = (d0_inl && !win[0][128]) ? d0.inline_len : 8'd0;
        r.len        = (d0_inl && !win[0][128]) ? 21'(d0.inline_len) : 21'd0;
        r.bad_seg    = 1'b0;
        r.desc_err   = 1'b0;
        r.tso        = tso_now;
      end
      r.nent     = r.nent + 16'(pop_n);
      r.len      = r.len + add_len;
      r.bad_seg  = r.bad_seg || add_bad;
      r.desc_err = r.desc_err || add_err;
      r.nseg     = add_seg;
      rec_q[tb_q] <= r;
      for (int unsigned i = 0; i < W; i++) begin
        /* verilator lint_off UNUSEDSIGNAL */         // a segment is its address and length
        automatic tx_desc_t d = tx_desc_t'(win[i][127:0]);
        /* verilator lint_on UNUSEDSIGNAL */
        if (segw[i] && 32'(segi[i]) < SN) begin
          seg_addr_q[tb_q][SW'(segi[i])] <= d.addr;
          seg_len_q[tb_q][SW'(segi[i])]  <= d.len[12:0];
        end
        if (tk[i] && inl[i]) begin
          automatic int unsigned m = first ? i - 1 : 32'(ji_q) + i;
          // A TSO send's inline entry 0 is its context, the header starts at entry 1: one
          // header write per window entry either way (two would double hdr_q's write ports).
          automatic int unsigned hm = tso_fr ? m - 1 : m;
          if (tso_fr && m == 0) ctx_q[tb_q] <= win[i][127:0];
          else if (hm < HE) hdr_q[tb_q][128 * hm +: 128] <= win[i][127:0];
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      mid_q        <= 1'b0;
      lchk_q       <= 1'b0;
      ri_q         <= '0;
      ji_q         <= '0;
      nd_q         <= '0;
      lk_q         <= '0;
      leop_q       <= 1'b0;
      ltso_q       <= 1'b0;
      eop_seen_q   <= 1'b0;
      incomplete_q <= '0;
      pushed_q     <= '0;
      halted_q     <= '0;
      tb_q         <= 1'b0;
    end else begin
      // New entries may complete a frame; a stopped queue has none. The window shows a queue's
      // entries up to those pushed two cycles before (its fill count is registered from the
      // registered cache count), so entries pushed in this or the previous cycle make a frame
      // found incomplete now worth another look.
      automatic logic [NUM_TXQ-1:0] fresh = pushed | pushed_q;
      automatic logic [NUM_TXQ-1:0] inc   = incomplete_q & ~fresh & q_enable;
      if (mark_incomplete) inc[win_q] = !fresh[win_q];
      incomplete_q <= inc;
      pushed_q     <= pushed;
      // A frame of one failed first descriptor halts an inline_en queue until it stops.
      halted_q     <= (halted_q | ((take && first && win[0][128] && q_inline_en[win_q]) ? (NUM_TXQ)'(1) << win_q : '0))
                      & run;
      if (to_lchk) begin
        lchk_q <= 1'b1;
        lk_q   <= k0;
        leop_q <= win_end[0];
        ltso_q <= tso_now;
      end else if (lchk_q && (take || mark_incomplete)) begin
        lchk_q <= 1'b0;
      end
      if (take) begin
        if (take_done) begin
          mid_q  <= 1'b0;
          tb_q   <= !tb_q;
        end else begin
          // Continue with the entries after this window.
          automatic logic [5:0] inl_end = first ? 6'(k0) + 6'd1 : 6'(ri_q);   // window coordinates
          mid_q <= 1'b1;
          ri_q  <= (32'(inl_end) > W) ? 5'(32'(inl_end) - W) : 5'd0;
          if (first) eop_seen_q <= win_end[0];
          ji_q  <= (first ? 5'd0 : ji_q) + add_inl;
          nd_q  <= (first ? 5'd0 : nd_q) + add_desc;
        end
      end
    end
  end

  // ---------------------------------------------------------------- ISSUE: check
  rec_t          ir;
  logic          ivalid;            // ISSUE holds a frame
  logic          checked_q;         // its check passed (reads under way)
  logic [15:0]   limit;
  logic [16:0]   csum_end;
  tx_status_e    status;
  logic [RW-1:0] words;
  logic          room, go;
  logic [RW-1:0] resv_q;            // FIFO words reserved (frames in the FIFO or coming)
  logic [$clog2(EGR_FRAMES):0] frames_q;

  assign ir     = rec_q[ib_q];
  assign ivalid = full_q[ib_q];

  // The FIFO size caps the limit; compared in 32 bits, since a 64 KiB or larger FIFO does not
  // fit the 16-bit register (it then caps nothing).
  assign limit    = (32'(max_frame_len) > FIFO_WORDS * DB) ? 16'(FIFO_WORDS * DB) : max_frame_len;
  assign csum_end = {9'd0, ir.csum_start} + {9'd0, ir.csum_off} + 17'd2;

  // A TSO send's rules (docs/tx.md, "TCP segmentation offload": BAD_SEG, TSO_BAD_HDR,
  // TSO_BAD_LEN, TSO_BAD_MSS, after DESC_RD_ERR), from its descriptors and context entry.
  tx_tso_ctx_t   ictx;
  logic [8:0]    iphl;              // csum_start - l3_offset (bit 8: negative)
  logic [21:0]   tpay;              // len - hdr_len (bit 21: negative)
  logic          t_bad_hdr, t_bad_len, t_bad_mss;
  logic [15:0]   t_fail_len;
  assign ictx      = tx_tso_ctx_t'(ctx_q[ib_q]);
  assign iphl      = {1'b0, ir.csum_start} - {1'b0, ictx.l3_offset};
  assign tpay      = {1'b0, ir.len} - 22'(ictx.hdr_len);
  assign t_bad_hdr = 32'(ictx.hdr_len) > TX_TSO_MAX_HDR || 32'(ir.inline_len) > TX_INLINE_MAX
                     || ir.inline_len > ictx.hdr_len || !ir.csum_en || ir.csum_udp
                     || ir.csum_off != 8'd16 || ir.csum_start[0] || ictx.l3_offset < 8'd14
                     || iphl[8]
                     || (ictx.ipv6 ? iphl < 9'd40
                                   : (iphl < 9'd20 || iphl > 9'd60 || iphl[1:0] != 2'd0))
                     || {1'b0, ictx.hdr_len} < {1'b0, ir.csum_start} + 9'd20;
  assign t_bad_len = tpay[21] || tpay == '0 || tpay > 22'(TX_TSO_MAX_PAYLOAD);
  assign t_bad_mss = 32'(ictx.mss) < TX_TSO_MIN_MSS || 17'(ictx.hdr_len) + 17'(ictx.mss) > 17'(limit);
  assign t_fail_len = tpay[21] ? 16'd0 : tpay[15:0];

  always_comb begin
    if (ir.desc_err)                                  status = TX_DESC_RD_ERR;
    else if (ir.bad_seg)                              status = TX_BAD_SEG;
    else if (ir.tso && t_bad_hdr)                     status = TX_TSO_BAD_HDR;
    else if (ir.tso && t_bad_len)                     status = TX_TSO_BAD_LEN;
    else if (ir.tso && t_bad_mss)                     status = TX_TSO_BAD_MSS;
    else if (ir.tso)                                  status = TX_OK;
    else if (ir.len < 21'(TX_MIN_FRAME_LEN) || ir.len > {5'd0, limit} ||
             32'(ir.inline_len) > TX_INLINE_MAX)      status = TX_BAD_LEN;
    else if (ir.csum_en && (ir.csum_start[0] || ir.csum_off[0] || {4'd0, csum_end} > ir.len))
                                                      status = TX_BAD_CSUM;
    else                                              status = TX_OK;
  end

  // A good TSO send goes to the TSO sequencer below (tso_start) instead.
  logic          tso_start, t_seg_issue, t_mode;
  logic [RW-1:0] t_words, rwords;
  logic [HB-1:0] t_hdr;
  logic [17:0]   t_user;
  logic          t_room;
  logic          t_hdr_err_q;       // the TSO send's header read failed
  assign words = RW'((ir.len + 21'(DB - 1)) >> LW);
  assign room  = ({1'b0, resv_q} + {1'b0, words} <= (RW+1)'(FIFO_WORDS)) && (32'(frames_q) < EGR_FRAMES)
                 && hn_ready;
  assign go    = ivalid && !checked_q && ord_ready && (status != TX_OK || room) && !(ir.tso && status == TX_OK);
  assign t_room = ({1'b0, resv_q} + {1'b0, t_words} <= (RW+1)'(FIFO_WORDS)) && (32'(frames_q) < EGR_FRAMES)
                  && hn_ready;
  assign rwords = t_mode ? t_words : words;

  assign ord_valid   = go || tso_start;
  assign ord_nodata  = !tso_start && status != TX_OK;
  assign fail_valid  = go && status != TX_OK;
  assign frame_valid = (go && status == TX_OK) || t_seg_issue;
  assign hn_valid    = frame_valid || tso_start;
  assign hn_tso      = tso_start;
  assign hn_len      = t_seg_issue ? ictx.hdr_len : ir.inline_len;
  assign hn_data     = t_seg_issue || (tso_start ? ir.inline_len != ictx.hdr_len : ir.nseg != '0);
  assign hn_hdr      = t_seg_issue ? t_hdr : hdr_q[ib_q];

  always_comb begin
    fail_cpl          = '0;
    fail_cpl.qid      = ir.qid;
    fail_cpl.desc_idx = ir.desc_idx;
    fail_cpl.ndesc    = ir.nent;
    fail_cpl.status   = status;
    if (status != TX_DESC_RD_ERR) begin
      fail_cpl.len = ir.tso ? t_fail_len : ir.len[15:0];
      fail_cpl.tag = ir.tag;
    end
    fail_cpl.tso = ir.tso && status != TX_DESC_RD_ERR;
  end

  always_comb begin
    frame            = '0;
    frame.qid        = ir.qid;
    frame.desc_idx   = ir.desc_idx;
    frame.ndesc      = ir.nent;
    frame.len        = ir.len[15:0];
    frame.tag        = ir.tag;
    frame.csum_en    = ir.csum_en;
    frame.csum_udp   = ir.csum_udp;
    frame.csum_start = ir.csum_start;
    frame.csum_pos   = {8'd0, ir.csum_start} + {8'd0, ir.csum_off};
    if (t_mode) begin                                    // segment k of a TSO send
      frame.len        = 16'(ictx.hdr_len) + t_user[15:0];
      frame.csum_en    = 1'b1;
      frame.csum_udp   = 1'b0;
      frame.tso        = 1'b1;
      frame.tso_last   = t_user[16];
      frame.tso_poison = t_hdr_err_q;
      frame.tso_pay    = tpay[15:0];
    end
  end

  // ---------------------------------------------------------------- ISSUE: reads
  logic [SW-1:0] si_q;              // segment being issued
  logic [9:0]    issued_q;          // its beats already requested
  logic [63:0]   s_addr;
  logic [12:0]   s_len;
  logic [13:0]   s_end;
  logic [9:0]    s_beats, left;
  logic [8:0]    burst;
  logic          seg_done, last_seg, reading, ar_free, ar_load, frame_issued;
  logic          ar_valid_q;
  logic [ADDR_W-1:0] ar_addr_q;
  logic [7:0]    ar_len_q;

  // The read being issued: the record's segment si_q, or in a TSO send tx_tso_rd's (a header
  // read, or a read of the open TCP segment's payload).
  logic [63:0]   rd_addr;
  logic [12:0]   rd_len;
  logic          rd_valid, rd_ready, rd_hdr, rd_seg_end, rd_ok;
  logic          seg_open_q;         // a TSO segment's frame note is out, its reads are not all issued
  assign s_addr   = t_mode ? rd_addr : seg_addr_q[ib_q][si_q];
  assign s_len    = t_mode ? rd_len : seg_len_q[ib_q][si_q];
  assign s_end    = {1'b0, s_len} + 14'(s_addr[LW-1:0]);
  assign s_beats  = 10'((s_end + 14'(DB - 1)) >> LW);
  assign left     = s_beats - issued_q;
  assign burst    = (left > 10'(MAX_BURST)) ? 9'(MAX_BURST) : 9'(left);
  assign seg_done = {1'b0, burst} == left;
  assign last_seg = t_mode ? rd_seg_end : 5'(si_q) + 5'd1 == ir.nseg;
  assign rd_ok    = rd_valid && (rd_hdr || seg_open_q);

  // Reads go out in the cycle of the check and after it, one burst per cycle.
  assign reading  = t_mode ? rd_ok : ivalid && ir.nseg != '0 && (checked_q || (go && status == TX_OK));
  assign ar_free  = !ar_valid_q || m_arready;
  assign ar_load  = reading && ar_free && bn_ready;
  assign frame_issued = ar_load && seg_done && last_seg && !t_mode;
  assign rd_ready = t_mode && ar_load && seg_done;

  assign m_arvalid     = ar_valid_q;
  assign m_araddr      = ar_addr_q;
  assign m_arlen       = ar_len_q;
  assign bn_valid      = ar_load;
  assign bn_beats      = burst;
  assign bn_lo         = (issued_q == '0) ? s_addr[LW-1:0] : '0;
  assign bn_hi         = seg_done ? ((s_end[LW-1:0] == '0) ? (LW+1)'(DB) : {1'b0, s_end[LW-1:0]}) : (LW+1)'(DB);
  assign bn_frame_last = seg_done && last_seg;

  // The frame leaves ISSUE when it failed, when it has no reads, or with its last burst.
  logic issue_done, tso_done;
  assign issue_done = (go && (status != TX_OK || ir.nseg == '0)) || frame_issued || tso_done;

  always_ff @(posedge clk) begin
    if (rst) begin
      ar_valid_q <= 1'b0;
      checked_q  <= 1'b0;
      si_q       <= '0;
      issued_q   <= '0;
      full_q     <= '0;
      ib_q       <= 1'b0;
    end else begin
      automatic logic [1:0] full_n = full_q;
      if (m_arready) ar_valid_q <= 1'b0;
      if (ar_load) begin
        ar_valid_q <= 1'b1;
        ar_addr_q  <= ADDR_W'({s_addr[63:LW], {LW{1'b0}}} + {44'd0, issued_q, {LW{1'b0}}});
        ar_len_q   <= 8'(burst - 9'd1);
        if (seg_done) begin
          issued_q <= '0;
          if (!t_mode) si_q <= last_seg ? '0 : si_q + 1'b1;
        end else begin
          issued_q <= issued_q + 10'(burst);
        end
      end
      if (go && status == TX_OK && ir.nseg != '0 && !frame_issued) checked_q <= 1'b1;
      if (tso_start) checked_q <= 1'b1;
      if (issue_done) begin
        checked_q    <= 1'b0;
        full_n[ib_q] = 1'b0;
        ib_q         <= !ib_q;
      end
      if (take && take_done) full_n[tb_q] = 1'b1;
      full_q <= full_n;
    end
  end

  // ---------------------------------------------------------------- TSO sequencer
  // A good TSO send (docs/tx.md, "TCP segmentation offload", "RTL plan"): its order note and a
  // header note for its header (inline bytes and header reads) go out together (tso_start);
  // the header, gathered, comes back on g_tso_* into tx_tso_hdr (through a FIFO of one
  // header: tx_gather does not wait). tx_tso_rd walks the send's segments into header reads
  // and per TCP segment payload reads. For every TCP segment k, once tx_tso_hdr shows its
  // patched header and the TX FIFO has room for the segment: its frame note and its header
  // (as an inline header) go out (t_seg_issue), then its payload reads; the segment is then a
  // frame like any other for tx_gather, tx_store and tx_egress. The record bank is freed when
  // the last segment's reads are issued and both blocks are idle.
  localparam int unsigned HNB = (TX_TSO_MAX_HDR + DB - 1) / DB;          // words of a header
  localparam int unsigned HFD = (HNB < 2) ? 2 : (1 << $clog2(HNB));
  typedef enum logic [1:0] { TS_IDLE, TS_RUN, TS_FIN } ts_e;
  ts_e           ts_q;
  logic [SW-1:0] di_q;               // next segment (descriptor) for tx_tso_rd
  logic          d_all_q;            // every segment handed to tx_tso_rd
  logic          drain_q;            // the issued TCP segment's header beats are being taken
  logic          seg_last_q;         // the open TCP segment is the send's last
  logic          th_cmd_ready, tr_cmd_ready, th_busy, tr_busy;
  logic          th_valid, th_ready, th_last;
  logic [DMA_DATA_W-1:0] th_data;
  logic [DB-1:0] th_keep;
  logic          hf_valid, hf_ready, hf_last, hf_in_ready;
  logic [DMA_DATA_W-1:0] hf_data;
  logic          td_ready, rd_send_end;
  logic [15:0]   rd_seg;
  logic [$clog2(HFD):0] hf_count;

  assign t_mode      = ts_q != TS_IDLE;
  assign tso_start   = ivalid && !checked_q && ir.tso && status == TX_OK && ord_ready && hn_ready
                       && ts_q == TS_IDLE && th_cmd_ready && tr_cmd_ready;
  assign t_seg_issue = ts_q == TS_RUN && th_valid && !drain_q && !seg_open_q && t_room;
  assign t_words     = RW'((17'(ictx.hdr_len) + 17'(t_user[15:0]) + 17'(DB - 1)) >> LW);
  assign th_ready    = t_seg_issue || drain_q;
  assign tso_done    = ts_q == TS_FIN && !drain_q && !th_busy && !tr_busy;

  always_ff @(posedge clk) begin
    if (rst) begin
      ts_q        <= TS_IDLE;
      di_q        <= '0;
      d_all_q     <= 1'b0;
      drain_q     <= 1'b0;
      seg_open_q  <= 1'b0;
      seg_last_q  <= 1'b0;
      t_hdr_err_q <= 1'b0;
    end else begin
      if (tso_start) begin
        ts_q        <= TS_RUN;
        di_q        <= '0;
        d_all_q     <= 1'b0;
        t_hdr_err_q <= 1'b0;
      end
      if (t_mode && !d_all_q && td_ready) begin
        di_q <= di_q + 1'b1;
        if (5'(di_q) + 5'd1 == ir.nseg) d_all_q <= 1'b1;
      end
      if (g_tso_valid && g_tso_last && g_tso_err) t_hdr_err_q <= 1'b1;
      if (t_seg_issue) begin
        seg_open_q <= 1'b1;
        seg_last_q <= t_user[16];
        drain_q    <= !th_last;
      end else if (drain_q && th_valid && th_last) begin
        drain_q <= 1'b0;
      end
      if (rd_ready && !rd_hdr && rd_seg_end) begin
        seg_open_q <= 1'b0;
        if (seg_last_q) ts_q <= TS_FIN;
      end
      if (tso_done) ts_q <= TS_IDLE;
    end
  end

  // The gathered header: one header's words at most, taken as they come.
  sync_fifo #(.WIDTH(DMA_DATA_W + 1), .DEPTH(HFD)) u_hdr_fifo (
    .clk, .rst, .clear (1'b0),
    .in_valid (g_tso_valid), .in_ready (hf_in_ready), .in_data ({g_tso_last, g_tso_data}),
    .out_valid (hf_valid), .out_ready (hf_ready), .out_data ({hf_last, hf_data}), .count (hf_count)
  );

  tx_tso_hdr #(.DATA_W(DMA_DATA_W)) u_tso_hdr (
    .clk, .rst,
    .s_cmd_valid   (tso_start),
    .s_cmd_ready   (th_cmd_ready),
    .s_cmd_hdr_len (ictx.hdr_len),
    .s_cmd_l3_off  (ictx.l3_offset),
    .s_cmd_l4_off  (ir.csum_start),
    .s_cmd_ipv6    (ictx.ipv6),
    .s_cmd_mss     (ictx.mss),
    .s_cmd_pay_len (tpay[15:0]),
    .s_hdr_tdata   (hf_data),
    .s_hdr_tlast   (hf_last),
    .s_hdr_tvalid  (hf_valid),
    .s_hdr_tready  (hf_ready),
    .m_tdata       (th_data),
    .m_tkeep       (th_keep),
    .m_tlast       (th_last),
    .m_tuser       (t_user),
    .m_tvalid      (th_valid),
    .m_tready      (th_ready),
    .m_hdr         (t_hdr),
    .busy          (th_busy)
  );

  tx_tso_rd #(.AW(64)) u_tso_rd (
    .clk, .rst,
    .s_cmd_valid    (tso_start),
    .s_cmd_ready    (tr_cmd_ready),
    .s_cmd_hdr_left (ictx.hdr_len - ir.inline_len),
    .s_cmd_mss      (ictx.mss),
    .s_desc_valid   (t_mode && !d_all_q),
    .s_desc_ready   (td_ready),
    .s_desc_addr    (seg_addr_q[ib_q][di_q]),
    .s_desc_len     (seg_len_q[ib_q][di_q]),
    .s_desc_last    (5'(di_q) + 5'd1 == ir.nseg),
    .m_rd_valid     (rd_valid),
    .m_rd_ready     (rd_ready),
    .m_rd_addr      (rd_addr),
    .m_rd_len       (rd_len),
    .m_rd_hdr       (rd_hdr),
    .m_rd_seg       (rd_seg),
    .m_rd_seg_end   (rd_seg_end),
    .m_rd_send_end  (rd_send_end),
    .busy           (tr_busy)
  );

  // ---------------------------------------------------------------- FIFO reservation
  always_ff @(posedge clk) begin
    if (rst) begin
      resv_q   <= '0;
      frames_q <= '0;
    end else begin
      resv_q   <= resv_q + (frame_valid ? rwords : '0) - RW'(rel_word)
                         - (rel_discard ? rel_discard_words : '0);
      frames_q <= frames_q + ($clog2(EGR_FRAMES)+1)'(frame_valid)
                           - ($clog2(EGR_FRAMES)+1)'(rel_frame) - ($clog2(EGR_FRAMES)+1)'(rel_discard);
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
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen) begin
      if (mid_q && !found && 32'(win_n) != W) $error("tx_sched: a long frame ran out of cached entries");
      if (take && take_done && full_q[tb_q]) $error("tx_sched: frame taken into a full record bank");
      if (g_tso_valid && !hf_in_ready) $error("tx_sched: a TSO header word found its FIFO full");
    end
  end
`endif

  assign q_halted = halted_q;

  logic unused;
  assign unused = ^{d0.eop, d0.rsvd_10_4, d0.tso, d0.addr, d0.len, th_data, th_keep,
                   ictx.rsvd_5, ictx.rsvd_4_1, rd_seg, rd_send_end, hf_count, t_user[17]};
endmodule
