// Properties of rtl/common/desc_engine.sv: descriptor prefetch for NR rings of 16-byte
// descriptors in host memory. Bound by desc_engine_bind.sv; proved by tb/formal/desc_engine.sby.
//
// Proved, for every reachable state after a reset, every ring and every ring size (ring_log2 a
// free input, 0..15):
//   - posted only: a descriptor handed to the user (rd_valid) is the next one in ring order
//     (index i = descriptors handed out since the ring started) and is posted and not yet
//     consumed: i - HW_IDX < SW_IDX - HW_IDX;
//   - the right bytes: it is the 16 bytes at ring_base + 16 * (i mod ring size): the read slave
//     below answers every 64-bit word with its own address, so a wrong address, lane, beat
//     or wrap shows in the data;
//   - reads are exact: every beat of a read of a running ring yields a descriptor and the
//     burst ends with the batch's last one (no beats beyond the posted batch, none missing);
//   - AR: valid held until ready with a stable payload, ARID in the engine's range, no 4 KiB
//     crossing, at most one read per ring, a read only for a ring that may fetch and runs;
//   - the cache never overflows: a descriptor handed out and not skipped is always cached,
//     the count stays within CACHE_DEPTH and equals handed out minus consumed; the cache is
//     a FIFO per ring (a tracked entry of a free ring comes to its head with its data, after
//     exactly the entries ahead of it);
//   - HW_IDX counts descriptors consumed (popped or skipped); a stopped ring has HW_IDX 0 and
//     an empty cache.
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - AXI read slave: an R beat only for a read it accepted (RID in the engine's range), the
//     beats of one read in address order with RLAST on the last (reads of different rings
//     may interleave), R held stable while RREADY is low; RRESP free (errors included);
//   - memory: every 64-bit word holds its own byte address (a data-independent design moves
//     any data as it moves these);
//   - the driver: a ring's base (16-byte aligned, as BASE_LO[3:0] reads zero) and size stay
//     put while it runs; SW_IDX never moves back and is never more than a ring ahead of HW_IDX;
//   - head_sel names existing rings; fetch_en, run, desc_pop, rd_skip, rd_data, ARREADY free.
/* verilator lint_off UNUSEDSIGNAL */  // ports and history some checks of a proof only read
/* verilator lint_off UNSIGNED */      // range checks that are constant for some parameters
module desc_engine_props #(
  parameter int unsigned NR          = 2,
  parameter int unsigned DMA_DATA_W  = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned ID_W        = 5,
  parameter int unsigned ID_BASE     = 0,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned MAX_BATCH   = 8,
  parameter int unsigned CACHE_W     = 128,
  parameter int unsigned NHEAD       = 1,
  localparam int unsigned RW  = (NR > 1) ? $clog2(NR) : 1,
  localparam int unsigned CW  = $clog2(CACHE_DEPTH) + 1,
  localparam int unsigned DB  = DMA_DATA_W / 8,
  localparam int unsigned DPB = (DB >= 16) ? DB / 16 : 1,
  localparam int unsigned BPD = (DB >= 16) ? 1 : 16 / DB,
  localparam int unsigned LW  = (DPB > 1) ? $clog2(DPB) : 1,
  localparam int unsigned HW  = $clog2(BPD + 1),
  localparam int unsigned KW  = $clog2(MAX_BATCH + 1),
  localparam int unsigned AW  = $clog2(CACHE_DEPTH)
) (
  input logic                          clk,
  input logic                          rst,
  input logic [NR-1:0]                 fetch_en,
  input logic [NR-1:0]                 run,
  input logic [NR-1:0][63:0]           ring_base,
  input logic [NR-1:0][3:0]            ring_log2,
  input logic [NR-1:0][15:0]           sw_idx,
  input logic                          m_arvalid,
  input logic                          m_arready,
  input logic [ADDR_W-1:0]             m_araddr,
  input logic [7:0]                    m_arlen,
  input logic [ID_W-1:0]               m_arid,
  input logic                          m_rvalid,
  input logic                          m_rready,
  input logic [ID_W-1:0]               m_rid,
  input logic [DMA_DATA_W-1:0]         m_rdata,
  input logic [1:0]                    m_rresp,
  input logic                          m_rlast,
  input logic                          rd_valid,
  input logic [RW-1:0]                 rd_ring,
  input logic [127:0]                  rd_desc,
  input logic                          rd_skip,
  input logic [CACHE_W-1:0]            rd_data,
  input logic                          cache_push,
  input logic [NR-1:0]                 desc_valid,
  input logic [NR-1:0][CW-1:0]         cache_count,
  input logic [NR-1:0]                 desc_pop,
  input logic [NHEAD-1:0][RW-1:0]      head_sel,
  input logic [NHEAD-1:0][CACHE_W-1:0] head_data,
  input logic [NR-1:0][15:0]           hw_idx,
  // design state, for the induction invariants
  input logic [15:0]                   fetch_idx_q [NR],
  input logic [AW:0]                   rd_ptr_q    [NR],
  input logic [KW-1:0]                 left_q      [NR],
  input logic [LW-1:0]                 lane_q      [NR],
  input logic [HW-1:0]                 half_q      [NR],
  input logic [63:0]                   lo_q        [NR],
  input logic [NR-1:0]                 inflight_q,
  input logic [NR-1:0]                 discard_q,
  input logic [CACHE_W-1:0]            cache_q     [NR * CACHE_DEPTH],
  input logic [NR-1:0]                 run_q,
  input logic                          ar_valid_q,
  input logic [ADDR_W-1:0]             ar_addr_q,
  input logic [7:0]                    ar_len_q,
  input logic [RW-1:0]                 ar_ring_q
);
  localparam int unsigned DBW = $clog2(DB);

  // ------------------------------------------------------------------ reset
  logic f_started;                        // a reset has been sampled
  initial f_started = 1'b0;
  always_ff @(posedge clk) if (rst) f_started <= 1'b1;
