// Properties of rtl/rx/rx_split_dma.sv (the two-stage RX planner of 7cee0e2: multi-packet
// payload buffers, write combining through the held beat H, completion batches).
// Bound by rx_split_dma_bind.sv; proved by tb/formal/rx_split_dma.sby.
//
// Asserted, from reset, for every queue setting in range (docs/verification.md, Formal):
//   (F_NO_X leaves out a_hdr_in_buffer and a_pay_in_buffer, F_NO_X_PAY only the latter,
//   F_NO_ROOM a_cq_level and a_cq_room; F_INV adds the induction invariants i_*: task
//   prove_q2 proves all but a_pay_in_buffer by k-induction; F_INV_PAY adds the invariants
//   a_pay_in_buffer's induction needs (i_cur_*, i_h_buf, i_pcmd_buf, i_a_str, i_b_str): task
//   prove_inv_pay_q2 proves them, prove_pay_q2 a_pay_in_buffer, each by k-induction assuming
//   what the tasks before it prove; rx_split_dma.sby says which task checks which, to what
//   depth, and why the assumptions are legitimate)
//   a_hdr_*   no write outside a posted header buffer: every header command goes to the head
//             descriptor popped in that very cycle and is no longer than the queue's
//             hdr_buf_bytes (and PARSE_BYTES); a chosen byte f_const_x written by a header
//             command lies in a header buffer some pop of the queue handed out;
//   a_pay_*   no write outside a posted payload buffer: a chosen byte f_const_x written by a
//             payload command (piece, merge or flush of H) lies in a payload buffer
//             [addr, addr + 2^pay_buf_log2) that a pop of that queue handed out;
//   a_pop_*   no descriptor is popped that the queue's cache does not hold (head valid);
//   a_cq_*    the completion ring is never overrun: a completion record of queue q is planned
//             only while the queue has planned fewer than `size` completions the driver has
//             not consumed (planned - CQ.SW_IDX < 2^cq_log2), as slot planned mod size with
//             the generation bit of pass planned / size; every completion write lies inside
//             the ring [cq_base, cq_base + 16 * size), slot aligned;
//   a_ord_*   a frame's completion is planned after its data: when a completion write of
//             queue q is pushed, no header or payload write of q is still owed (no pending
//             piece command of q, no held beat H of q); a record with PAY_VALID is pushed
//             together with its data's write command, or leaves it pending, or holds it in H.
// The design signals h_v_q, h_q_q, pcmd_v_q, pcmd_q.q, cq_idx_q are read (bind) to name
// "owed" data; the checks compare them with the interface, never copy the RTL's decisions.
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - metadata queue (FWFT): valid held until taken, meta and cls stable meanwhile; the
//     parser's guarantees for a frame without header error: an IP frame has
//     34 <= pay_off <= ip_end <= frame_len; the ingress's: 60 <= frame_len <= 9216 (jumbo);
//   - queue settings: constant for the whole trace (a free value per trace), except
//     CQ.SW_IDX and CTRL.enable; enable may fall (queue off mid-traffic) but not rise again
//     (reconfiguring a queue and re-enabling it is NOT covered); pay_buf_log2 >= 4
//     (docs/registers.md: the 16-byte minimum stride);
//   - the driver: CQ.SW_IDX is 0 while a queue is off, never moves back and never past the
//     completions planned;
//   - descriptor caches: a queue's payload head is valid exactly when its cache holds one
//     (pay_cached != 0); cached <= posted; payload buffers DMA-width aligned (the descriptor
//     engine skips others); no buffer or ring wraps past 2^64. Addresses and ids free.
//   - ready signals of the five output queues free (any back-pressure).
/* verilator lint_off UNUSEDSIGNAL */  // ports some checks only read in part
/* verilator lint_off UNUSEDPARAM */
module rx_split_dma_props
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned NUM_RXQ     = 1,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned CPL_BATCH   = 16,
  localparam int unsigned QW         = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1,
  localparam int unsigned CW         = $clog2(CACHE_DEPTH) + 1,
  localparam int unsigned LW         = $clog2(DATA_W / 8),
  localparam int unsigned BNW        = $clog2(CPL_BATCH + 1)
) (
  input logic                          clk,
  input logic                          rst,
  input logic                          meta_valid,
  input logic                          meta_ready,
  input rx_meta_t                      meta,
  input rx_class_t                     cls,
  input rxq_cfg_t                      qcfg [NUM_RXQ],
  input logic [NUM_RXQ-1:0]            hdr_desc_valid,
  input logic [NUM_RXQ-1:0]            hdr_desc_pop,
  input logic [QW-1:0]                 hdr_sel,
  input logic [63:0]                   hdr_desc_addr,
  input logic [15:0]                   hdr_desc_id,
  input logic [NUM_RXQ-1:0][15:0]      hdr_posted,
  input logic [NUM_RXQ-1:0]            pay_desc_valid,
  input logic [NUM_RXQ-1:0]            pay_desc_pop,
  input logic [QW-1:0]                 pay_sel,
  input logic [63:0]                   pay_desc_addr,
  input logic [15:0]                   pay_desc_id,
  input logic [NUM_RXQ-1:0][15:0]      pay_posted,
  input logic [NUM_RXQ-1:0][CW-1:0]    pay_cached,
  input logic                          cmd_valid,
  input logic                          cmd_ready,
  input logic [ADDR_W-1:0]             cmd_addr,
  input logic [16:0]                   cmd_len,
  input logic [1:0]                    cmd_src,
  input logic [QW-1:0]                 cmd_queue,
  input logic [BNW-1:0]                cmd_ncpl,
  input logic                          rec_valid,
  input logic                          rec_ready,
  input logic [127:0]                  rec_data,
  input logic                          note_valid,
  input logic                          note_ready,
  input logic                          note_hold,
  input logic                          ev_frame,
  input logic                          ev_drop_cq_full,
  // design state that names the data still owed (see the header)
  input logic                          h_v_q,
  input logic [QW-1:0]                 h_q_q,
  input logic                          pcmd_v_q,
  input logic [QW-1:0]                 pcmd_q_q,
  input logic [NUM_RXQ-1:0][15:0]      cq_idx_q,
  // design state for the induction invariants (F_INV, task prove_q2): the stages' frames,
  // stage B's step state, the pending commands and the open completion batch
  input logic                          a_valid_q,
  input logic [QW-1:0]                 a_q_q,
  input logic                          a_split,
  input logic [15:0]                   a_hdr_len,
  input logic [15:0]                   a_pay_len,
  input logic [16:0]                   a_n_fresh,
  input logic                          b_valid_q,
  input logic [1:0]                    bst_q,
  input logic [QW-1:0]                 b_q_q,
  input logic                          b_split,
  input logic [15:0]                   b_hdr_len,
  input logic [15:0]                   b_pay_len,
  input logic [16:0]                   b_n_fresh,
  input logic                          sop_q,
  input logic                          nx_has_q,
  input logic [1:0]                    pcmd_src,
  input logic                          bcmd_v_q,
  input logic [ADDR_W-1:0]             bcmd_addr,
  input logic [16:0]                   bcmd_len,
  input logic [1:0]                    bcmd_src,
  input logic [QW-1:0]                 bcmd_qq,
  input logic [BNW-1:0]                bcmd_ncpl,
  input logic                          bat_v_q,
  input logic [QW-1:0]                 bat_q_q,
  input logic [ADDR_W-1:0]             bat_addr_q,
  input logic [BNW-1:0]                bat_n_q,
  // ... and for the ring-room invariants: the pieces still to place, the rings' room
  input logic                          a_hdr_err,
  input logic                          b_hdr_err,
  input logic [15:0]                   a_pay_end,
  input logic [3:0]                    a_log2,
  input logic [15:0]                   a_first_len,
  input logic                          a_first_last,
  input logic [15:0]                   b_pay_end,
  input logic [3:0]                    b_log2,
  input logic [15:0]                   pos_q,
  input logic [15:0]                   nx_len_q,
  input logic [15:0]                   nx_end_q,
  input logic                          nx_last_q,
  input logic [12:0]                   a_need,
  input logic [3:0]                    a_slog2,
  input logic [12:0]                   b_need,
  input logic [3:0]                    b_slog2,
  input logic [12:0]                   a_first_str,
  input logic [12:0]                   nx_str_q,
  input logic [NUM_RXQ-1:0]            cur_v_q,
  input logic [NUM_RXQ-1:0][8:0]       cur_used_q,
  input logic [NUM_RXQ-1:0][16:0]      cq_room_q,
  input logic [NUM_RXQ-1:0]            cq_inc_q,
  // ... and for the payload-buffer invariants: the multi-packet cursor, H, the pending piece
  input logic [NUM_RXQ-1:0][ADDR_W-1:0] cur_next_q,
  input logic [ADDR_W-1:0]             h_start_q,
  input logic [LW:0]                   h_end_q,
  input logic                          h_cont_q,
  input logic [ADDR_W-1:0]             pcmd_addr,
  input logic [16:0]                   pcmd_len,
  input logic                          a_mpb,
  input logic                          b_mpb
);
  localparam logic [1:0] SRC_HDR = 2'd0, SRC_PAY = 2'd1, SRC_CPL = 2'd2;

  // ------------------------------------------------------------------ reset, history
  logic f_started;
  initial f_started = 1'b0;
  always_ff @(posedge clk) if (rst) f_started <= 1'b1;
