// Properties of rtl/rx/rx_split_dma.sv: the RX planner (split or drop, buffers, completions).
// Bound by rx_split_dma_bind.sv; proved by tb/formal/rx_split_dma.sby.
//
// Proved, for every reachable state after a reset and every queue setting in range:
//   - no write outside a posted buffer: every data write command goes to the head descriptor
//     of the queue's header or payload cache, popped (so used once) in that very cycle, and is
//     no longer than that buffer (header: hdr_buf_bytes and PARSE_BYTES; payload: 2^log2);
//     no descriptor is popped without its write; a write and its realigner range move
//     together and have the same length;
//   - the completion ring is never overrun: every completion write goes to slot i of the
//     queue's ring (cq_base + 16 * (i mod size)), i counting the queue's completions, only
//     while the driver has consumed slot i - size (i - CQ.SW_IDX < size), with the
//     generation bit of pass i / size;
//   - a frame's completion is planned after its data, on the same queue (AXI ID): a
//     completion with PAY_VALID follows its payload write and reports that buffer's id and
//     length, one without follows none; HDR_VALID/SPLIT reports the header written before
//     it (id and length); SOP on the frame's first completion; EOP exactly on the last,
//     when the frame is delivered;
//   - the realigner ranges tile the frame: each starts where the previous ended, the last
//     (frame_end) ends at the frame's length, one per frame; every frame taken from the
//     metadata queue is counted exactly once (RX_FRAMES or one RX_DROP_*), and a frame
//     dropped before planning writes nothing.
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - metadata queue (FWFT): valid held until taken, meta and cls stable meanwhile; the
//     parser's guarantees for a frame without header error: an IP frame has
//     34 <= pay_off <= ip_end <= frame_len (at least Ethernet + IPv4 headers before the
//     payload); the ingress's: frame_len >= 60;
//   - queue settings: while a queue is enabled its settings stay put (CQ.SW_IDX excepted);
//     pay_buf_log2 and cq_log2 at most 15 (the register ranges);
//   - the driver: CQ.SW_IDX is 0 when a queue is enabled, never moves back and never past the
//     completions planned (so past those written);
//   - descriptor caches: a queue's head is valid exactly when its cache holds one
//     (pay_cached); cached descriptors are posted (posted >= cached). Addresses and ids free.
//   - ready signals of the three queues free.
/* verilator lint_off UNUSEDSIGNAL */  // ports and history some checks of a proof only read
/* verilator lint_off UNUSEDPARAM */   // DATA_W: the design's parameter list, passed whole
module rx_split_dma_props
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned NUM_RXQ     = 1,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned CACHE_DEPTH = 16,
  localparam int unsigned QW         = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1,
  localparam int unsigned CW         = $clog2(CACHE_DEPTH) + 1
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
  input logic                          rng_valid,
  input logic                          rng_ready,
  input logic [15:0]                   rng_end,
  input logic                          rng_emit,
  input logic                          rng_frame_end,
  input logic                          cmd_valid,
  input logic                          cmd_ready,
  input logic [ADDR_W-1:0]             cmd_addr,
  input logic [16:0]                   cmd_len,
  input logic                          cmd_src_cpl,
  input logic [QW-1:0]                 cmd_queue,
  input logic                          cpl_valid,
  input logic                          cpl_ready,
  input logic [127:0]                  cpl_data,
  input logic                          ev_frame,
  input logic                          ev_drop_hdr_err,
  input logic                          ev_drop_queue_off,
  input logic                          ev_drop_no_hdr_buf,
  input logic                          ev_drop_no_pay_buf,
  input logic                          ev_drop_cq_full,
  // design state, for the induction invariants
  input logic [1:0]                    state_q,
  input logic [15:0]                   pos_q,
  input logic                          first_q,
  input logic [15:0]                   hdr_id_q,
  input logic [15:0]                   pay_id_q,
  input logic [15:0]                   seg_len_q,
  input logic                          fe_sent_q,
  input logic [NUM_RXQ-1:0][15:0]      cq_idx_q,
  input logic [QW-1:0]                 fr_q_q,
  input logic                          fr_q_split,
  input logic [15:0]                   fr_q_hdr_len,
  input logic [15:0]                   fr_q_pay_end,
  input logic [3:0]                    fr_q_log2
);
  localparam logic [1:0] S_IDLE = 2'd0, S_SEG = 2'd1, S_CPL = 2'd2, S_ABORT = 2'd3;

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

  // ------------------------------------------------------------------ handshakes
  logic f_cmd, f_data_cmd, f_cpl_cmd, f_rng, f_meta_pop, f_cpl_rec;
  assign f_cmd      = cmd_valid && cmd_ready;
  assign f_data_cmd = f_cmd && !cmd_src_cpl;
  assign f_cpl_cmd  = f_cmd && cmd_src_cpl;
  assign f_rng      = rng_valid && rng_ready;
  assign f_meta_pop = meta_valid && meta_ready;
  assign f_cpl_rec  = cpl_valid && cpl_ready;

  // the completion record (docs/dma-formats.md; the struct generated from rtl/formats/dma_formats.toml)
  rx_cpl_t c;
  assign c = cpl_data;

  // ------------------------------------------------------------------ models
  // Per queue: completions planned since it was enabled.
  logic [NUM_RXQ-1:0][15:0] f_cq;
  always_ff @(posedge clk) begin
    for (int unsigned i = 0; i < NUM_RXQ; i++) begin
      if (rst || !qcfg[i].enable) f_cq[i] <= '0;
      else if (f_cpl_cmd && cmd_queue == QW'(i)) f_cq[i] <= f_cq[i] + 16'd1;
    end
  end

  // Per frame (the metadata at the head of the queue): what was planned for it so far.
  logic        f_any;              // any write command planned
  logic        f_hdr_done;         // its header write
  logic [15:0] f_hdr_len, f_hdr_id;
  logic        f_piece;            // a payload write whose completion is still due
  logic [15:0] f_piece_len, f_piece_id;
  logic [4:0]  f_cpls;             // completions planned
  logic [15:0] f_pos;              // end of the last range
  logic        f_fe;               // the frame_end range went out
  always_ff @(posedge clk) begin
    if (rst || f_meta_pop) begin
      f_any      <= 1'b0;
      f_hdr_done <= 1'b0;
      f_piece    <= 1'b0;
      f_cpls     <= '0;
      f_pos      <= '0;
      f_fe       <= 1'b0;
    end else begin
      if (f_cmd) f_any <= 1'b1;
      if (hdr_desc_pop != '0) begin
        f_hdr_done <= 1'b1;
        f_hdr_len  <= 16'(cmd_len);
        f_hdr_id   <= hdr_desc_id;
      end
      if (pay_desc_pop != '0) begin
        f_piece     <= 1'b1;
        f_piece_len <= 16'(cmd_len);
        f_piece_id  <= pay_desc_id;
      end
      if (f_cpl_cmd) begin
        f_piece <= 1'b0;
        f_cpls  <= f_cpls + 5'd1;
      end
      if (f_rng) f_pos <= rng_end;
      if (f_rng && rng_frame_end) f_fe <= 1'b1;
    end
  end

  // ------------------------------------------------------------------ environment
`ifdef FORMAL
  always_comb begin
    if (f_started) begin
      if (meta_valid && !meta.hdr_err) begin
        assume (meta.frame_len >= 16'd60);
        if (meta.l3_type != L3_NONE) assume (16'd34 <= meta.pay_off && meta.pay_off <= meta.ip_end && meta.ip_end <= meta.frame_len);
      end
      for (int unsigned i = 0; i < NUM_RXQ; i++) begin
        assume (qcfg[i].pay_buf_log2 <= 4'd15 && qcfg[i].cq_log2 <= 4'd15);
        assume (pay_desc_valid[i] == (pay_cached[i] != '0));
        assume (pay_posted[i] >= 16'(pay_cached[i]));
        if (hdr_desc_valid[i]) assume (hdr_posted[i] != '0);
        // the consumer index never gets ahead of the completions planned
        if (qcfg[i].enable) assume ((f_cq[i] - qcfg[i].cq_sw_idx) <= (17'd1 << qcfg[i].cq_log2));
      end
    end
    if (f_past) begin
      if (p_meta_valid && !p_meta_ready) assume (meta_valid && meta == p_meta && cls == p_cls);
      for (int unsigned i = 0; i < NUM_RXQ; i++) begin
        if (qcfg[i].enable && p_qcfg[i].enable) begin
          assume (qcfg[i].split_en == p_qcfg[i].split_en && qcfg[i].hds_thresh == p_qcfg[i].hds_thresh &&
                  qcfg[i].hdr_buf_bytes == p_qcfg[i].hdr_buf_bytes && qcfg[i].pay_buf_log2 == p_qcfg[i].pay_buf_log2 &&
                  qcfg[i].cq_base == p_qcfg[i].cq_base && qcfg[i].cq_log2 == p_qcfg[i].cq_log2);
          // SW_IDX moves forward by at most what was outstanding
          assume ((qcfg[i].cq_sw_idx - p_qcfg[i].cq_sw_idx) <= (f_cq[i] - p_qcfg[i].cq_sw_idx));
        end
        if (qcfg[i].enable && !p_qcfg[i].enable) assume (qcfg[i].cq_sw_idx == '0);
      end
    end
  end
`endif

  // ------------------------------------------------------------------ assertions
  logic [15:0] f_cq_mask;
  logic [16:0] f_cq_size;
  logic [63:0] f_cq_slot_addr;
  assign f_cq_size      = 17'd1 << qcfg[cmd_queue].cq_log2;
  assign f_cq_mask      = 16'(f_cq_size - 17'd1);
  assign f_cq_slot_addr = qcfg[cmd_queue].cq_base + {44'd0, f_cq[cmd_queue] & f_cq_mask, 4'd0};

  logic [1:0] f_pops;
  assign f_pops = 2'($countones(hdr_desc_pop)) + 2'($countones(pay_desc_pop));

  always_comb begin
    if (f_on) begin
      // ---- every data write goes to a popped, posted buffer and fits it
      a_one_pop_per_cycle: assert (f_pops <= 2'd1);
      if (f_data_cmd) a_data_write_pops_its_buffer: assert (f_pops == 2'd1 && (hdr_desc_pop[cmd_queue] || pay_desc_pop[cmd_queue]));
      if (f_pops != '0) a_pop_only_with_its_write: assert (f_data_cmd);
      if (hdr_desc_pop[cmd_queue] && f_data_cmd) begin
        a_hdr_write_to_head: assert (hdr_sel == cmd_queue && hdr_desc_valid[cmd_queue] && 64'(cmd_addr) == hdr_desc_addr);
        a_hdr_write_fits: assert (cmd_len != '0 && cmd_len <= {1'b0, qcfg[cmd_queue].hdr_buf_bytes} && 32'(cmd_len) <= PARSE_BYTES);
        a_hdr_write_first: assert (!f_any);
      end
      if (pay_desc_pop[cmd_queue] && f_data_cmd) begin
        a_pay_write_to_head: assert (pay_sel == cmd_queue && pay_desc_valid[cmd_queue] && 64'(cmd_addr) == pay_desc_addr);
        a_pay_write_fits: assert (cmd_len != '0 && cmd_len <= (17'd1 << qcfg[cmd_queue].pay_buf_log2));
        a_pay_write_after_cpl: assert (!f_piece);
      end
      if (f_data_cmd) begin
        a_write_with_its_range: assert (f_rng && rng_emit && {1'b0, rng_end} == {1'b0, f_pos} + cmd_len);
        a_write_queue_enabled: assert (qcfg[cmd_queue].enable);
      end
      if (f_rng && rng_emit) a_range_emitted_is_written: assert (f_data_cmd);
      // ---- the completion ring
      if (f_cpl_cmd) begin
        a_cpl_record_with_write: assert (f_cpl_rec);
        a_cpl_queue_enabled: assert (qcfg[cmd_queue].enable);
        a_cpl_slot_free: assert ({1'b0, f_cq[cmd_queue] - qcfg[cmd_queue].cq_sw_idx} < f_cq_size);
        a_cpl_slot_addr: assert (64'(cmd_addr) == f_cq_slot_addr && cmd_len == 17'(RX_CPL_BYTES));
        a_cpl_gen_bit: assert (c.gen == !f_cq[cmd_queue][qcfg[cmd_queue].cq_log2]);
        a_cpl_queue_field: assert (c.queue == 7'(cmd_queue));
        // ---- completion after its data, same queue
        a_cpl_after_its_piece: assert (c.pay_valid == f_piece &&
                                       (!f_piece || (c.pay_len == f_piece_len && c.pay_buf_id == f_piece_id)) &&
                                       (f_piece || c.pay_len == '0));
        a_cpl_after_its_header: assert (c.split == f_hdr_done && c.hdr_valid == f_hdr_done &&
                                        (!f_hdr_done || (c.hdr_len == f_hdr_len && c.hdr_buf_id == f_hdr_id)) &&
                                        (f_hdr_done || c.hdr_len == '0));
        a_cpl_sop_first: assert (c.sop == (f_cpls == '0));
        a_cpl_eop_last: assert (c.eop == (f_meta_pop && ev_frame));
      end
      if (f_cpl_rec) a_cpl_record_only_with_write: assert (f_cpl_cmd);
      // ---- ranges tile the frame
      if (f_rng) begin
        a_range_forward: assert (rng_end >= f_pos && meta_valid);
        a_range_one_frame_end: assert (!f_fe || !rng_frame_end);
        if (rng_frame_end) a_range_frame_end_at_len: assert (rng_end == meta.frame_len);
        else               a_range_inside_frame: assert (rng_end <= meta.frame_len);
      end
      // ---- every frame counted once
      if (f_meta_pop) begin
        a_frame_counted_once: assert ($countones({ev_frame, ev_drop_hdr_err, ev_drop_queue_off, ev_drop_no_hdr_buf,
                                                  ev_drop_no_pay_buf, ev_drop_cq_full}) == 1);
        a_frame_ranges_done: assert (f_fe || (f_rng && rng_frame_end));
        if (ev_drop_hdr_err || ev_drop_no_hdr_buf || ev_drop_no_pay_buf || ev_drop_cq_full) begin
          a_dropped_frame_writes_nothing: assert (!f_any && !f_cmd);
        end
        if (ev_frame) a_delivered_with_eop: assert (f_cpl_cmd);
      end else begin
        a_events_only_when_frame_taken: assert (!ev_frame && !ev_drop_hdr_err && !ev_drop_queue_off && !ev_drop_no_hdr_buf &&
                                                !ev_drop_no_pay_buf && !ev_drop_cq_full);
      end
    end
  end

  // ------------------------------------------------------------------ induction invariants
  // Completions still to plan for the frame in S_SEG / S_CPL (at least the current one).
  logic [16:0] f_rem_bytes, f_rem_cpls, f_buf;
  always_comb begin
    f_buf       = 17'd1 << fr_q_log2;
    f_rem_bytes = {1'b0, fr_q_pay_end} - {1'b0, pos_q} - ((state_q == S_CPL) ? {1'b0, seg_len_q} : 17'd0);
    f_rem_cpls  = (f_rem_bytes + f_buf - 17'd1) >> fr_q_log2;
    if (state_q == S_CPL) f_rem_cpls = f_rem_cpls + 17'd1;
    else if (first_q && f_rem_bytes == '0) f_rem_cpls = 17'd1;
  end

  always_comb begin
    if (f_started) begin
      if (state_q == S_IDLE) begin
        i_idle_nothing_planned: assert (!f_any && !f_hdr_done && !f_piece && f_cpls == '0 && f_pos == '0 && !f_fe);
      end else begin
        i_frame_held: assert (meta_valid);
        i_frame_queue: assert (32'(cls.qid) < NUM_RXQ ? fr_q_q == QW'(cls.qid) : fr_q_q == '0);
        i_frame_split: assert (fr_q_hdr_len == (fr_q_split ? meta.pay_off : 16'd0) &&
                               fr_q_pay_end == (fr_q_split ? meta.ip_end : meta.frame_len));
        i_frame_bounds: assert (fr_q_hdr_len <= pos_q && pos_q <= fr_q_pay_end && fr_q_pay_end <= meta.frame_len);
        i_frame_fe: assert (fe_sent_q == f_fe && f_pos <= meta.frame_len);
        if (fr_q_split && state_q != S_ABORT) i_hdr_fits: assert (fr_q_hdr_len <= qcfg[fr_q_q].hdr_buf_bytes || !qcfg[fr_q_q].enable);
        if (state_q != S_ABORT) begin
          i_frame_planned: assert (f_hdr_done == fr_q_split && (!fr_q_split || (f_hdr_len == fr_q_hdr_len && f_hdr_id == hdr_id_q)) &&
                                   f_any == (fr_q_split || f_cpls != '0 || f_piece) && first_q == (f_cpls == '0));
          // a frame has at most CACHE_DEPTH payload buffers, so as many completions
          i_cpls_bounded: assert (17'(f_cpls) + f_rem_cpls <= 17'(CACHE_DEPTH));
          if (qcfg[fr_q_q].enable) begin
            i_frame_log2: assert (fr_q_log2 == qcfg[fr_q_q].pay_buf_log2);
            i_cq_room_reserved: assert ({1'b0, f_cq[fr_q_q] - qcfg[fr_q_q].cq_sw_idx} + f_rem_cpls <= (17'd1 << qcfg[fr_q_q].cq_log2));
          end
        end
        if (state_q == S_SEG) i_seg: assert (!f_piece && f_pos == pos_q && !f_fe);
        if (state_q == S_CPL) begin
          i_cpl: assert (f_piece == (seg_len_q != '0) && (!f_piece || (f_piece_len == seg_len_q && f_piece_id == pay_id_q)) &&
                         f_pos == pos_q + seg_len_q && seg_len_q <= fr_q_pay_end - pos_q &&
                         (f_fe == (seg_len_q != '0 && pos_q + seg_len_q == meta.frame_len)));
          i_cpl_seg_fits: assert ({1'b0, seg_len_q} <= f_buf && (seg_len_q != '0 || (first_q && pos_q == fr_q_pay_end)));
        end
      end
    end
  end

  for (genvar gi = 0; gi < NUM_RXQ; gi++) begin : g_queue
    always_comb if (f_started) i_cq_is_planned: assert (cq_idx_q[gi] == f_cq[gi]);
  end

  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_split_frame_delivered: cover (f_meta_pop && ev_frame && f_hdr_done && f_cpls == 5'd1);
      c_cq_wraps: cover (f_cpl_cmd && f_cq[cmd_queue] == 16'd2 && qcfg[cmd_queue].cq_log2 == 4'd1);
      c_queue_off_mid_frame: cover (f_meta_pop && ev_drop_queue_off && f_any);
      c_cq_full_drop: cover (f_meta_pop && ev_drop_cq_full);
      c_empty_payload: cover (f_cpl_cmd && !c.pay_valid && c.split);
    end
  end
endmodule