`ifdef FORMAL
  always_comb if (!f_started) assume (rst);
`endif
  logic f_on;                             // state defined and not in reset
  assign f_on = f_started && !rst;

  // The previous cycle's inputs and outputs (f_past: it had a defined state).
  logic                  f_past;
  initial f_past = 1'b0;
  logic                  p_arvalid, p_arready, p_rvalid, p_rready;
  logic [ADDR_W-1:0]     p_araddr;
  logic [7:0]            p_arlen;
  logic [ID_W-1:0]       p_arid, p_rid;
  logic [DMA_DATA_W-1:0] p_rdata;
  logic [1:0]            p_rresp;
  logic                  p_rlast;
  logic [NR-1:0]         p_run, p_fetch_en;
  logic [NR-1:0][63:0]   p_ring_base;
  logic [NR-1:0][3:0]    p_ring_log2;
  logic [NR-1:0][15:0]   p_sw_idx, p_hw_idx;
  always_ff @(posedge clk) begin
    f_past      <= f_on;
    p_arvalid   <= m_arvalid;
    p_arready   <= m_arready;
    p_araddr    <= m_araddr;
    p_arlen     <= m_arlen;
    p_arid      <= m_arid;
    p_rvalid    <= m_rvalid;
    p_rready    <= m_rready;
    p_rid       <= m_rid;
    p_rdata     <= m_rdata;
    p_rresp     <= m_rresp;
    p_rlast     <= m_rlast;
    p_run       <= run;
    p_fetch_en  <= fetch_en;
    p_ring_base <= ring_base;
    p_ring_log2 <= ring_log2;
    p_sw_idx    <= sw_idx;
    p_hw_idx    <= hw_idx;
  end

  // ------------------------------------------------------------------ the read slave's model
  // Per ring: an accepted read whose beats are still due, its next beat's address and the
  // beats left.
  logic [NR-1:0]       f_open;
  logic [NR-1:0][63:0] f_baddr;
  logic [NR-1:0][8:0]  f_bleft;
  logic [RW-1:0]       f_ar_ring, f_r_ring;
  logic                f_ar_fire, f_r_fire;
  assign f_ar_ring = RW'(m_arid - ID_W'(ID_BASE));
  assign f_r_ring  = RW'(m_rid - ID_W'(ID_BASE));
  assign f_ar_fire = m_arvalid && m_arready;
  assign f_r_fire  = m_rvalid && m_rready;

  always_ff @(posedge clk) begin
    if (rst) begin
      f_open <= '0;
    end else begin
      if (f_r_fire) begin
        f_baddr[f_r_ring] <= f_baddr[f_r_ring] + 64'(DB);
        f_bleft[f_r_ring] <= f_bleft[f_r_ring] - 1'b1;
        if (m_rlast) f_open[f_r_ring] <= 1'b0;
      end
      if (f_ar_fire) begin
        f_open[f_ar_ring]  <= 1'b1;
        f_baddr[f_ar_ring] <= 64'(m_araddr);
        f_bleft[f_ar_ring] <= {1'b0, m_arlen} + 9'd1;
      end
    end
  end

  // ------------------------------------------------------------------ per-ring model
  // f_cnt: descriptors handed out since the ring started (the free-running index of the next).
  logic [NR-1:0][15:0] f_cnt;
  logic [NR-1:0]       f_stop;
  assign f_stop = run_q & ~run;
  always_ff @(posedge clk) begin
    for (int unsigned r = 0; r < NR; r++) begin
      if (rst || f_stop[r]) f_cnt[r] <= '0;
      else if (rd_valid && rd_ring == RW'(r)) f_cnt[r] <= f_cnt[r] + 16'd1;
    end
  end

  // The address of descriptor i of ring r, and a read's beats for n descriptors from entry e.
  function automatic logic [63:0] entry(input int unsigned r, input logic [15:0] i);
    logic [15:0] mask;
    mask = (16'd1 << ring_log2[r]) - 16'd1;
    return ring_base[r] + {44'd0, i & mask, 4'd0};
  endfunction
  function automatic logic [8:0] beats(input logic [63:0] e, input logic [KW-1:0] n);
    if (DB >= 16) return 9'((32'(e[DBW-1:0]) + 32'(n) * 16 + DB - 1) / DB);
    else          return 9'(32'(n) * BPD);
  endfunction

  // ------------------------------------------------------------------ environment
`ifdef FORMAL
  always_comb begin
    if (f_started) begin
      // R: only for an accepted read, RLAST on its last beat, every word its own address.
      if (m_rvalid) begin
        assume (32'(m_rid) >= ID_BASE && 32'(m_rid) < ID_BASE + NR);
        assume (f_open[f_r_ring]);
        assume (m_rlast == (f_bleft[f_r_ring] == 9'd1));
        for (int unsigned w = 0; w < DB / 8; w++) begin
          assume (m_rdata[64 * w +: 64] == f_baddr[f_r_ring] + 64'(8 * w));
        end
      end
      for (int unsigned r = 0; r < NR; r++) begin
        assume (ring_base[r][3:0] == 4'd0);
        // SW_IDX never more than a ring ahead of HW_IDX
        if (run[r]) assume ((sw_idx[r] - hw_idx[r]) <= (16'd1 << ring_log2[r]));
      end
      for (int unsigned h = 0; h < NHEAD; h++) assume (32'(head_sel[h]) < NR);
    end
    if (f_past) begin
      // R held while not taken
      if (p_rvalid && !p_rready) begin
        assume (m_rvalid && m_rid == p_rid && m_rdata == p_rdata && m_rresp == p_rresp && m_rlast == p_rlast);
      end
      for (int unsigned r = 0; r < NR; r++) begin
        if (run[r] && p_run[r]) begin
          // a running ring keeps its base and size; SW_IDX does not move back
          assume (ring_base[r] == p_ring_base[r] && ring_log2[r] == p_ring_log2[r]);
          assume ((sw_idx[r] - p_hw_idx[r]) >= (p_sw_idx[r] - p_hw_idx[r]));
        end
      end
    end
  end
`endif

  // ------------------------------------------------------------------ tracked cache entry
  // In a proof the .sby script makes f_any_* a fresh free value every cycle ($anyseq) and
  // f_const_* one free value for the whole trace ($anyconst); in simulation, pseudo-random.
  logic          f_any_pick;              // track the entry pushed now
  logic [RW-1:0] f_const_ring;            // the ring whose cache is tracked
  logic [RW-1:0] f_tring;
  assign f_tring = f_const_ring;
`ifdef FORMAL
  always_comb assume (32'(f_tring) < NR);
`else
  logic [15:0] f_lfsr;
  initial f_lfsr = 16'h1d0f;
  always_ff @(posedge clk) f_lfsr <= {f_lfsr[14:0], f_lfsr[15] ^ f_lfsr[13] ^ f_lfsr[12] ^ f_lfsr[10]};
  logic [RW-1:0] f_ring_q;                // one ring per reset
  always_ff @(posedge clk) if (rst) f_ring_q <= RW'(32'(f_lfsr[8:7]) % NR);
  assign f_any_pick   = f_lfsr[0];
  assign f_const_ring = f_ring_q;
`endif
  logic               f_tracking;
  initial f_tracking = 1'b0;
  logic [CACHE_W-1:0] f_tdata;
  logic [AW:0]        f_tahead;
  logic               f_tpop;
  assign f_tpop = desc_pop[f_tring] && desc_valid[f_tring];
  always_ff @(posedge clk) begin
    if (rst || f_stop[f_tring]) begin
      f_tracking <= 1'b0;
    end else if (f_tracking) begin
      if (f_tpop) begin
        if (f_tahead == '0) f_tracking <= 1'b0;
        else                f_tahead   <= f_tahead - 1'b1;
      end
    end else if (f_started && cache_push && rd_ring == f_tring && f_any_pick) begin
      f_tracking <= 1'b1;
      f_tdata    <= rd_data;
      f_tahead   <= (AW + 1)'(cache_count[f_tring]) - (AW + 1)'(f_tpop);
    end
  end

  // ------------------------------------------------------------------ assertions
  logic [63:0] f_e;                       // address of the descriptor handed out now
  assign f_e = entry(32'(rd_ring), f_cnt[rd_ring]);

  always_comb begin
    if (f_on) begin
      // AR
      if (m_arvalid) begin
        a_ar_id_in_range: assert (32'(m_arid) >= ID_BASE && 32'(m_arid) < ID_BASE + NR);
        a_ar_no_4k_cross: assert ({1'b0, m_araddr[11:0]} + (13'(m_arlen) + 13'd1) * 13'(DB) <= 13'h1000);
      end
      if (f_ar_fire) a_ar_one_read_per_ring: assert (!f_open[f_ar_ring]);
      // what is handed out
      if (rd_valid && run[rd_ring]) begin
        a_desc_posted: assert ((f_cnt[rd_ring] - hw_idx[rd_ring]) < (sw_idx[rd_ring] - hw_idx[rd_ring]));
`ifdef FORMAL  // the memory that answers with its own address is the proof's
        a_desc_bytes: assert (rd_desc == {f_e + 64'd8, f_e});
`endif
        if (!rd_skip) a_cache_no_overflow: assert (cache_push);
      end
      if (cache_push) a_push_only_handed_out: assert (rd_valid && !rd_skip);
      // reads of a running ring are exact
      if (f_r_fire && inflight_q[f_r_ring] && !discard_q[f_r_ring]) begin
        a_read_beat_used: assert (rd_valid || (DB < 16 && half_q[f_r_ring] == '0));
        if (m_rlast) a_read_ends_with_batch: assert (rd_valid && f_cnt[f_r_ring] + 16'd1 == fetch_idx_q[f_r_ring]);
      end
    end
    if (f_started) begin
      if (ar_valid_q) begin
        i_ar_in_flight: assert (inflight_q[ar_ring_q]);
        if (!discard_q[ar_ring_q] && run[ar_ring_q]) begin
          i_ar_addr: assert (64'(ar_addr_q) == ((DB >= 16) ? (entry(32'(ar_ring_q), f_cnt[ar_ring_q]) & ~64'(DB - 1))
                                                           : entry(32'(ar_ring_q), f_cnt[ar_ring_q])));
          i_ar_len: assert ({1'b0, ar_len_q} + 9'd1 == beats(entry(32'(ar_ring_q), f_cnt[ar_ring_q]), left_q[ar_ring_q]));
          i_ar_batch_whole: assert (fetch_idx_q[ar_ring_q] - f_cnt[ar_ring_q] == 16'(left_q[ar_ring_q]));
        end
      end
      // the tracked cache entry
      if (f_tracking) begin
        a_tracked_cached: assert (f_tahead < (AW + 1)'(cache_count[f_tring]));
        i_tracked_stored: assert (cache_q[32'(f_tring) * CACHE_DEPTH + 32'(AW'(rd_ptr_q[f_tring] + f_tahead))] == f_tdata);
      end
    end
    if (f_past) begin
      // AR valid held until ready, payload stable
      if (p_arvalid && !p_arready) a_ar_held: assert (m_arvalid && m_araddr == p_araddr && m_arlen == p_arlen && m_arid == p_arid);
      // a new read only for a ring that may fetch and runs (it was picked in the cycle before)
      if (m_arvalid && !(p_arvalid && !p_arready)) begin
        a_ar_ring_may_fetch: assert (p_fetch_en[ar_ring_q] && p_run[ar_ring_q]);
      end
    end
  end

  // Per ring (a generate loop: each ring's assertions have their own names).
  for (genvar gr = 0; gr < NR; gr++) begin : g_ring
    localparam int unsigned r = gr;
    always_comb begin
      if (f_started) begin
        a_cache_count_le_depth: assert (cache_count[r] <= CW'(CACHE_DEPTH));
        a_cache_holds_handed_out_minus_consumed: assert (16'(cache_count[r]) == f_cnt[r] - hw_idx[r]);
        a_desc_valid_iff_cached: assert (desc_valid[r] == (cache_count[r] != '0));
        // induction invariants (design state against the models)
        if (!run_q[r]) i_stopped_zero: assert (fetch_idx_q[r] == '0 && hw_idx[r] == '0 && f_cnt[r] == '0 && rd_ptr_q[r] == '0);
        if (discard_q[r]) i_discard_in_flight: assert (inflight_q[r]);
        if (inflight_q[r] && !discard_q[r]) i_live_read_ring_ran: assert (run_q[r]);
        if (f_open[r]) i_open_in_flight: assert (inflight_q[r] && !(ar_valid_q && ar_ring_q == RW'(r)));
        if (inflight_q[r]) i_in_flight_open_or_ar: assert (f_open[r] || (ar_valid_q && ar_ring_q == RW'(r)));
        if (run_q[r] && run[r]) begin
          i_fetched_within_ring: assert ((fetch_idx_q[r] - hw_idx[r]) <= (16'd1 << ring_log2[r]));
          i_fetched_posted: assert ((fetch_idx_q[r] - hw_idx[r]) <= (sw_idx[r] - hw_idx[r]));
        end
        if (!inflight_q[r] || discard_q[r]) i_fetch_is_handed_out: assert (fetch_idx_q[r] == f_cnt[r]);
        // a read of a running ring (its settings are stable: not in the cycle run falls)
        if (inflight_q[r] && !discard_q[r] && run[r]) begin
          i_fetch_ahead_is_left: assert (fetch_idx_q[r] - f_cnt[r] == 16'(left_q[r]));
          i_room_reserved: assert (32'(cache_count[r]) + 32'(left_q[r]) <= CACHE_DEPTH);
          i_left_in_batch: assert (left_q[r] != '0 && 32'(left_q[r]) <= MAX_BATCH);
          // the rest of the batch lies before the ring's end and the next 4 KiB boundary
          i_rest_in_ring: assert (32'(f_cnt[r] & 16'((32'd1 << ring_log2[r]) - 32'd1)) + 32'(left_q[r]) <= (32'd1 << ring_log2[r]));
          i_rest_in_4k: assert (32'(entry(r, f_cnt[r]) & 64'hfff) + 32'(left_q[r]) * 16 <= 32'h1000);
          if (DB >= 16) begin
            i_lane: assert (32'(lane_q[r]) == 32'(entry(r, f_cnt[r]) >> 4) % DPB);
            if (f_open[r]) begin
              i_beat_addr_wide: assert (f_baddr[r] == (entry(r, f_cnt[r]) & ~64'(DB - 1)));
              i_beats_left_wide: assert (f_bleft[r] == beats(entry(r, f_cnt[r]), left_q[r]));
            end
          end else begin
            i_half: assert (32'(half_q[r]) < BPD);
`ifdef FORMAL  // the memory that answers with its own address is the proof's
            if (half_q[r] != '0) i_lo: assert (lo_q[r] == entry(r, f_cnt[r]));
`endif
            if (f_open[r]) begin
              i_beat_addr_narrow: assert (f_baddr[r] == entry(r, f_cnt[r]) + 64'(8 * 32'(half_q[r])));
              i_beats_left_narrow: assert (f_bleft[r] == beats(entry(r, f_cnt[r]), left_q[r]) - 9'(half_q[r]));
            end else begin
              i_half_zero_before_r: assert (half_q[r] == '0);
            end
          end
        end
      end
    end
  end

  for (genvar gh = 0; gh < NHEAD; gh++) begin : g_head
    always_comb begin
      if (f_started && f_tracking && f_tahead == '0 && head_sel[gh] == f_tring) begin
        a_tracked_at_head: assert (head_data[gh] == f_tdata);
      end
    end
  end

  // HW_IDX counts what is consumed: a pop of a cached descriptor or a skip, each once.
  logic [NR-1:0] p_stop, p_pop, p_skip;
  always_ff @(posedge clk) begin
    for (int unsigned r = 0; r < NR; r++) begin
      p_stop[r] <= rst || f_stop[r];
      p_pop[r]  <= desc_pop[r] && desc_valid[r];
      p_skip[r] <= rd_valid && rd_skip && rd_ring == RW'(r) && run[r];
    end
  end
  for (genvar gr = 0; gr < NR; gr++) begin : g_ring_hw
    always_comb begin
      if (f_past && !p_run[gr]) a_stopped_ring_empty: assert (hw_idx[gr] == '0 && cache_count[gr] == '0);
      if (f_past) a_hw_idx_counts_consumed: assert (hw_idx[gr] == (p_stop[gr] ? 16'd0 : p_hw_idx[gr] + 16'(p_pop[gr]) + 16'(p_skip[gr])));
    end
  end

  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_wrap: cover (rd_valid && run[rd_ring] && f_cnt[rd_ring] == 16'd3 && ring_log2[rd_ring] == 4'd1);
      c_cache_full: cover (cache_count[0] == CW'(CACHE_DEPTH));
      c_two_reads_interleaved: cover (f_open == '1 && f_r_fire);
      c_stop_mid_read: cover (f_stop[0] && inflight_q[0]);
      c_tracked_out: cover (f_tracking && f_tahead == '0 && f_tpop);
    end
  end
endmodule