`ifdef FORMAL
  always_comb if (!f_started) assume (rst);
`endif
  logic f_on, f_past;
  assign f_on = f_started && !rst;
  logic f_pstart;                      // not the first cycle (p_qcfg holds the previous one)
  initial f_past = 1'b0;
  initial f_pstart = 1'b0;
  always_ff @(posedge clk) f_pstart <= 1'b1;

  logic       p_meta_valid, p_meta_ready;
  rx_meta_t   p_meta;
  rx_class_t  p_cls;
  rxq_cfg_t   p_qcfg [NUM_RXQ];
  always_ff @(posedge clk) begin
    f_past       <= f_on;
    p_meta_valid <= meta_valid;
    p_meta_ready <= meta_ready;
    p_meta       <= meta;
    p_cls        <= cls;
    p_qcfg       <= qcfg;
  end

  // per queue: completions planned (records pushed); see the shadow state below
  logic [NUM_RXQ-1:0][15:0] f_planned;

  // the chosen byte of host/device memory the write checks look at
  logic [63:0] f_const_x;

  rx_cpl_t rec;
  assign rec = rec_data;

  logic f_cmd, f_rec;
  assign f_cmd = cmd_valid && cmd_ready;
  assign f_rec = rec_valid && rec_ready;

  // the command covers byte x
  logic f_cmd_hits_x;
  assign f_cmd_hits_x = f_cmd && cmd_len != '0 && (f_const_x - 64'(cmd_addr)) < 64'(cmd_len);

