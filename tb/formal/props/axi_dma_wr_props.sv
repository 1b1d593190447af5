// Properties of rtl/common/axi_dma_wr.sv: "write these bytes at this address" commands to AXI4
// INCR bursts. Bound by axi_dma_wr_bind.sv; proved by tb/formal/axi_dma_wr.sby.
//
// Proved by k-induction (tb/formal/axi_dma_wr.sby), for every command length: with `define
// F_NO_W_SIDE the address side's rules (prove_aw_w64); without it every property below (prove_w;
// `define F_MAX_LEN bounds cmd_len, for the cover and bug-only BMC tasks):
//   - AXI master rules: AWVALID and WVALID held until READY with a stable payload; AWLEN + 1
//     within MAX_BURST; no burst crosses a 4 KiB boundary; AWSIZE the full bus width, INCR,
//     AWADDR aligned to it; WLAST exactly on the last beat of the burst the beat belongs to;
//   - bursts tile each command: in command order, the bursts of a command start at its address
//     rounded down to the bus width and follow each other without gap or overlap until the
//     command's last byte, with the command's AXI ID;
//   - bytes: every W beat's strobe is exactly the lanes whose byte lies in the command's
//     [addr, addr + len), ANDed with the source's in_strb for that beat (all ones but for a
//     source that packs several payloads into a beat); with the tiling above, no byte outside
//     [addr, addr + len) is ever written and none twice, and with in_strb all ones every byte
//     of it exactly once;
//   - data: one input beat per W beat (WDATA is the input beat), never more W beats than the
//     accepted commands hold;
//   - responses: b_err exactly for SLVERR/DECERR, with the BID; `idle` exactly when nothing
//     is in progress.
// The W beats and the AW bursts are matched by their order (AXI4 has no write interleaving),
// so the checks hold whether a burst's data goes before, with or after its address.
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - commands: valid held until ready with a stable payload; 1 <= cmd_len <= 65536 (the callers'
//     largest write is a 32 KiB payload buffer; see the note at the assumption); the range does
//     not wrap the address space; with `define F_MAX_LEN, cmd_len <= F_MAX_LEN;
//   - input beats: valid held until ready with stable data and in_strb;
//   - the AXI slave: AWREADY, WREADY, BVALID, BID, BRESP free (any order, any delay).
/* verilator lint_off UNUSEDSIGNAL */  // ports some checks of a proof only read
module axi_dma_wr_props #(
  parameter int unsigned DATA_W    = 64,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned MAX_BURST = 256,
  parameter int unsigned ID_W      = 4
) (
  input logic                clk,
  input logic                rst,
  input logic                cmd_valid,
  input logic                cmd_ready,
  input logic [ADDR_W-1:0]   cmd_addr,
  input logic [16:0]         cmd_len,
  input logic [ID_W-1:0]     cmd_id,
  input logic                in_valid,
  input logic                in_ready,
  input logic [DATA_W-1:0]   in_data,
  input logic [DATA_W/8-1:0] in_strb,
  input logic [ID_W-1:0]     m_awid,
  input logic [ADDR_W-1:0]   m_awaddr,
  input logic [7:0]          m_awlen,
  input logic [2:0]          m_awsize,
  input logic [1:0]          m_awburst,
  input logic                m_awvalid,
  input logic                m_awready,
  input logic [DATA_W-1:0]   m_wdata,
  input logic [DATA_W/8-1:0] m_wstrb,
  input logic                m_wlast,
  input logic                m_wvalid,
  input logic                m_wready,
  input logic [ID_W-1:0]     m_bid,
  input logic [1:0]          m_bresp,
  input logic                m_bvalid,
  input logic                m_bready,
  input logic                b_err,
  input logic [ID_W-1:0]     b_err_id,
  input logic                idle,
  input logic                burst_issue,
  // design state, for the induction invariants: the address side and the burst-note queue
  input logic                aw_active_q,
  input logic                aw_pend_q,
  input logic                aw_first_q,
  input logic [ID_W-1:0]     aw_id_q,
  input logic [ADDR_W-1:0]   aw_addr_q,
  input logic [13:0]         beats_left_q,
  input logic [$clog2(DATA_W / 8)-1:0] start_lane_q,
  input logic [$clog2(DATA_W / 8)-1:0] end_lane_q,
  input logic [8:0]          burst_beats,
  input logic [8:0]          wbeat_q,
  input logic [2:0]          wq_count,
  input logic [1:0]          wq_rd_ptr,
  input logic [9 + 2 + 2 * $clog2(DATA_W / 8) - 1:0] wq_mem [4]
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned LW = $clog2(DB);
  localparam int unsigned XW = ((ADDR_W > 17) ? ADDR_W : 17) + 1;  // address + length, no overflow
  localparam int unsigned EW = 9 + 2 + 2 * LW;  // a burst note: beats, first, last, start lane, end lane

  // ------------------------------------------------------------------ reset, history
  logic f_started, f_past;
  initial begin
    f_started = 1'b0;
    f_past    = 1'b0;
  end
  always_ff @(posedge clk) if (rst) f_started <= 1'b1;
`ifdef FORMAL
  always_comb if (!f_started) assume (rst);
`endif
  logic f_on;
  assign f_on = f_started && !rst;

  logic                p_cmd_valid, p_cmd_ready, p_in_valid, p_in_ready;
  logic [ADDR_W-1:0]   p_cmd_addr;
  logic [16:0]         p_cmd_len;
  logic [ID_W-1:0]     p_cmd_id;
  logic [DATA_W-1:0]   p_in_data;
  logic [DATA_W/8-1:0] p_in_strb;
  logic                p_awvalid, p_awready, p_wvalid, p_wready;
  logic [ID_W-1:0]     p_awid;
  logic [ADDR_W-1:0]   p_awaddr;
  logic [7:0]          p_awlen;
  logic [2:0]          p_awsize;
  logic [1:0]          p_awburst;
  logic [DATA_W-1:0]   p_wdata;
  logic [DATA_W/8-1:0] p_wstrb;
  logic                p_wlast;
  always_ff @(posedge clk) begin
    f_past      <= f_on;
    p_cmd_valid <= cmd_valid;
    p_cmd_ready <= cmd_ready;
    p_cmd_addr  <= cmd_addr;
    p_cmd_len   <= cmd_len;
    p_cmd_id    <= cmd_id;
    p_in_valid  <= in_valid;
    p_in_ready  <= in_ready;
    p_in_data   <= in_data;
    p_in_strb   <= in_strb;
    p_awvalid   <= m_awvalid;
    p_awready   <= m_awready;
    p_awid      <= m_awid;
    p_awaddr    <= m_awaddr;
    p_awlen     <= m_awlen;
    p_awsize    <= m_awsize;
    p_awburst   <= m_awburst;
    p_wvalid    <= m_wvalid;
    p_wready    <= m_wready;
    p_wdata     <= m_wdata;
    p_wstrb     <= m_wstrb;
    p_wlast     <= m_wlast;
  end

  logic f_cmd, f_aw, f_w, f_in;
  assign f_cmd = cmd_valid && cmd_ready;
  assign f_aw  = m_awvalid && m_awready;
  assign f_w   = m_wvalid && m_wready;
  assign f_in  = in_valid && in_ready;

  // ------------------------------------------------------------------ environment
`ifdef FORMAL
  always_comb begin
    if (f_started) begin
      if (cmd_valid) begin
        // callers write at most a 32 KiB payload buffer; beats_left_q (14 bits) holds
        // 131064 bytes at 64 bits, the 17-bit cmd_len up to 131071
        assume (cmd_len != '0 && cmd_len <= 17'h10000);
        assume ({1'b0, cmd_addr} + XW'(cmd_len) <= (XW'(1) << ADDR_W));
`ifdef F_MAX_LEN
        assume (32'(cmd_len) <= `F_MAX_LEN);
`endif
      end
    end
    if (f_past) begin
      if (p_cmd_valid && !p_cmd_ready) assume (cmd_valid && cmd_addr == p_cmd_addr && cmd_len == p_cmd_len && cmd_id == p_cmd_id);
      if (p_in_valid && !p_in_ready) assume (in_valid && in_data == p_in_data && in_strb == p_in_strb);
    end
  end
`endif

  // ------------------------------------------------------------------ the command being issued on AW
  // Beats of a command: its bytes, from its address rounded down to the bus width.
  function automatic logic [15:0] cmd_beats(input logic [ADDR_W-1:0] a, input logic [16:0] n);
    return 16'((32'(a[LW-1:0]) + 32'(n) + DB - 1) >> LW);
  endfunction

  logic              f_c_valid;          // accepted, not all its beats announced on AW
  logic [ADDR_W-1:0] f_c_addr;
  logic [XW-1:0]     f_c_end;            // addr + len
  logic [XW-1:0]     f_c_next;           // where its next burst must start
  logic [15:0]       f_c_left;           // its beats not yet announced
  logic [ID_W-1:0]   f_c_id;
  logic [15:0]       f_c_total;          // its beats
  logic [15:0]       f_owed;             // beats of the accepted commands not yet written on W
  logic              f_aw_ends_cmd;
  assign f_aw_ends_cmd = f_aw && f_c_valid && 16'(m_awlen) + 16'd1 == f_c_left;

  always_ff @(posedge clk) begin
    if (rst) begin
      f_c_valid <= 1'b0;
      f_owed    <= '0;
    end else begin
      if (f_aw) begin
        f_c_next <= f_c_next + XW'(32'((32'(m_awlen) + 1) * DB));
        f_c_left <= f_c_left - 16'(m_awlen) - 16'd1;
        if (f_aw_ends_cmd) f_c_valid <= 1'b0;
      end
      f_owed <= f_owed + (f_cmd ? cmd_beats(cmd_addr, cmd_len) : 16'd0) - (f_w ? 16'd1 : 16'd0);
      if (f_cmd) begin
        f_c_valid <= 1'b1;
        f_c_addr  <= cmd_addr;
        f_c_end   <= {1'b0, cmd_addr} + XW'(cmd_len);
        f_c_next  <= {1'b0, cmd_addr[ADDR_W-1:LW], {LW{1'b0}}};
        f_c_left  <= cmd_beats(cmd_addr, cmd_len);
        f_c_id    <= cmd_id;
        f_c_total <= cmd_beats(cmd_addr, cmd_len);
      end
    end
  end

  // ------------------------------------------------------------------ the bursts the W beats belong to
  // A reference queue of the bursts presented on AW (in AW order: the first presentation,
  // `burst_issue`, gives the order and the payload, which AXI keeps stable until AWREADY): for
  // each, its beats, whether it starts its command (no beat of the command announced before it)
  // and whether it ends it (its beats are all the command has left), both from the command
  // shadow above, and the command's first and end byte lanes. W beats are matched to it in
  // order (AXI4 has no write interleaving): the head is the burst the next W beat belongs to,
  // whether its AW handshake has happened or not. The AW side's checks (a_aw_tiles_command)
  // prove that the bursts of a command tile [addr rounded down, addr + len rounded up) in
  // order, so its first beat is the first beat of its first burst and its last beat the last
  // beat of its last burst; the W beat must enable exactly the lanes inside [addr, addr + len):
  // all of them but those below the first lane on the command's first beat and those from the
  // end lane on its last beat. Per-burst flags (no beat positions) keep the data side's
  // reference free of command-length arithmetic, so the k-induction closes at k = 3 for every
  // length (the position counters of the earlier version did not finish beyond 64-byte commands).
  localparam int unsigned NQ = 4;               // bursts presented whose W beats are not all out
  logic [NQ-1:0]         q_cfirst, q_clast;     // the burst starts / ends its command
  logic [NQ-1:0][8:0]    q_beats;
  logic [NQ-1:0][LW-1:0] q_lol, q_hil;
  logic [1:0]            q_rd;
  logic [2:0]            q_cnt;
  logic [8:0]            q_wbeat;               // W beats of the head burst already out
  logic                  f_pend;                // the presented AW is not accepted yet

  logic           w_cmd_first, w_cmd_last;      // the W beat now is its command's first / last beat
  logic [DB-1:0]  w_strb_expected;
  logic           w_last_expected;
  always_comb begin
    w_last_expected = q_wbeat == q_beats[q_rd] - 9'd1;
    w_cmd_first     = q_cfirst[q_rd] && q_wbeat == '0;
    w_cmd_last      = q_clast[q_rd] && w_last_expected;
    for (int l = 0; l < DB; l++) begin
      w_strb_expected[l] = (!w_cmd_first || LW'(l) >= q_lol[q_rd]) &&
                           (!w_cmd_last || q_hil[q_rd] == '0 || LW'(l) < q_hil[q_rd]);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      q_rd    <= '0;
      q_cnt   <= '0;
      q_wbeat <= '0;
      f_pend  <= 1'b0;
    end else begin
      automatic logic [2:0] cnt = q_cnt;
      if (f_w) begin
        if (w_last_expected) begin
          q_wbeat <= '0;
          q_rd    <= q_rd + 2'd1;
          cnt     = cnt - 3'd1;
        end else begin
          q_wbeat <= q_wbeat + 9'd1;
        end
      end
      if (burst_issue) begin
        q_cfirst[2'(q_rd + 2'(q_cnt))] <= f_c_left == f_c_total;
        q_clast[2'(q_rd + 2'(q_cnt))]  <= 16'(m_awlen) + 16'd1 == f_c_left;
        q_beats[2'(q_rd + 2'(q_cnt))]  <= {1'b0, m_awlen} + 9'd1;
        q_lol[2'(q_rd + 2'(q_cnt))]   <= f_c_addr[LW-1:0];
        q_hil[2'(q_rd + 2'(q_cnt))]   <= f_c_end[LW-1:0];
        cnt                           = cnt + 3'd1;
      end
      q_cnt  <= cnt;
      f_pend <= m_awvalid && !m_awready;
    end
  end

  // ------------------------------------------------------------------ assertions
  always_comb begin
    if (f_on) begin
      // ---- AW
      if (m_awvalid) begin
        a_aw_len_max: assert (32'(m_awlen) + 1 <= MAX_BURST);
        a_aw_no_4k_cross: assert (32'(m_awaddr[11:0]) + (32'(m_awlen) + 1) * DB <= 32'h1000);
        a_aw_size_burst_aligned: assert (m_awsize == 3'(LW) && m_awburst == 2'b01 && m_awaddr[LW-1:0] == '0);
      end
      if (f_aw) begin
        a_aw_for_a_command: assert (f_c_valid);
        a_aw_tiles_command: assert ({1'b0, m_awaddr} == f_c_next && 16'(m_awlen) + 16'd1 <= f_c_left && m_awid == f_c_id);
      end
      if (f_cmd) a_cmd_after_previous_issued: assert (!f_c_valid || f_aw_ends_cmd);
      // a burst is announced (burst_issue) exactly when its AW is first presented
      a_issue_is_first_presentation: assert (burst_issue == (m_awvalid && !f_pend));
`ifndef F_NO_W_SIDE
      if (burst_issue) a_issue_queue_room: assert (q_cnt < 3'(NQ) || (f_w && w_last_expected));
`endif
      // ---- W
`ifndef F_NO_W_SIDE
      if (m_wvalid) begin
        a_w_after_its_aw_presented: assert (q_cnt != '0);
        a_wlast_on_last_beat: assert (m_wlast == w_last_expected);
        // the source's lanes (in_strb) within the region, none outside it
        a_wstrb_only_addressed_bytes: assert (m_wstrb == (w_strb_expected & in_strb));
      end
      if (f_w) a_w_within_commands: assert (f_owed != '0);
`endif
      a_w_one_input_beat_each: assert (f_w == f_in && (!m_wvalid || m_wdata == in_data));
      // ---- responses, idle
      a_bready: assert (m_bready);
      a_b_err: assert (b_err == (m_bvalid && m_bresp[1]) && (!b_err || b_err_id == m_bid));
`ifndef F_NO_W_SIDE
      a_idle_iff_nothing_pending: assert (idle == (!f_c_valid && f_owed == '0));
`endif
    end
    if (f_past) begin
      if (p_awvalid && !p_awready) begin
        a_aw_held: assert (m_awvalid && m_awaddr == p_awaddr && m_awlen == p_awlen && m_awid == p_awid &&
                           m_awsize == p_awsize && m_awburst == p_awburst);
      end
`ifndef F_NO_W_SIDE
      if (p_wvalid && !p_wready) a_w_held: assert (m_wvalid && m_wdata == p_wdata && m_wstrb == p_wstrb && m_wlast == p_wlast);
`endif
    end
  end

  // ------------------------------------------------------------------ induction invariants
  // The design's burst notes (the data side's queue) against the reference queue, slot by slot
  // (the two queues' read pointers are equal: i_queue).
  logic [NQ-1:0][8:0]    n_beats;
  logic [NQ-1:0]         n_first, n_last;
  logic [NQ-1:0][LW-1:0] n_start, n_end;
  always_comb begin
    for (int k = 0; k < NQ; k++) begin
      n_beats[k] = wq_mem[k][EW-1 -: 9];
      n_first[k] = wq_mem[k][2 * LW + 1];
      n_last[k]  = wq_mem[k][2 * LW];
      n_start[k] = wq_mem[k][2 * LW - 1 -: LW];
      n_end[k]   = wq_mem[k][LW - 1:0];
    end
  end

  // the beats the queue still holds (for i_w_count)
  // (NQ bursts of at most 256 beats: 11 bits; the narrow sum keeps the induction cheap)
  logic [10:0] f_queued;
  logic [15:0] f_unissued;                      // beats of the command on AW not yet presented
  always_comb begin
    f_queued = '0;
    for (int k = 0; k < NQ; k++) if (32'(k) < 32'(q_cnt)) f_queued = f_queued + 11'(q_beats[2'(q_rd + 2'(k))]);
    f_queued = f_queued - 11'(q_wbeat);
    f_unissued = f_c_valid ? f_c_left - (f_pend ? 16'(burst_beats) : 16'd0) : 16'd0;
  end

  logic [XW-1:0] f_c_lo_aligned, f_c_hi_aligned;
  assign f_c_lo_aligned = {1'b0, f_c_addr[ADDR_W-1:LW], {LW{1'b0}}};
  assign f_c_hi_aligned = ((f_c_end + XW'(DB - 1)) >> LW) << LW;

// ------------------------------------------------------------------ induction invariants: counters and state
  always_comb begin
    if (f_started) begin
      i_active: assert (aw_active_q == f_c_valid && aw_pend_q == f_pend && (!aw_pend_q || aw_active_q));
      if (f_c_valid) i_cmd_total: assert (f_c_total == cmd_beats(f_c_addr, 17'(f_c_end - {1'b0, f_c_addr})) &&
                                          f_c_left <= f_c_total && (f_c_total - f_c_left) * 16'(DB) == 16'(f_c_next - f_c_lo_aligned));
      if (f_c_valid) begin
        i_cmd_state: assert ({1'b0, aw_addr_q} == f_c_next && 16'(beats_left_q) == f_c_left && aw_id_q == f_c_id &&
                             start_lane_q == f_c_addr[LW-1:0] && end_lane_q == f_c_end[LW-1:0] &&
                             aw_first_q == (f_c_next == f_c_lo_aligned));
        i_cmd_tiles: assert (f_c_left != '0 && f_c_next + XW'(32'(f_c_left) * DB) == f_c_hi_aligned &&
                             f_c_end > {1'b0, f_c_addr} && f_c_end <= (XW'(1) << ADDR_W) &&
                             f_c_end - {1'b0, f_c_addr} <= XW'(17'h10000) &&
                             f_c_next >= f_c_lo_aligned && 32'(f_c_left) <= 32'h3fff);
      end
`ifndef F_NO_W_SIDE
      i_queue: assert (q_cnt == wq_count && q_wbeat == wbeat_q && q_cnt <= 3'(NQ) && (q_cnt != '0 || q_wbeat == '0) &&
                       wq_rd_ptr == q_rd);
      // W beats owed: those of the command not yet presented on AW plus what the queue still holds
      i_w_count: assert (f_owed == f_unissued + 16'(f_queued));
`endif
      if (f_pend) i_pend_burst: assert (burst_beats != '0 && {5'd0, burst_beats} <= beats_left_q);
`ifdef F_MAX_LEN
      if (f_c_valid) i_cmd_max_len: assert (32'(f_c_end - {1'b0, f_c_addr}) <= `F_MAX_LEN);
`endif
    end
  end

// The notes' invariants: the data side's queue against the reference queue, slot by slot.
`ifndef F_NO_W_SIDE
  for (genvar gs = 0; gs < NQ; gs++) begin : g_slot
    localparam logic [1:0] S = 2'(gs), N = 2'(gs + 1);   // this slot, the next
    logic [1:0] pos;                                     // its place from the head
    logic       live, head, newest, cmd_last;
    assign pos      = S - q_rd;
    assign live     = {1'b0, pos} < q_cnt;
    assign head     = pos == 2'd0;
    assign newest   = {1'b0, pos} + 3'd1 == q_cnt;
    assign cmd_last = q_clast[S];
    always_comb begin
      if (f_started && live) begin
        i_note_matches: assert (n_beats[S] == q_beats[S] && n_first[S] == q_cfirst[S] && n_last[S] == cmd_last &&
                                n_start[S] == q_lol[S] && n_end[S] == q_hil[S]);
        i_note_sane: assert (q_beats[S] != '0 && 32'(q_beats[S]) <= MAX_BURST && (!head || q_wbeat < q_beats[S]));
        // a burst that is not its command's last is followed by the command's next
        if (!newest && !cmd_last) begin
          i_note_next: assert (!q_cfirst[N] && q_lol[N] == q_lol[S] && q_hil[N] == q_hil[S]);
        end
        if (!newest && cmd_last) i_note_next_cmd: assert (q_cfirst[N]);
        // the newest burst, when no AW is pending: its command's last (and the command being
        // issued, if any, has issued nothing yet), or the command goes on right after it
        if (newest && !f_pend) begin
          i_note_newest: assert (cmd_last ? (!f_c_valid || f_c_left == f_c_total)
                                          : (f_c_valid && f_c_left != f_c_total && f_c_addr[LW-1:0] == q_lol[S] &&
                                             f_c_end[LW-1:0] == q_hil[S]));
        end
        // the newest burst with its AW pending: the burst being presented
        if (newest && f_pend) begin
          i_note_pending: assert (q_cfirst[S] == (f_c_left == f_c_total) && q_beats[S] == burst_beats &&
                                  q_clast[S] == (16'(burst_beats) == f_c_left) &&
                                  f_c_addr[LW-1:0] == q_lol[S] && f_c_end[LW-1:0] == q_hil[S]);
        end
      end
    end
  end

`endif
  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_two_bursts_at_4k: cover (f_aw && f_c_valid && !f_aw_ends_cmd && m_awaddr[11:LW] == '1);
      c_unaligned_both_ends: cover (f_cmd && cmd_addr[LW-1:0] != '0 && (cmd_addr[LW-1:0] + LW'(cmd_len)) != '0 && cmd_len > 17'(DB));
      c_w_before_aw: cover (f_w && f_pend && !m_awready);
      c_partial_strobes_both_ends: cover (f_w && m_wlast && m_wstrb != '1 && m_wstrb != '0 && q_wbeat == '0);
      c_w_and_aw_stalled: cover (m_awvalid && !m_awready && m_wvalid && !m_wready);
    end
  end
endmodule
