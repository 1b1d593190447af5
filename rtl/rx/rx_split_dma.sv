// RX DMA planner with header/data split (docs/rx-rules.md §3-4), for NUM_RXQ queues.
//
// Takes one frame at a time from the metadata queue (parse result + the queue classification
// chose), decides split or drop, waits until every descriptor the frame needs is prefetched,
// and then *plans* the frame as a sequence of commands pushed into three small queues:
//   - byte ranges for the realigner: [0, hdr_len) to emit, each payload piece to emit, the
//     Ethernet padding after the IP datagram to discard (or the whole frame, when dropped);
//   - write commands for the DMA write master: header buffer, each payload buffer, and after
//     each payload buffer its 16-byte completion entry;
//   - completion records, consumed by the data mux (rx_dma_mux) when their write comes up.
// Planning runs ahead of the data, so a frame's commands are queued while the previous
// frame's bytes are still moving: a split frame with one payload buffer takes 3 planning
// cycles (header, payload, completion), an unsplit one 2, a dropped one 1.
//
// Descriptors are popped and completion-ring slots reserved at planning time; the ring checks
// therefore count what is planned, not yet written. Every write of queue q carries AXI ID q,
// so a queue's completions never overtake its data. The queue's settings are captured when a
// frame is accepted, so register writes during a frame do not change where it goes. If the
// queue is disabled while its frame is being planned, the rest of the frame is discarded and
// counted in RX_DROP_QUEUE_OFF (completions already planned stay, without EOP); `busy` in
// rx_dma tells the driver when the queue's last planned write has gone out.
// Reset: synchronous, active high. A disabled queue's completion index is held at zero.
module rx_split_dma
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,   // DMA data width
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned NUM_RXQ     = 1,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned CACHE_DEPTH = 16,
  localparam int unsigned QW         = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1,
  localparam int unsigned CW         = $clog2(CACHE_DEPTH) + 1
) (
  input  logic                          clk,
  input  logic                          rst,
  // frame metadata (first-word-fall-through: popped when the frame is fully planned)
  input  logic                          meta_valid,
  output logic                          meta_ready,
  input  rx_meta_t                      meta,
  input  rx_class_t                     cls,
  // per-queue configuration
  input  rxq_cfg_t                     qcfg [NUM_RXQ],       // per-queue settings
  // per-queue descriptor caches
  input  logic [NUM_RXQ-1:0]            hdr_desc_valid,
  output logic [NUM_RXQ-1:0]            hdr_desc_pop,
  output logic [QW-1:0]                 hdr_sel,      // the queue whose header head is read
  input  logic [63:0]                   hdr_desc_addr,
  input  logic [15:0]                   hdr_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      hdr_posted,
  input  logic [NUM_RXQ-1:0]            pay_desc_valid,
  output logic [NUM_RXQ-1:0]            pay_desc_pop,
  output logic [QW-1:0]                 pay_sel,      // the queue whose payload head is read
  input  logic [63:0]                   pay_desc_addr,
  input  logic [15:0]                   pay_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      pay_posted,
  input  logic [NUM_RXQ-1:0][CW-1:0]    pay_cached,
  // realigner ranges
  output logic                          rng_valid,
  input  logic                          rng_ready,
  output logic [15:0]                   rng_end,
  output logic                          rng_emit,
  output logic                          rng_frame_end,
  // write commands (src: 0 realigner data, 1 completion record)
  output logic                          cmd_valid,
  input  logic                          cmd_ready,
  output logic [ADDR_W-1:0]             cmd_addr,
  output logic [16:0]                   cmd_len,
  output logic                          cmd_src_cpl,
  output logic [QW-1:0]                 cmd_queue,
  // completion records, in the order of their write commands
  output logic                          cpl_valid,
  input  logic                          cpl_ready,
  output logic [127:0]                  cpl_data,
  // events (one-cycle pulses)
  output logic                          ev_frame,
  output logic                          ev_drop_hdr_err,
  output logic                          ev_drop_queue_off,
  output logic                          ev_drop_no_hdr_buf,
  output logic                          ev_drop_no_pay_buf,
  output logic                          ev_drop_cq_full,
  output logic                          ev_hdr_overflow,
  output logic [NUM_RXQ-1:0]            plan_busy
);
  initial begin
    if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) $fatal(1, "rx_split_dma: DATA_W must be a power of two >= 64");
    if (NUM_RXQ < 1 || NUM_RXQ > 128) $fatal(1, "rx_split_dma: NUM_RXQ must be 1..128");
  end

  typedef enum logic [1:0] {
    S_IDLE,     // decide; push the drop range, or the first data command
    S_SEG,      // push the next payload piece
    S_CPL,      // push the completion of the piece just planned (and the tail, if last)
    S_ABORT     // the queue went off mid-frame: discard the rest of the frame
  } state_e;

  state_e      state_q;
  logic [QW-1:0] q;                 // the frame's queue (as classified; used while deciding)
  logic        q_ok;                // classification named an existing queue

  // The frame's decision, captured when it is accepted (used in S_SEG, S_CPL, S_ABORT).
  typedef struct packed {
    logic [QW-1:0] q;
    logic          split;
    logic          ovf;
    logic [15:0]   hdr_len;
    logic [15:0]   pay_end;
    logic [3:0]    log2;
  } frame_t;
  frame_t      fr_q;
  logic        fe_sent_q;           // a range with frame_end was already pushed

  assign q_ok = {25'd0, cls.qid} < 32'(NUM_RXQ);
  assign q    = q_ok ? QW'(cls.qid) : '0;
  assign hdr_sel = q;       // header buffers are taken for the frame being decided
  assign pay_sel = fr_q.q;  // payload buffers for the frame being written

  // ---------------------------------------------------------------- per-frame decision
  logic        split_cand, hdr_overflow, split;
  logic [15:0] hdr_len, pay_end, pay_len;
  logic [16:0] n_pay, n_cpl, cq_used, cq_room, buf_bytes;
  logic        drop_hdr_err, drop_queue_off, drop_no_hdr, drop_no_pay, drop_cq_full, drop_any;
  logic        ready_to_go;
  logic [NUM_RXQ-1:0][15:0] cq_idx_q;  // next completion slot of each queue (planned)

  // Computed only while a frame waits in S_IDLE to be decided, the only time these are used
  // (the FSM below reads them in S_IDLE with meta_valid); otherwise zero, so an idle cycle or
  // one spent writing a frame evaluates none of it.
  always_comb begin
    split_cand = 1'b0; hdr_overflow = 1'b0; split = 1'b0;
    hdr_len = '0; pay_end = '0; pay_len = '0;
    buf_bytes = '0; n_pay = '0; n_cpl = '0; cq_used = '0; cq_room = '0;
    drop_hdr_err = 1'b0; drop_queue_off = 1'b0; drop_no_hdr = 1'b0; drop_no_pay = 1'b0;
    drop_cq_full = 1'b0; drop_any = 1'b0; ready_to_go = 1'b0;
    if (state_q == S_IDLE && meta_valid) begin
      split_cand   = qcfg[q].split_en && (meta.l3_type != L3_NONE) && (meta.frame_len > qcfg[q].hds_thresh);
      hdr_overflow = split_cand && ((meta.pay_off > qcfg[q].hdr_buf_bytes) || (meta.pay_off > 16'(PARSE_BYTES)));
      split        = split_cand && !hdr_overflow;
      hdr_len      = split ? meta.pay_off : 16'd0;
      pay_end      = split ? meta.ip_end : meta.frame_len;
      pay_len      = pay_end - hdr_len;
      buf_bytes    = 17'd1 << qcfg[q].pay_buf_log2;
      n_pay        = ({1'b0, pay_len} + buf_bytes - 17'd1) >> qcfg[q].pay_buf_log2;
      n_cpl        = (n_pay == '0) ? 17'd1 : n_pay;
      cq_used      = {1'b0, cq_idx_q[q] - qcfg[q].cq_sw_idx};
      // A consumer index ahead of the producer (a driver bug) leaves no room rather than wrapping.
      cq_room      = (cq_used > (17'd1 << qcfg[q].cq_log2)) ? 17'd0 : (17'd1 << qcfg[q].cq_log2) - cq_used;

      drop_hdr_err   = meta.hdr_err;
      drop_queue_off = !drop_hdr_err && !qcfg[q].enable;
      drop_no_hdr    = !drop_hdr_err && !drop_queue_off && split && (hdr_posted[q] == '0);
      drop_no_pay    = !drop_hdr_err && !drop_queue_off && !drop_no_hdr &&
                       ((n_pay > {1'b0, pay_posted[q]}) || (n_pay > 17'(CACHE_DEPTH)));
      drop_cq_full   = !drop_hdr_err && !drop_queue_off && !drop_no_hdr && !drop_no_pay &&
                       (cq_room < n_cpl);
      drop_any       = drop_hdr_err || drop_queue_off || drop_no_hdr || drop_no_pay || drop_cq_full;
      ready_to_go    = (!split || hdr_desc_valid[q]) &&
                       (n_pay == '0 || (pay_desc_valid[q] && 17'(pay_cached[q]) >= n_pay));
    end
  end

  // ---------------------------------------------------------------- planning state
  logic [15:0] pos_q;            // next payload byte (frame offset)
  logic        first_q;          // next completion is the frame's first
  logic [15:0] hdr_id_q, pay_id_q, seg_len_q;
  logic [15:0] seg_len;
  logic        last_seg;
  logic [15:0] pos_next;

  logic [16:0] fr_buf_bytes;
  assign fr_buf_bytes = 17'd1 << fr_q.log2;
  assign seg_len  = ({1'b0, fr_q.pay_end - pos_q} > fr_buf_bytes) ? fr_buf_bytes[15:0] : (fr_q.pay_end - pos_q);
  assign pos_next = pos_q + seg_len_q;
  assign last_seg = (pos_next == fr_q.pay_end);

  // The frame's last range must carry frame_end; a tail range is needed unless the last
  // payload piece (non-empty) ended exactly at the frame's end.
  logic need_tail;
  assign need_tail = last_seg && !(seg_len_q != '0 && pos_next == meta.frame_len);

  // A frame of queue i is being planned (rx_dma folds this into the queue's busy status).
  always_comb begin
    plan_busy = '0;
    if (state_q != S_IDLE) plan_busy[fr_q.q] = 1'b1;
  end

  // ---------------------------------------------------------------- completion record
  rx_cpl_t     cpl;
  logic [15:0] cq_mask;
  logic [63:0] cq_addr;
  logic        gen;

  assign cq_mask = (16'd1 << qcfg[fr_q.q].cq_log2) - 16'd1;
  assign cq_addr = qcfg[fr_q.q].cq_base + {44'd0, cq_idx_q[fr_q.q] & cq_mask, 4'd0};
  assign gen     = !cq_idx_q[fr_q.q][qcfg[fr_q.q].cq_log2];

  always_comb begin
    cpl              = '0;
    cpl.pay_buf_id   = (seg_len_q != '0) ? pay_id_q : 16'd0;
    cpl.pay_len      = seg_len_q;
    cpl.hdr_buf_id   = fr_q.split ? hdr_id_q : 16'd0;
    cpl.hdr_len      = fr_q.hdr_len;
    cpl.rss_hash     = cls.rss_hash;
    cpl.rss_type     = 8'(cls.rss_type);
    cpl.l3_type      = meta.l3_type;
    cpl.l4_type      = meta.l4_type;
    cpl.ip_frag      = meta.ip_frag;
    cpl.vlan_tags    = meta.vlan_tags;
    cpl.sop          = first_q;
    cpl.eop          = last_seg;
    cpl.split        = fr_q.split;
    cpl.hdr_valid    = fr_q.split;
    cpl.pay_valid    = (seg_len_q != '0);
    cpl.hdr_overflow = fr_q.ovf;
    cpl.queue        = 7'(fr_q.q);
    cpl.gen          = gen;
    cpl_data         = cpl;
  end

  // ---------------------------------------------------------------- control
  logic advance;

  always_comb begin
    rng_valid          = 1'b0;
    rng_end            = '0;
    rng_emit           = 1'b0;
    rng_frame_end      = 1'b0;
    cmd_valid          = 1'b0;
    cmd_addr           = '0;
    cmd_len            = '0;
    cmd_src_cpl        = 1'b0;
    cmd_queue          = q;
    cpl_valid          = 1'b0;
    meta_ready         = 1'b0;
    hdr_desc_pop       = '0;
    pay_desc_pop       = '0;
    ev_frame           = 1'b0;
    ev_drop_hdr_err    = 1'b0;
    ev_drop_queue_off  = 1'b0;
    ev_drop_no_hdr_buf = 1'b0;
    ev_drop_no_pay_buf = 1'b0;
    ev_drop_cq_full    = 1'b0;
    ev_hdr_overflow    = 1'b0;
    advance            = 1'b0;

    unique case (state_q)
      S_IDLE: if (meta_valid) begin
        if (drop_any) begin
          // Discard the whole frame; count it once.
          rng_valid     = 1'b1;
          rng_end       = meta.frame_len;
          rng_frame_end = 1'b1;
          if (rng_ready) begin
            advance            = 1'b1;
            meta_ready         = 1'b1;
            ev_drop_hdr_err    = drop_hdr_err;
            ev_drop_queue_off  = drop_queue_off;
            ev_drop_no_hdr_buf = drop_no_hdr;
            ev_drop_no_pay_buf = drop_no_pay;
            ev_drop_cq_full    = drop_cq_full;
          end
        end else if (ready_to_go) begin
          if (split) begin
            rng_valid = cmd_ready;
            rng_end   = hdr_len;
            rng_emit  = 1'b1;
            cmd_valid = rng_ready;
            cmd_addr  = ADDR_W'(hdr_desc_addr);
            cmd_len   = {1'b0, hdr_len};
            if (rng_ready && cmd_ready) begin
              advance         = 1'b1;
              hdr_desc_pop[q] = 1'b1;
              ev_hdr_overflow = hdr_overflow;
            end
          end else begin
            advance         = 1'b1;         // no header: go straight to the payload
            ev_hdr_overflow = hdr_overflow;
          end
        end
      end
      S_SEG: begin
        if (!qcfg[fr_q.q].enable || (seg_len != '0 && !pay_desc_valid[fr_q.q])) begin
          advance = 1'b1;                   // queue switched off (its cache emptied): abort
        end else if (seg_len == '0) begin
          advance = 1'b1;                   // empty payload: one completion, no buffer
        end else begin
          rng_valid = cmd_ready;
          rng_end   = pos_q + seg_len;
          rng_emit  = 1'b1;
          // No padding after the last piece: it ends the frame (no empty tail range).
          rng_frame_end = (pos_q + seg_len == meta.frame_len);
          cmd_valid = rng_ready;
          cmd_addr  = ADDR_W'(pay_desc_addr);
          cmd_len   = {1'b0, seg_len};
          cmd_queue = fr_q.q;
          if (rng_ready && cmd_ready) begin
            advance              = 1'b1;
            pay_desc_pop[fr_q.q] = 1'b1;
          end
        end
      end
      S_CPL: if (!qcfg[fr_q.q].enable) begin
        advance = 1'b1;                     // queue switched off: no completion, abort
      end else begin
        // The completion's write command and record; with the last one, the frame's tail
        // (the padding after the IP datagram, or the whole frame when the payload is empty),
        // unless the last payload piece already ended the frame.
        cmd_queue   = fr_q.q;
        cmd_valid   = cpl_ready && (!need_tail || rng_ready);
        cmd_addr    = ADDR_W'(cq_addr);
        cmd_len     = 17'(RX_CPL_BYTES);
        cmd_src_cpl = 1'b1;
        cpl_valid   = cmd_ready && (!need_tail || rng_ready);
        if (need_tail) begin
          rng_valid     = cmd_ready && cpl_ready;
          rng_end       = meta.frame_len;
          rng_frame_end = 1'b1;
        end
        if (cmd_ready && cpl_ready && (!need_tail || rng_ready)) begin
          advance = 1'b1;
          if (last_seg) begin
            meta_ready = 1'b1;
            ev_frame   = 1'b1;
          end
        end
      end
      S_ABORT: begin
        // Discard what is left of the frame (nothing, if its last range was already pushed).
        rng_valid     = !fe_sent_q;
        rng_end       = meta.frame_len;
        rng_frame_end = 1'b1;
        if (fe_sent_q || rng_ready) begin
          advance           = 1'b1;
          meta_ready        = 1'b1;
          ev_drop_queue_off = 1'b1;
        end
      end
      default: ;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q   <= S_IDLE;
      pos_q     <= '0;
      first_q   <= 1'b0;
      seg_len_q <= '0;
      hdr_id_q  <= '0;
      pay_id_q  <= '0;
      cq_idx_q  <= '0;
      fr_q      <= '0;
      fe_sent_q <= 1'b0;
    end else begin
      if (rng_valid && rng_ready && rng_frame_end) fe_sent_q <= 1'b1;
      if (advance) begin
        unique case (state_q)
          S_IDLE: begin
            state_q      <= drop_any ? S_IDLE : S_SEG;
            pos_q        <= hdr_len;
            first_q      <= 1'b1;
            fe_sent_q    <= 1'b0;
            fr_q.q       <= q;
            fr_q.split   <= split;
            fr_q.ovf     <= hdr_overflow;
            fr_q.hdr_len <= hdr_len;
            fr_q.pay_end <= pay_end;
            fr_q.log2    <= qcfg[q].pay_buf_log2;
            if (split) hdr_id_q <= hdr_desc_id;
          end
          S_SEG: begin
            if (!qcfg[fr_q.q].enable || (seg_len != '0 && !pay_desc_valid[fr_q.q])) begin
              state_q <= S_ABORT;
            end else begin
              state_q   <= S_CPL;
              seg_len_q <= seg_len;
              pay_id_q  <= pay_desc_id;
            end
          end
          S_CPL: begin
            if (!qcfg[fr_q.q].enable) begin
              state_q <= S_ABORT;
            end else begin
              state_q          <= last_seg ? S_IDLE : S_SEG;
              pos_q            <= pos_next;
              first_q          <= 1'b0;
              cq_idx_q[fr_q.q] <= cq_idx_q[fr_q.q] + 1'b1;
            end
          end
          S_ABORT: state_q <= S_IDLE;
          default: state_q <= S_IDLE;
        endcase
      end
      for (int i = 0; i < NUM_RXQ; i++) begin
        if (!qcfg[i].enable) cq_idx_q[i] <= '0;
      end
    end
  end

  logic unused;
  assign unused = ^{cls.steered, meta.qinq, meta.ipv4_opts, meta.ipv6_ext};
endmodule