`ifdef FORMAL
  // ------------------------------------------------------------------ environment
  always_comb begin
    if (f_on && meta_valid && !meta.hdr_err) begin
      assume (meta.frame_len >= 16'd60 && meta.frame_len <= 16'd9216);
      if (meta.l3_type != L3_NONE)
        assume (meta.pay_off >= 16'd34 && meta.pay_off <= meta.ip_end && meta.ip_end <= meta.frame_len);
    end
  end
  always_ff @(posedge clk) begin
    if (f_past && f_on && p_meta_valid && !p_meta_ready) begin
      assume (meta_valid);
      assume (meta == p_meta);
      assume (cls == p_cls);
    end
  end
  for (genvar i = 0; i < NUM_RXQ; i++) begin : g_env
    always_comb begin
      assume (qcfg[i].pay_buf_log2 >= 4'd4);
      assume (qcfg[i].cq_base <= 64'hFFFF_FFFF_FFF0_0000);
      if (!qcfg[i].enable) assume (qcfg[i].cq_sw_idx == '0);
      assume (pay_desc_valid[i] == (pay_cached[i] != '0));
      assume (17'(pay_cached[i]) <= 17'(pay_posted[i]));
      assume (pay_cached[i] <= CW'(CACHE_DEPTH));
    end
    always_comb if (rst) assume (qcfg[i].cq_sw_idx == '0);
    always_ff @(posedge clk) begin
      if (f_pstart && f_on) begin
        // constant settings, enable may only fall
        assume (qcfg[i].split_en == p_qcfg[i].split_en);
        assume (qcfg[i].hds_thresh == p_qcfg[i].hds_thresh);
        assume (qcfg[i].hdr_buf_bytes == p_qcfg[i].hdr_buf_bytes);
        assume (qcfg[i].pay_buf_log2 == p_qcfg[i].pay_buf_log2);
        assume (qcfg[i].cq_base == p_qcfg[i].cq_base);
        assume (qcfg[i].cq_log2 == p_qcfg[i].cq_log2);
        assume (qcfg[i].pay_mpb == p_qcfg[i].pay_mpb);
        assume (qcfg[i].pay_stride_log2 == p_qcfg[i].pay_stride_log2);
        assume (qcfg[i].coal_usecs == p_qcfg[i].coal_usecs);
        assume (qcfg[i].coal_frames == p_qcfg[i].coal_frames);
        assume (!qcfg[i].enable || p_qcfg[i].enable);
        // the driver's consumer index: forward, never past what was planned
        if (qcfg[i].enable)
          assume (16'(qcfg[i].cq_sw_idx - p_qcfg[i].cq_sw_idx) <= 16'(f_planned[i] - p_qcfg[i].cq_sw_idx));
      end
    end
  end
  always_comb begin
    if (pay_desc_valid[pay_sel]) begin
      assume (pay_desc_addr[LW-1:0] == '0);
      assume (pay_desc_addr <= 64'hFFFF_FFFF_FFFF_0000);
    end
    if (hdr_desc_valid[hdr_sel]) assume (hdr_desc_addr <= 64'hFFFF_FFFF_FFFF_0000);
  end
`endif

  // ------------------------------------------------------------------ shadow state
  // per queue: completions planned (records pushed), and whether x lies in a buffer it handed out
  logic [NUM_RXQ-1:0]       f_x_hdr, f_x_pay;
  logic [NUM_RXQ-1:0]       f_x_hdr_now, f_x_pay_now;
  for (genvar i = 0; i < NUM_RXQ; i++) begin : g_own
    assign f_x_hdr_now[i] = hdr_desc_pop[i] && (f_const_x - hdr_desc_addr) < 64'(qcfg[i].hdr_buf_bytes);
    assign f_x_pay_now[i] = pay_desc_pop[i] && (f_const_x - pay_desc_addr) < (64'd1 << qcfg[i].pay_buf_log2);
  end
  always_ff @(posedge clk) begin
    if (rst) begin
      f_planned <= '0;
      f_x_hdr   <= '0;
      f_x_pay   <= '0;
    end else begin
      f_x_hdr <= f_x_hdr | f_x_hdr_now;
      f_x_pay <= f_x_pay | f_x_pay_now;
      for (int i = 0; i < NUM_RXQ; i++) begin
        if (f_rec && QW'(rec.queue) == QW'(i)) f_planned[i] <= f_planned[i] + 16'd1;
        if (!qcfg[i].enable) f_planned[i] <= '0;
      end
    end
  end

`ifdef FORMAL
  // ------------------------------------------------------------------ assertions
  // per queue: descriptors only what the cache holds, only the queue stage B serves;
  // the planned index and the ring's fill level
  for (genvar i = 0; i < NUM_RXQ; i++) begin : g_q
    always_comb begin
      if (f_on) begin
        a_pop_hdr_valid: assert (!hdr_desc_pop[i] || (hdr_desc_valid[i] && QW'(i) == hdr_sel));
        a_pop_pay_valid: assert (!pay_desc_pop[i] || (pay_desc_valid[i] && QW'(i) == pay_sel));
        a_cq_index: assert (f_planned[i] == cq_idx_q[i]);
`ifndef F_NO_ROOM
        a_cq_level: assert (!qcfg[i].enable ||
                            17'(16'(f_planned[i] - qcfg[i].cq_sw_idx)) <= (17'd1 << qcfg[i].cq_log2));
`endif
      end
    end
  end
  always_comb begin
    if (f_on) begin
      // header writes: the head popped now, within hdr_buf_bytes and the parse window
      if (f_cmd && cmd_src == SRC_HDR) begin
        a_hdr_popped: assert (hdr_desc_pop[cmd_queue] && 64'(cmd_addr) == hdr_desc_addr);
        a_hdr_fits:   assert (cmd_len <= 17'(qcfg[cmd_queue].hdr_buf_bytes) && cmd_len <= 17'(PARSE_BYTES));
      end
`ifndef F_NO_X
      // (the chosen-byte checks: the hard part for the solver; F_NO_X leaves them out so the
      // other assertions reach a deeper BMC bound, see rx_split_dma.sby)
      if (f_cmd_hits_x && cmd_src == SRC_HDR)
        a_hdr_in_buffer: assert (f_x_hdr[cmd_queue] || f_x_hdr_now[cmd_queue]);
`ifndef F_NO_X_PAY
      if (f_cmd_hits_x && cmd_src == SRC_PAY)
        a_pay_in_buffer: assert (f_x_pay[cmd_queue] || f_x_pay_now[cmd_queue]);
`endif
`endif
      if (f_cmd) a_cmd_src: assert (cmd_src != 2'd3);
      // completion writes: whole slots inside the ring
      if (f_cmd && cmd_src == SRC_CPL) begin
        a_cq_in_ring: assert (cmd_len != '0 && cmd_len[3:0] == '0 && cmd_addr[3:0] == qcfg[cmd_queue].cq_base[3:0] &&
                              64'(cmd_addr) - qcfg[cmd_queue].cq_base + 64'(cmd_len) <= (64'd16 << qcfg[cmd_queue].cq_log2) &&
                              64'(cmd_addr) >= qcfg[cmd_queue].cq_base);
        a_cq_ncpl:    assert (cmd_len == 17'({cmd_ncpl, 4'd0}));
        // ordering: nothing of the queue's data still owed
        a_ord_no_pending: assert (!(pcmd_v_q && pcmd_q_q == cmd_queue));
        a_ord_no_held:    assert (!(h_v_q && h_q_q == cmd_queue));
      end
      // completion records: only with room, at the planned slot, with its generation
      if (f_rec) begin
        a_cq_queue_on:  assert (QW'(rec.queue) < NUM_RXQ && qcfg[QW'(rec.queue)].enable);
`ifndef F_NO_ROOM
        a_cq_room:      assert (17'(16'(f_planned[QW'(rec.queue)] - qcfg[QW'(rec.queue)].cq_sw_idx)) <
                                (17'd1 << qcfg[QW'(rec.queue)].cq_log2));
`endif
        a_cq_gen:       assert (rec.gen == !f_planned[QW'(rec.queue)][qcfg[QW'(rec.queue)].cq_log2]);
        if (rec.pay_valid)
          a_ord_pay_data: assert ((f_cmd && cmd_src == SRC_PAY && cmd_queue == QW'(rec.queue)) ||
                                  (note_valid && note_ready && note_hold) ||
                                  (f_cmd && cmd_src == SRC_HDR));   // then pending, see a_ord_pending_next
        if (rec.hdr_valid && rec.sop)
          a_ord_hdr_data: assert (f_cmd && cmd_src == SRC_HDR && cmd_queue == QW'(rec.queue));
      end
    end
  end
  // a payload piece whose command lost the port to its header is pending in the next cycle
  logic p_pay_behind_hdr;
  logic [QW-1:0] p_rec_q;
  always_ff @(posedge clk) begin
    p_pay_behind_hdr <= f_on && f_rec && rec.pay_valid && f_cmd && cmd_src == SRC_HDR &&
                        !(note_valid && note_ready && note_hold);
    p_rec_q          <= QW'(rec.queue);
  end
  always_comb begin
    if (f_on && f_past && p_pay_behind_hdr)
      a_ord_pending_next: assert (pcmd_v_q && pcmd_q_q == p_rec_q);
  end

`ifdef F_INV
  // ------------------------------------------------------------------ induction invariants
  // (task prove_q2: they make the k-induction of the properties above close; each is itself
  // proved, and each states what the RTL's registers must mean, from the interface's view)
  localparam logic [1:0] B_FIRST = 2'd0, B_SEG = 2'd1;
  logic [63:0] i_bat_base, i_bat_off, i_bat_size16, i_bc_base, i_bc_size16;
  logic [15:0] i_bat_mask;
  always_comb begin
    i_bat_base   = qcfg[bat_q_q].cq_base;
    i_bat_off    = 64'(bat_addr_q) - i_bat_base;
    i_bat_size16 = 64'd16 << qcfg[bat_q_q].cq_log2;
    i_bat_mask   = (16'd1 << qcfg[bat_q_q].cq_log2) - 16'd1;
    i_bc_base    = qcfg[bcmd_qq].cq_base;
    i_bc_size16  = 64'd16 << qcfg[bcmd_qq].cq_log2;
  end
  always_comb begin
    if (f_on) begin
      // a frame in stage A / B: its header fits the queue's header buffer and the parse
      // window; a payload needs buffers exactly when it has bytes
      if (a_valid_q) begin
        i_a_shape: assert ((!a_split || (a_hdr_len <= qcfg[a_q_q].hdr_buf_bytes && a_hdr_len <= 16'(PARSE_BYTES))) &&
                           (a_split || a_hdr_len == '0) && ((a_n_fresh == '0) == (a_pay_len == '0)));
      end
      if (b_valid_q) begin
        i_b_shape: assert ((!b_split || (b_hdr_len <= qcfg[b_q_q].hdr_buf_bytes && b_hdr_len <= 16'(PARSE_BYTES))) &&
                           (b_split || b_hdr_len == '0) && ((b_n_fresh == '0) == (b_pay_len == '0)) &&
                           bst_q != 2'd3);
        // the first step is the frame's start of packet; a frame not yet placed has a piece
        // exactly when its payload has bytes
        i_b_sop: assert (sop_q == (bst_q == B_FIRST) && (bst_q != B_FIRST || nx_has_q == (b_pay_len != '0)));
        // while the rest of a frame is placed: no held beat, the open batch is the frame's queue's
        if (bst_q == B_SEG) i_b_seg: assert (!h_v_q && (!bat_v_q || bat_q_q == b_q_q));
      end
      // pending commands: a payload piece, a batch of completions (whole slots in its ring)
      if (pcmd_v_q) i_pcmd: assert (pcmd_src == SRC_PAY);
      if (bcmd_v_q) begin
        i_bcmd: assert (bcmd_src == SRC_CPL && !h_v_q && bcmd_len == 17'({bcmd_ncpl, 4'd0}) && bcmd_ncpl != '0 &&
                        bcmd_addr[3:0] == i_bc_base[3:0] && 64'(bcmd_addr) >= i_bc_base &&
                        64'(bcmd_addr) - i_bc_base + 64'(bcmd_len) <= i_bc_size16);
      end
      // the open batch: 1..CPL_BATCH-1 completions from a slot of its ring, not reaching its
      // last slot; while its queue is on, the queue's next slot follows them
      // counts are zero while no batch is open
      if (!bat_v_q) i_bat_closed: assert (bat_n_q == '0);
      if (bat_v_q) begin
        i_bat: assert (bat_n_q != '0 && 32'(bat_n_q) < CPL_BATCH && bat_addr_q[3:0] == i_bat_base[3:0] &&
                       64'(bat_addr_q) >= i_bat_base && i_bat_off + 64'({bat_n_q, 4'd0}) < i_bat_size16);
        if (qcfg[bat_q_q].enable)
          i_bat_slot: assert ((cq_idx_q[bat_q_q] & i_bat_mask) == 16'(i_bat_off >> 4) + 16'(bat_n_q));
      end
    end
  end
`ifndef F_NO_ROOM
  // (The pieces are counted by comparisons with k buffer sizes, k <= CACHE_DEPTH, bufs_for():
  // with a division by the variable buffer size the induction did not finish in 4 minutes.)
  // The ring room: the RTL checks a frame's completions against a room worked out a cycle
  // earlier (cq_room_q, with cq_inc_q for the slot taken meanwhile) once, at its first step;
  // the pieces placed after it take their slots unchecked. So: the room never exceeds what
  // is free, and while a frame is placed its remaining pieces fit in its ring.
  logic f_around, p_around;
  assign f_around = meta_valid || a_valid_q || b_valid_q;
  always_ff @(posedge clk) p_around <= f_around;
  logic [15:0] i_rem;                   // payload bytes of stage B's frame still to place
  logic [16:0] i_pieces;                // its pieces (completions) still to plan
  logic [16:0] i_b_size;                // its payload buffer size
  // Buffers for n bytes, counted by comparisons with 1..CACHE_DEPTH buffer sizes (no division:
  // a frame needing more fresh buffers than the cache holds is dropped), capped at CACHE_DEPTH + 1.
  function automatic logic [16:0] bufs_for(input logic [15:0] n, input logic [3:0] l2);
    logic [19:0] b = 20'd1 << l2;
    bufs_for = 17'(CACHE_DEPTH + 1);
    for (int k = CACHE_DEPTH; k >= 1; k--) if (20'(n) <= 20'(k) * b) bufs_for = 17'(k);
    if (n == '0) bufs_for = '0;
  endfunction
  function automatic logic [16:0] capped(input logic [16:0] n);
    return (n > 17'(CACHE_DEPTH)) ? 17'(CACHE_DEPTH + 1) : n;
  endfunction
  // the stride of a queue's multi-packet buffers (docs/rx-rules.md: pay_stride_log2 clamped to
  // [max(4, pay_buf_log2 - 8), pay_buf_log2])
  function automatic logic [3:0] stride_log2(input rxq_cfg_t c);
    logic [3:0] st = c.pay_stride_log2;
    if (st < 4'd4) st = 4'd4;
    if (c.pay_buf_log2 > 4'd8 && st < c.pay_buf_log2 - 4'd8) st = c.pay_buf_log2 - 4'd8;
    if (st > c.pay_buf_log2) st = c.pay_buf_log2;
    return st;
  endfunction
  always_comb begin
    i_rem    = b_pay_end - pos_q;
    i_b_size = 17'd1 << b_log2;
    i_pieces = bufs_for(i_rem, b_log2);
  end
  always_comb begin
    if (f_on) begin
      // (a frame with a header error is dropped at its first step: its lengths do not matter)
      if (a_valid_q && !a_hdr_err) begin
        i_a_pieces: assert (a_pay_end == a_hdr_len + a_pay_len && a_hdr_len <= a_pay_end && a_pay_end <= 16'd9216 && a_log2 >= 4'd4 &&
                            capped(a_n_fresh) == bufs_for(a_pay_len, a_log2) &&
                            a_log2 == qcfg[a_q_q].pay_buf_log2 && a_slog2 == stride_log2(qcfg[a_q_q]) &&
                            (20'(a_need) << a_slog2) >= 20'(a_pay_len) &&
                            32'(a_first_str) <= (32'd1 << (a_log2 - a_slog2)) &&
                            a_first_last == (17'(a_pay_len) <= (17'd1 << a_log2)) &&
                            a_first_len == (a_first_last ? a_pay_len : 16'(17'd1 << a_log2)));
      end
      if (b_valid_q) i_b_err_first: assert (!b_hdr_err || bst_q == B_FIRST);
      if (b_valid_q && !b_hdr_err) begin
        i_b_pieces: assert (b_pay_end == b_hdr_len + b_pay_len && b_hdr_len <= b_pay_end && b_pay_end <= 16'd9216 && b_log2 >= 4'd4 &&
                            pos_q <= b_pay_end &&
                            capped(b_n_fresh) == bufs_for(b_pay_len, b_log2) &&
                            b_log2 == qcfg[b_q_q].pay_buf_log2 && b_slog2 == stride_log2(qcfg[b_q_q]) &&
                            (20'(b_need) << b_slog2) >= 20'(b_pay_len) &&
                            32'(nx_str_q) <= (32'd1 << (b_log2 - b_slog2)) &&
                            nx_last_q == (17'(i_rem) <= i_b_size) && nx_len_q == (nx_last_q ? i_rem : 16'(i_b_size)) &&
                            nx_end_q == pos_q + nx_len_q && nx_has_q == (i_rem != '0) &&
                            (bst_q != B_FIRST || pos_q == b_hdr_len) &&
                            (bst_q != B_SEG || (i_rem != '0 && i_pieces < 17'(CACHE_DEPTH))));
        // the frame's remaining completions fit its ring (its first step checked them all)
        if (bst_q == B_SEG && qcfg[b_q_q].enable)
          i_seg_room: assert (17'(16'(f_planned[b_q_q] - qcfg[b_q_q].cq_sw_idx)) + i_pieces <= (17'd1 << qcfg[b_q_q].cq_log2));
      end
      if (a_valid_q || b_valid_q) i_around: assert (p_around);
    end
  end
  for (genvar i = 0; i < NUM_RXQ; i++) begin : g_room
    // a queue's current multi-packet buffer has used at most its strides
    always_comb begin
      if (f_on && cur_v_q[i])
        i_cur_used: assert (32'(cur_used_q[i]) <= (32'd1 << (qcfg[i].pay_buf_log2 - stride_log2(qcfg[i]))));
    end
    always_comb begin
      if (f_on && f_past && p_around && qcfg[i].enable)
        i_room: assert (cq_room_q[i] + 17'(16'(f_planned[i] - qcfg[i].cq_sw_idx)) <=
                        (17'd1 << qcfg[i].cq_log2) + 17'(cq_inc_q[i]));
    end
  end
`ifdef F_INV_PAY
  // ---- the payload-buffer bound (a_pay_in_buffer): each queue's current multi-packet buffer
  // (shadow: the address its last pop for a frame's last piece handed out, on an MPB queue),
  // H's bytes and the pending piece command lie inside a buffer a pop of the queue handed out.
  // Task prove_inv_pay_q2 proves these six (assuming prove_q2's assertions, which prove_q2
  // proves), prove_pay_q2 a_pay_in_buffer with them (assuming all the others). A new invariant
  // here needs its label added to prove_inv_pay_q2's chformal line, or it is assumed unproved.
  logic [NUM_RXQ-1:0]        f_cur_v;
  logic [NUM_RXQ-1:0][63:0]  f_cur_base;
  always_ff @(posedge clk) begin
    if (rst) begin
      f_cur_v <= '0;
    end else begin
      for (int i = 0; i < NUM_RXQ; i++) begin
        if (pay_desc_pop[i] && qcfg[i].pay_mpb && nx_last_q) begin
          f_cur_v[i]    <= 1'b1;
          f_cur_base[i] <= pay_desc_addr;
        end
      end
    end
  end
  logic [16:0] i_hlen;                   // bytes H holds: the flush command's length, 17 bits wide
  assign i_hlen = 17'(h_end_q) - 17'(h_start_q[LW:0]);
  for (genvar i = 0; i < NUM_RXQ; i++) begin : g_cur
    always_comb begin
      if (f_on) begin
        if (cur_v_q[i]) i_cur_v: assert (f_cur_v[i]);
        // the cursor: used strides from the buffer's base, which a pop handed out
        if (f_cur_v[i])
          i_cur_buf: assert (f_cur_base[i][LW-1:0] == '0 && f_cur_base[i] <= 64'hFFFF_FFFF_FFFF_0000 &&
                             ((f_const_x - f_cur_base[i]) >= (64'd1 << qcfg[i].pay_buf_log2) || f_x_pay[i]) &&
                             32'(cur_used_q[i]) <= (32'd1 << (qcfg[i].pay_buf_log2 - stride_log2(qcfg[i]))) &&
                             64'(cur_next_q[i]) == f_cur_base[i] + (64'(cur_used_q[i]) << stride_log2(qcfg[i])));
      end
    end
  end
  always_comb begin
    if (f_on) begin
      // H: 1..DB bytes of its queue's current buffer, below the cursor (in the cursor's beat
      // when a later piece may merge)
      if (h_v_q)
        i_h_buf: assert (f_cur_v[h_q_q] && i_hlen != '0 && i_hlen <= 17'(DATA_W / 8) &&
                         h_start_q >= f_cur_base[h_q_q] && 64'(h_start_q) + 64'(i_hlen) <= 64'(cur_next_q[h_q_q]) &&
                         (!h_cont_q || h_start_q[ADDR_W-1:LW] == cur_next_q[h_q_q][ADDR_W-1:LW]));
      // the pending piece command: its bytes lie in a payload buffer of its queue
      if (pcmd_v_q && pcmd_len != '0 && (f_const_x - 64'(pcmd_addr)) < 64'(pcmd_len))
        i_pcmd_buf: assert (f_x_pay[pcmd_q_q]);
      // the frames' multi-packet flag is the queue's; a piece's strides cover its bytes
      if (a_valid_q && !a_hdr_err)
        i_a_str: assert (a_mpb == qcfg[a_q_q].pay_mpb && (20'(a_first_str) << a_slog2) >= 20'(a_first_len));
      if (b_valid_q && !b_hdr_err)
        i_b_str: assert (b_mpb == qcfg[b_q_q].pay_mpb && (20'(nx_str_q) << b_slog2) >= 20'(nx_len_q));
    end
  end
`endif
`endif
`endif

  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_hdr_write:  cover (f_cmd && cmd_src == SRC_HDR);
      c_pay_write:  cover (f_cmd && cmd_src == SRC_PAY);
      c_cpl_write:  cover (f_cmd && cmd_src == SRC_CPL);
      c_held:       cover (note_valid && note_ready && note_hold);
      c_cq_full:    cover (ev_drop_cq_full);
      c_ring_wrap:  cover (f_rec && rec.gen == 1'b0);
      c_two_frames: cover (ev_frame && f_planned[0] >= 16'd1);
    end
  end
`endif
endmodule
