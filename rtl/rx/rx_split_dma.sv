// RX DMA planner with header/data split (docs/rx-rules.md sections 3-5), for NUM_RXQ queues.
//
// Takes one frame at a time from the metadata queue in two pipeline stages:
//   A (shape): split or not, header and payload lengths, how many buffers and strides the
//     payload needs, the header's frame words: everything that depends only on the frame and
//     the queue's settings, registered so the arithmetic stays off the metadata FIFO's output;
//   B (place): the drop checks against the rings, then the frame's payload pieces, one step
//     per cycle, each step pushing what it decides into the queues of rx_dma:
//       - byte ranges for the realigner (each piece, with its destination lane and, on the
//         frame's first, the header words to tap; the last consumes the rest of the frame);
//       - write commands for the DMA write master, at most one per cycle: the header buffer,
//         each payload piece, a held payload beat (flush), a batch of completions;
//       - notes for the payload write combiner (rx_pay_merge): merge the piece's first beat
//         with the held beat H, hold its last beat as the new H, or flush H;
//       - completion records for the completion packer (rx_cpl_pack), with their lane.
// A frame with one payload piece takes one step (header command, range, note, record) and a
// second one only when its piece needs a write command of its own (then pending, pushed in
// the next cycle, and a batch closing with the frame pushes its command after that).
//
// Multi-packet payload buffers (CTRL.pay_mpb): per queue, the current buffer (id, address of
// its next free stride, strides used). A payload that fits its rest goes there and takes no
// descriptor; otherwise the frame takes fresh buffers and its last one becomes current.
// Write combining: a piece's last, partly filled beat is held (H, one for all queues) when the
// frame's completion batch does not close with it; the next piece merges into it when it starts
// in that beat (same queue, same buffer), else H is flushed first. H is also flushed as soon
// as no frame waits to be placed, and before a batch closes.
// Completion batches (RXQ.COALESCE, one open batch for all queues): rules 1-6 of rx-rules.md
// section 5; a batch closing with a record pushes its write after the record's data, one closing
// on its own (timer, idle, another queue's frame, queue off) is a step of its own at a frame
// boundary, after the flush of H.
//
// Descriptors are popped and completion-ring slots reserved at planning time; the ring checks
// therefore count what is planned, not yet written. Every write of queue q carries AXI ID q,
// so a queue's completions never overtake its data. The queue's settings are captured when a
// frame is accepted (stage A; `enable` when stage B decides it). If the queue is disabled
// while its frame is being placed, the rest of the frame is discarded and counted in
// RX_DROP_QUEUE_OFF (completions already planned stay, without EOP); `busy` in rx_dma tells the
// driver when the queue's last planned write has gone out.
// Reset: synchronous, active high. A disabled queue's completion index and multi-packet cursor
// are held at zero (no current buffer).
module rx_split_dma
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W        = 64,   // DMA data width
  parameter int unsigned ADDR_W        = 64,
  parameter int unsigned NUM_RXQ       = 1,
  parameter int unsigned PARSE_BYTES   = 128,
  parameter int unsigned CACHE_DEPTH   = 16,
  parameter int unsigned CPL_BATCH     = 16,   // completions one batch holds
  parameter int unsigned CYCLES_PER_US = 250,
  parameter int unsigned TAP_W         = 8,
  localparam int unsigned QW           = (NUM_RXQ > 1) ? $clog2(NUM_RXQ) : 1,
  localparam int unsigned CW           = $clog2(CACHE_DEPTH) + 1,
  localparam int unsigned LW           = $clog2(DATA_W / 8),
  localparam int unsigned NLANE        = (DATA_W > 128) ? DATA_W / 128 : 1,
  localparam int unsigned LAW          = (NLANE > 1) ? $clog2(NLANE) : 1,
  localparam int unsigned BNW          = $clog2(CPL_BATCH + 1)
) (
  input  logic                          clk,
  input  logic                          rst,
  // frame metadata (first-word-fall-through: popped when stage A takes the frame)
  input  logic                          meta_valid,
  output logic                          meta_ready,
  input  rx_meta_t                      meta,
  input  rx_class_t                     cls,
  // per-queue configuration
  input  rxq_cfg_t                      qcfg [NUM_RXQ],
  // per-queue descriptor caches (heads of the queue whose frame stage B holds)
  input  logic [NUM_RXQ-1:0]            hdr_desc_valid,
  output logic [NUM_RXQ-1:0]            hdr_desc_pop,
  output logic [QW-1:0]                 hdr_sel,
  input  logic [63:0]                   hdr_desc_addr,
  input  logic [15:0]                   hdr_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      hdr_posted,
  input  logic [NUM_RXQ-1:0]            pay_desc_valid,
  output logic [NUM_RXQ-1:0]            pay_desc_pop,
  output logic [QW-1:0]                 pay_sel,
  input  logic [63:0]                   pay_desc_addr,
  input  logic [15:0]                   pay_desc_id,
  input  logic [NUM_RXQ-1:0][15:0]      pay_posted,
  input  logic [NUM_RXQ-1:0][CW-1:0]    pay_cached,
  // realigner ranges
  output logic                          rng_valid,
  input  logic                          rng_ready,
  output logic [15:0]                   rng_start,
  output logic [15:0]                   rng_end,
  output logic [LW-1:0]                 rng_dst,
  output logic                          rng_emit,
  output logic                          rng_frame_end,
  output logic [15:0]                   rng_flen,
  output logic [TAP_W-1:0]              rng_tap,
  // payload write-combining notes
  output logic                          note_valid,
  input  logic                          note_ready,
  output logic                          note_flush,
  output logic                          note_merge,
  output logic                          note_hold,
  // write commands (src: 0 header tap, 1 payload, 2 completions)
  output logic                          cmd_valid,
  input  logic                          cmd_ready,
  output logic [ADDR_W-1:0]             cmd_addr,
  output logic [16:0]                   cmd_len,
  output logic [1:0]                    cmd_src,
  output logic [QW-1:0]                 cmd_queue,
  output logic [BNW-1:0]                cmd_ncpl,     // completions a completion write carries
  // completion records, in ring order, with the batch's closes
  output logic                          rec_valid,
  input  logic                          rec_ready,
  output logic [127:0]                  rec_data,
  output logic [LAW-1:0]                rec_lane,
  output logic                          rec_close,
  output logic                          bclose,
  input  logic                          bclose_ready,
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
  localparam int unsigned DB = DATA_W / 8;
  localparam logic [1:0] SRC_HDR = 2'd0, SRC_PAY = 2'd1, SRC_CPL = 2'd2;
  localparam int unsigned USW = 8 - 1;           // log2(RX_MPB_MAX_STRIDES) - 1: used-strides bits - 1

  initial begin
    if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) $fatal(1, "rx_split_dma: DATA_W must be a power of two >= 64");
    if (NUM_RXQ < 1 || NUM_RXQ > 128) $fatal(1, "rx_split_dma: NUM_RXQ must be 1..128");
    if (CPL_BATCH < 1 || CPL_BATCH > 255) $fatal(1, "rx_split_dma: CPL_BATCH must be 1..255");
    if (CYCLES_PER_US < 1 || CYCLES_PER_US > 1023) $fatal(1, "rx_split_dma: CYCLES_PER_US must be 1..1023");
    if ((1 << TAP_W) * DB < PARSE_BYTES) $fatal(1, "rx_split_dma: TAP_W too small for the parse window");
    if (RX_MPB_MAX_STRIDES != 256 || RX_MPB_MIN_STRIDE_LOG2 != 4) $fatal(1, "rx_split_dma: stride rules changed");
  end

  // ---------------------------------------------------------------- stage A: frame shape
  typedef struct packed {
    logic [QW-1:0]  q;
    logic           hdr_err;
    logic           split;
    logic           ovf;
    logic [15:0]    flen;
    logic [15:0]    hdr_len;
    logic [15:0]    pay_end;
    logic [15:0]    pay_len;
    logic [16:0]    n_fresh;       // ceil(pay_len / B): buffers when starting fresh
    logic [15:0]    first_len;     // the first piece: min(pay_len, B) (also when it fits)
    logic           first_last;    // the first piece is the last (pay_len <= B)
    logic [12:0]    first_str;     // strides of the first piece
    logic [12:0]    need;          // ceil(pay_len / S): strides in a multi-packet buffer
    logic [TAP_W-1:0] hdr_words;
    logic           mpb;
    logic [3:0]     log2;          // payload buffer
    logic [3:0]     slog2;         // stride (clamped)
    logic [31:0]    rss_hash;
    logic [7:0]     rss_type;
    l3_type_e       l3_type;
    l4_type_e       l4_type;
    logic           ip_frag;
    logic [1:0]     vlan_tags;
  } shape_t;

  shape_t a_d, a_q, b_q;
  logic   a_valid_q, a_take, a_to_b;
  logic   b_valid_q, b_load, b_done;

  // Computed only while a frame waits at the FIFO head (the only time it is read).
  always_comb begin
    logic [QW-1:0] aq;
    logic          cand;
    logic [3:0]    s;
    a_d = '0;
    aq = '0;
    cand = 1'b0;
    s = '0;
    if (meta_valid) begin
      aq = ({25'd0, cls.qid} < 32'(NUM_RXQ)) ? QW'(cls.qid) : '0;
      cand          = qcfg[aq].split_en && (meta.l3_type != L3_NONE) && (meta.frame_len > qcfg[aq].hds_thresh);
      a_d.q         = aq;
      a_d.hdr_err   = meta.hdr_err;
      a_d.ovf       = cand && ((meta.pay_off > qcfg[aq].hdr_buf_bytes) || (meta.pay_off > 16'(PARSE_BYTES)));
      a_d.split     = cand && !a_d.ovf;
      a_d.flen      = meta.frame_len;
      a_d.hdr_len   = a_d.split ? meta.pay_off : 16'd0;
      a_d.pay_end   = a_d.split ? meta.ip_end : meta.frame_len;
      a_d.pay_len   = a_d.pay_end - a_d.hdr_len;
      a_d.log2      = qcfg[aq].pay_buf_log2;
      // Stride: min(pay_buf_log2, max(4, pay_buf_log2 - 8, pay_stride_log2)) (rx-rules.md).
      s = qcfg[aq].pay_stride_log2;
      if (s < 4'(RX_MPB_MIN_STRIDE_LOG2)) s = 4'(RX_MPB_MIN_STRIDE_LOG2);
      if (a_d.log2 > 4'd8 && s < a_d.log2 - 4'd8) s = a_d.log2 - 4'd8;
      if (s > a_d.log2) s = a_d.log2;
      a_d.slog2     = s;
      a_d.mpb       = qcfg[aq].pay_mpb;
      a_d.n_fresh   = ({1'b0, a_d.pay_len} + (17'd1 << a_d.log2) - 17'd1) >> a_d.log2;
      a_d.first_last = {1'b0, a_d.pay_len} <= (17'd1 << a_d.log2);
      a_d.first_len  = a_d.first_last ? a_d.pay_len : 16'(17'd1 << a_d.log2);
      a_d.first_str  = 13'(({1'b0, a_d.first_len} + (17'd1 << s) - 17'd1) >> s);
      a_d.need      = 13'(({1'b0, a_d.pay_len} + (17'd1 << s) - 17'd1) >> s);
      a_d.hdr_words = TAP_W'((a_d.hdr_len + 16'(DB - 1)) >> LW);
      a_d.rss_hash  = cls.rss_hash;
      a_d.rss_type  = 8'(cls.rss_type);
      a_d.l3_type   = meta.l3_type;
      a_d.l4_type   = meta.l4_type;
      a_d.ip_frag   = meta.ip_frag;
      a_d.vlan_tags = meta.vlan_tags;
    end
  end

  assign a_to_b     = a_valid_q && b_load;
  assign a_take     = meta_valid && (!a_valid_q || a_to_b);
  assign meta_ready = a_take;

  always_ff @(posedge clk) begin
    if (rst) begin
      a_valid_q <= 1'b0;
    end else if (a_take) begin
      a_valid_q <= 1'b1;
    end else if (a_to_b) begin
      a_valid_q <= 1'b0;
    end
  end
  always_ff @(posedge clk) begin
    if (a_take) a_q <= a_d;
    if (a_to_b) b_q <= a_q;
  end

  // ---------------------------------------------------------------- stage B state
  typedef enum logic [1:0] {
    B_FIRST,      // the frame waits to be decided and placed
    B_SEG,        // further payload pieces (fresh buffers)
    B_ABORT       // the queue went off mid-frame: discard the rest of the frame
  } bstate_e;

  bstate_e     bst_q;
  logic [15:0] pos_q;                // next payload byte (frame offset)
  // The next piece, worked out when the frame loads and at each piece step, so the step's
  // decisions start from registers: its length, whether it is the last, its end, its strides.
  logic [15:0] nx_len_q, nx_end_q;
  logic        nx_last_q, nx_has_q;
  logic [12:0] nx_str_q;
  logic [15:0] hdr_id_q;
  logic        fe_sent_q;            // a range with frame_end was already pushed

  logic [QW-1:0] q;
  assign q       = b_q.q;
  assign hdr_sel = q;
  assign pay_sel = q;

  // Per queue: next completion slot (planned), and the multi-packet cursor.
  logic [NUM_RXQ-1:0][15:0]       cq_idx_q;
  // Room in each completion ring, worked out a cycle ahead (so CQ.SW_IDX is seen one cycle
  // after it is written), and whether the queue took a slot in the last cycle (not counted in
  // that room yet).
  logic [NUM_RXQ-1:0][16:0]       cq_room_q;
  logic [NUM_RXQ-1:0]             cq_inc_q;
  logic [NUM_RXQ-1:0]             cur_v_q;
  logic [NUM_RXQ-1:0][15:0]       cur_id_q;
  logic [NUM_RXQ-1:0][ADDR_W-1:0] cur_next_q;    // address of the next free stride
  logic [NUM_RXQ-1:0][USW+1:0]    cur_used_q;    // strides used (0..256)

  // The held payload beat H (its data is in rx_pay_merge).
  logic              h_v_q, h_cont_q;
  logic [QW-1:0]     h_q_q;
  logic [ADDR_W-1:0] h_start_q;                  // first byte held
  logic [LW:0]       h_end_q;                    // one past the last byte held, mod 2 * DB

  // The open completion batch.
  logic              bat_v_q;
  logic [QW-1:0]     bat_q_q;
  logic [ADDR_W-1:0] bat_addr_q;
  logic [BNW-1:0]    bat_n_q;
  logic [7:0]        bat_nfr_q;
  logic [9:0]        bat_cyc_q;
  logic [15:0]       bat_us_q;

  // Commands decided in a step that already pushed one: the next cycles push them.
  typedef struct packed {
    logic [ADDR_W-1:0] addr;
    logic [16:0]       len;
    logic [1:0]        src;
    logic [QW-1:0]     q;
    logic [BNW-1:0]    ncpl;
  } cmd_t;
  logic pcmd_v_q, bcmd_v_q;
  cmd_t pcmd_q, bcmd_q;

  // ---------------------------------------------------------------- stage B: the frame's decision
  logic        idle;                 // no frame waits anywhere: batches and H may close now
  logic        first;                // the frame waits in B_FIRST
  logic [15:0] seg_len;
  logic        last_piece, has_piece, fits;
  logic [16:0] n_new, n_cpl;
  logic        drop_queue_off, drop_no_hdr, drop_no_pay, drop_cq_full, drop_any, ready_to_go;
  logic [USW+2:0] nstr;               // strides per buffer (1..256)

  assign idle  = !meta_valid && !a_valid_q && !b_valid_q;
  assign first = b_valid_q && bst_q == B_FIRST;
  assign nstr  = (USW+3)'(1) << (b_q.log2 - b_q.slog2);
  assign fits  = first && b_q.mpb && b_q.pay_len != '0 && cur_v_q[q] &&
                 ({1'b0, b_q.need} <= 14'(nstr) - 14'(cur_used_q[q]));
  // A payload that fits the current buffer is at most B long: the same first piece either way.
  assign seg_len    = nx_len_q;
  assign has_piece  = nx_has_q;
  assign last_piece = nx_last_q;

  always_comb begin
    n_new = '0; n_cpl = '0;
    drop_queue_off = 1'b0; drop_no_hdr = 1'b0; drop_no_pay = 1'b0; drop_cq_full = 1'b0;
    drop_any = 1'b0; ready_to_go = 1'b0;
    if (first) begin
      n_new          = fits ? 17'd0 : b_q.n_fresh;
      n_cpl          = (b_q.n_fresh == '0) ? 17'd1 : b_q.n_fresh;
      drop_queue_off = !b_q.hdr_err && !qcfg[q].enable;
      drop_no_hdr    = !b_q.hdr_err && !drop_queue_off && b_q.split && (hdr_posted[q] == '0);
      drop_no_pay    = !b_q.hdr_err && !drop_queue_off && !drop_no_hdr &&
                       ((n_new > {1'b0, pay_posted[q]}) || (n_new > 17'(CACHE_DEPTH)));
      drop_cq_full   = !b_q.hdr_err && !drop_queue_off && !drop_no_hdr && !drop_no_pay &&
                       (cq_room_q[q] < n_cpl + 17'(cq_inc_q[q]));
      drop_any       = b_q.hdr_err || drop_queue_off || drop_no_hdr || drop_no_pay || drop_cq_full;
      ready_to_go    = (!b_q.split || hdr_desc_valid[q]) &&
                       (n_new == '0 || (pay_desc_valid[q] && 17'(pay_cached[q]) >= n_new));
    end
  end

  // ---------------------------------------------------------------- the piece this step places
  logic [ADDR_W-1:0] p_addr, p_end, c_start;
  logic [16:0]       c_end;
  logic [15:0]       p_id;
  logic [7:0]        p_off;               // stride offset (pay_off)
  logic              merge, hold, absorb, h_stays;
  logic [LW:0]       p_tail;              // (lane + len) mod DB, 0 when beat-aligned
  logic [LW-1:0]     p_lane;              // the piece's first lane (fresh buffers: 0)
  logic [12:0]       p_strides;           // strides the piece takes
  logic [16:0]       p_lane_end, p_str_end;

  assign p_addr    = fits ? cur_next_q[q] : ADDR_W'(pay_desc_addr);
  assign p_id      = fits ? cur_id_q[q] : pay_desc_id;
  assign p_off     = fits ? 8'(cur_used_q[q]) : 8'd0;
  assign p_end     = p_addr + ADDR_W'(seg_len);
  // Payload buffers are DMA-width aligned (the descriptor engine skips others): only a piece
  // in the current buffer starts inside a beat.
  assign p_lane    = fits ? cur_next_q[q][LW-1:0] : '0;
  assign p_lane_end = 17'(p_lane) + 17'(seg_len);
  assign p_tail    = (LW+1)'(p_lane_end[LW-1:0]);
  assign p_strides = nx_str_q;
  assign p_str_end = 17'(p_lane) + (17'(p_strides) << b_q.slog2);
  // The piece starts in H's beat: it goes on filling it (h_cont_q: the queue's next free
  // stride is in H's beat, noted when H was held).
  assign merge     = h_v_q && fits && (h_q_q == q) && h_cont_q;

  // ---------------------------------------------------------------- completion record and batch
  rx_cpl_t     cpl;
  logic [15:0] cq_mask, slot;
  logic [63:0] cq_addr;
  logic        gen, sop_q;
  logic [BNW-1:0] b_n;                 // completions in the batch with this record
  logic [7:0]     b_nfr;               // frames in the batch with this record
  logic           cl_rec;              // the batch closes with this record
  logic           bat_other;           // the open batch is another queue's

  assign cq_mask = (16'd1 << qcfg[q].cq_log2) - 16'd1;
  assign slot    = cq_idx_q[q] & cq_mask;
  assign cq_addr = qcfg[q].cq_base + {44'd0, slot, 4'd0};
  assign gen     = !cq_idx_q[q][qcfg[q].cq_log2];
  // At a piece step the open batch, if any, is the frame's queue's: a frame of another queue
  // closes it first (need_close below). Counts are zero while no batch is open.
  assign bat_other = bat_v_q && (bat_q_q != q);
  assign b_n     = bat_n_q + 1'b1;
  assign b_nfr   = bat_nfr_q + 8'(last_piece || !has_piece);
  assign cl_rec  = (bat_n_q == BNW'(CPL_BATCH - 1)) || (slot == cq_mask) ||
                   ((last_piece || !has_piece) && qcfg[q].coal_frames != '0 &&
                    bat_nfr_q >= qcfg[q].coal_frames - 8'd1);
  // Hold a partly filled last beat only when the frame's batch stays open after it.
  assign hold      = b_q.mpb && has_piece && last_piece && (p_tail != '0) && !cl_rec;
  assign absorb    = hold && (p_lane_end <= 17'(DB));
  assign h_stays   = absorb && merge;
  assign c_start   = merge ? h_start_q : p_addr;
  // Both ends lie in one payload buffer (at most 32 KiB): the low 17 bits give the length.
  assign c_end     = hold ? {p_end[16:LW], {LW{1'b0}}} : p_end[16:0];
  logic [16:0] c_len;
  assign c_len     = c_end - c_start[16:0];

  always_comb begin
    cpl              = '0;
    cpl.pay_buf_id   = has_piece ? p_id : 16'd0;
    cpl.pay_len      = has_piece ? seg_len : 16'd0;
    cpl.hdr_buf_id   = b_q.split ? ((bst_q == B_FIRST) ? hdr_desc_id : hdr_id_q) : 16'd0;
    cpl.hdr_len      = 8'(b_q.hdr_len);     // <= PARSE_BYTES (<= 255)
    cpl.pay_off      = has_piece ? p_off : 8'd0;
    cpl.rss_hash     = b_q.rss_hash;
    cpl.rss_type     = b_q.rss_type;
    cpl.l3_type      = b_q.l3_type;
    cpl.l4_type      = b_q.l4_type;
    cpl.ip_frag      = b_q.ip_frag;
    cpl.vlan_tags    = b_q.vlan_tags;
    cpl.sop          = sop_q;
    cpl.eop          = last_piece || !has_piece;
    cpl.split        = b_q.split;
    cpl.hdr_valid    = b_q.split;
    cpl.pay_valid    = has_piece;
    cpl.hdr_overflow = b_q.ovf;
    cpl.queue        = 7'(q);
    cpl.gen          = gen;
  end
  assign rec_data = cpl;
  if (NLANE > 1) begin : g_lane
    assign rec_lane = LAW'(cq_addr[LW-1:4]);
  end else begin : g_nolane
    assign rec_lane = '0;
  end

  // ---------------------------------------------------------------- batch timer and closes
  logic bat_expired, need_flush, need_close;
  assign bat_expired = bat_v_q && qcfg[bat_q_q].coal_usecs != '0 && bat_us_q >= qcfg[bat_q_q].coal_usecs;
  // At a frame boundary: close the batch before a frame of another queue, on its timer, when
  // the RX path is idle and the queue waits for nothing (usecs 0), or when its queue is off.
  assign need_close = bat_v_q && (bat_expired || !qcfg[bat_q_q].enable ||
                                  (idle && qcfg[bat_q_q].coal_usecs == '0) ||
                                  (first && !b_q.hdr_err && qcfg[q].enable && bat_other));
  // Flush H when the next piece will not go on filling it, when a batch closes on its own,
  // when the RX path is idle, or when its queue is off.
  // (a frame that will be dropped or waits for descriptors flushes H too: rare, and it keeps
  // the drop checks off this path)
  assign need_flush = h_v_q && (idle || need_close || !qcfg[h_q_q].enable || (first && !merge));

  // ---------------------------------------------------------------- control
  typedef enum logic [2:0] {
    ST_NONE, ST_FLUSH, ST_CLOSE, ST_DROP, ST_PIECE, ST_ABORT
  } step_e;
  step_e step;
  logic  pend_busy, step_go;
  logic  hdr_now;                    // this step writes the header (its command now)
  logic  pcmd_now;                   // this step's piece command goes now (else pending)
  logic  p_cmd_needed;               // the piece needs a write command of its own
  cmd_t  c_new;                      // the command this step pushes now

  assign pend_busy    = pcmd_v_q || bcmd_v_q;
  assign hdr_now      = (bst_q == B_FIRST) && b_q.split;
  assign p_cmd_needed = has_piece && !absorb;
  assign pcmd_now     = p_cmd_needed && !hdr_now;

  always_comb begin
    step = ST_NONE;
    if (!pend_busy) begin
      if (b_valid_q && bst_q == B_ABORT) begin
        step = ST_ABORT;
      end else if (b_valid_q && bst_q == B_SEG) begin
        step = (!qcfg[q].enable || !pay_desc_valid[q]) ? ST_ABORT : ST_PIECE;
      end else if (need_flush) begin
        step = ST_FLUSH;
      end else if (need_close) begin
        step = ST_CLOSE;
      end else if (first) begin
        if (drop_any)         step = ST_DROP;
        else if (ready_to_go) step = ST_PIECE;
      end
    end
  end

  always_comb begin
    c_new = '0;
    unique case (step)
      ST_FLUSH: c_new = '{addr: h_start_q, len: 17'(h_end_q - h_start_q[LW:0]), src: SRC_PAY,
                          q: h_q_q, ncpl: '0};
      ST_CLOSE: c_new = '{addr: bat_addr_q, len: 17'({bat_n_q, 4'd0}), src: SRC_CPL, q: bat_q_q, ncpl: bat_n_q};
      ST_PIECE: begin
        if (hdr_now) c_new = '{addr: ADDR_W'(hdr_desc_addr), len: {1'b0, b_q.hdr_len}, src: SRC_HDR, q: q, ncpl: '0};
        else         c_new = '{addr: c_start, len: c_len, src: SRC_PAY, q: q, ncpl: '0};
      end
      default: ;
    endcase
  end

  // What this step pushes, and whether everything it pushes is taken this cycle.
  logic want_cmd, want_rng, want_note, want_rec, want_bclose;
  always_comb begin
    want_cmd = 1'b0; want_rng = 1'b0; want_note = 1'b0; want_rec = 1'b0; want_bclose = 1'b0;
    unique case (step)
      ST_FLUSH: begin want_cmd = 1'b1; want_note = 1'b1; end
      ST_CLOSE: begin want_cmd = 1'b1; want_bclose = 1'b1; end
      ST_DROP:  want_rng = 1'b1;
      ST_PIECE: begin
        want_cmd  = hdr_now || pcmd_now;
        want_rng  = 1'b1;
        want_note = has_piece;
        want_rec  = 1'b1;
      end
      ST_ABORT: want_rng = !fe_sent_q;
      default: ;
    endcase
  end
  assign step_go = (step != ST_NONE) &&
                   (!want_cmd || cmd_ready) && (!want_rng || rng_ready) && (!want_note || note_ready) &&
                   (!want_rec || rec_ready) && (!want_bclose || bclose_ready);

  // Pending commands go first, one per cycle (the piece's before the batch's).
  always_comb begin
    cmd_valid = 1'b0;
    cmd_addr  = c_new.addr;
    cmd_len   = c_new.len;
    cmd_src   = c_new.src;
    cmd_queue = c_new.q;
    cmd_ncpl  = c_new.ncpl;
    if (pcmd_v_q) begin
      cmd_valid = 1'b1;
      {cmd_addr, cmd_len, cmd_src, cmd_queue, cmd_ncpl} = pcmd_q;
    end else if (bcmd_v_q) begin
      cmd_valid = 1'b1;
      {cmd_addr, cmd_len, cmd_src, cmd_queue, cmd_ncpl} = bcmd_q;
    end else begin
      cmd_valid = want_cmd && step_go;
    end
  end

  always_comb begin
    rng_valid     = want_rng && step_go;
    rng_start     = (step == ST_PIECE && has_piece) ? pos_q : 16'd0;
    rng_end       = nx_end_q;
    rng_dst       = p_addr[LW-1:0];
    rng_emit      = (step == ST_PIECE) && has_piece;
    rng_frame_end = (step != ST_PIECE) || last_piece || !has_piece;
    rng_flen      = b_q.flen;
    rng_tap       = (step == ST_PIECE && bst_q == B_FIRST) ? b_q.hdr_words : '0;
    note_valid    = want_note && step_go;
    note_flush    = (step == ST_FLUSH);
    note_merge    = merge;
    note_hold     = hold;
    rec_valid     = want_rec && step_go;
    rec_close     = cl_rec;
    bclose        = want_bclose && step_go;
  end

  // Events and descriptor pops.
  always_comb begin
    ev_frame = 1'b0; ev_drop_hdr_err = 1'b0; ev_drop_queue_off = 1'b0; ev_drop_no_hdr_buf = 1'b0;
    ev_drop_no_pay_buf = 1'b0; ev_drop_cq_full = 1'b0; ev_hdr_overflow = 1'b0;
    hdr_desc_pop = '0;
    pay_desc_pop = '0;
    b_done = 1'b0;
    if (step_go) begin
      unique case (step)
        ST_DROP: begin
          b_done             = 1'b1;
          ev_drop_hdr_err    = b_q.hdr_err;
          ev_drop_queue_off  = drop_queue_off;
          ev_drop_no_hdr_buf = drop_no_hdr;
          ev_drop_no_pay_buf = drop_no_pay;
          ev_drop_cq_full    = drop_cq_full;
        end
        ST_PIECE: begin
          if (bst_q == B_FIRST) begin
            hdr_desc_pop[q] = b_q.split;
            ev_hdr_overflow = b_q.ovf;
          end
          pay_desc_pop[q] = has_piece && !fits;
          if (last_piece || !has_piece) begin
            b_done   = 1'b1;
            ev_frame = 1'b1;
          end
        end
        ST_ABORT: begin
          b_done            = 1'b1;
          ev_drop_queue_off = 1'b1;
        end
        default: ;
      endcase
    end
  end

  assign b_load = !b_valid_q || b_done;

  // Busy: a frame of the queue is being placed, H or the open batch is the queue's, or a
  // command of it waits to be pushed.
  always_comb begin
    plan_busy = '0;
    if (b_valid_q && bst_q != B_FIRST) plan_busy[q] = 1'b1;
    if (h_v_q)    plan_busy[h_q_q]   = 1'b1;
    if (bat_v_q)  plan_busy[bat_q_q] = 1'b1;
    if (pcmd_v_q) plan_busy[pcmd_q.q] = 1'b1;
    if (bcmd_v_q) plan_busy[bcmd_q.q] = 1'b1;
  end

  // ---------------------------------------------------------------- state
  always_ff @(posedge clk) begin
    if (rst) begin
      b_valid_q <= 1'b0;
      bst_q     <= B_FIRST;
      pos_q     <= '0;
      sop_q     <= 1'b1;
      hdr_id_q  <= '0;
      fe_sent_q <= 1'b0;
      cq_idx_q  <= '0;
      cur_v_q   <= '0;
      h_v_q     <= 1'b0;
      h_cont_q  <= 1'b0;
      bat_v_q   <= 1'b0;
      bat_n_q   <= '0;
      bat_nfr_q <= '0;
      bat_cyc_q <= '0;
      bat_us_q  <= '0;
      pcmd_v_q  <= 1'b0;
      bcmd_v_q  <= 1'b0;
    end else begin
      // pending commands drain, one per cycle
      if (cmd_ready) begin
        if (pcmd_v_q)      pcmd_v_q <= 1'b0;
        else if (bcmd_v_q) bcmd_v_q <= 1'b0;
      end
      // the batch timer: microseconds since the batch's first completion
      if (bat_v_q) begin
        if (bat_cyc_q == 10'(CYCLES_PER_US - 1)) begin
          bat_cyc_q <= '0;
          if (bat_us_q != '1) bat_us_q <= bat_us_q + 1'b1;
        end else begin
          bat_cyc_q <= bat_cyc_q + 1'b1;
        end
      end
      if (step_go) begin
        unique case (step)
          ST_FLUSH: h_v_q <= 1'b0;
          ST_CLOSE: begin
            bat_v_q   <= 1'b0;
            bat_n_q   <= '0;
            bat_nfr_q <= '0;
          end
          ST_ABORT: ;
          ST_DROP:  ;
          ST_PIECE: begin
            if (bst_q == B_FIRST && b_q.split) hdr_id_q <= hdr_desc_id;
            pos_q  <= nx_end_q;
            sop_q  <= 1'b0;
            bst_q  <= B_SEG;
            // the next piece: fresh buffers of B bytes, the last one the rest
            begin
              automatic logic [15:0] rem  = b_q.pay_end - nx_end_q;
              automatic logic        lst  = {1'b0, rem} <= (17'd1 << b_q.log2);
              automatic logic [15:0] len  = lst ? rem : 16'(17'd1 << b_q.log2);
              nx_len_q  <= len;
              nx_last_q <= lst;
              nx_has_q  <= rem != '0;
              nx_end_q  <= nx_end_q + len;
              nx_str_q  <= 13'(({1'b0, len} + (17'd1 << b_q.slog2) - 17'd1) >> b_q.slog2);
            end
            if (rng_valid && rng_frame_end) fe_sent_q <= 1'b1;
            // completion slot and batch
            cq_idx_q[q] <= cq_idx_q[q] + 1'b1;
            if (cl_rec) begin
              bat_v_q   <= 1'b0;
              bat_n_q   <= '0;
              bat_nfr_q <= '0;
              bcmd_v_q  <= 1'b1;
              bcmd_q    <= '{addr: bat_v_q ? bat_addr_q : cq_addr, len: 17'({b_n, 4'd0}),
                             src: SRC_CPL, q: q, ncpl: b_n};
            end else begin
              bat_v_q   <= 1'b1;
              bat_q_q   <= q;
              bat_n_q   <= b_n;
              bat_nfr_q <= b_nfr;
              if (!bat_v_q) begin
                bat_addr_q <= cq_addr;
                bat_cyc_q  <= '0;
                bat_us_q   <= '0;
              end
            end
            // the piece's command when the header took the port this cycle
            if (p_cmd_needed && hdr_now) begin
              pcmd_v_q <= 1'b1;
              pcmd_q   <= '{addr: c_start, len: c_len, src: SRC_PAY, q: q, ncpl: '0};
            end
            // H
            if (has_piece) begin
              if (hold) begin
                h_v_q     <= 1'b1;
                h_q_q     <= q;
                h_end_q   <= p_end[LW:0];
                // the queue's next free stride (p_addr + strides) is in H's beat
                h_cont_q  <= (p_lane_end[16:LW] == p_str_end[16:LW]);
                if (!h_stays) h_start_q <= absorb ? p_addr : {p_end[ADDR_W-1:LW], {LW{1'b0}}};
              end else if (merge) begin
                h_v_q <= 1'b0;
              end
            end
            // multi-packet cursor
            if (has_piece && b_q.mpb) begin
              if (fits) begin
                cur_next_q[q] <= p_addr + (ADDR_W'(b_q.need) << b_q.slog2);
                cur_used_q[q] <= cur_used_q[q] + (USW+2)'(b_q.need);
              end else if (last_piece) begin
                cur_v_q[q]    <= 1'b1;
                cur_id_q[q]   <= pay_desc_id;
                cur_next_q[q] <= p_addr + (ADDR_W'(p_strides) << b_q.slog2);
                cur_used_q[q] <= (USW+2)'(p_strides);
              end
            end
          end
          default: ;
        endcase
      end
      if (rng_valid && rng_ready && rng_frame_end) fe_sent_q <= 1'b1;
      // frame done: the next one loads (stage B takes stage A's frame)
      if (b_done) b_valid_q <= 1'b0;
      if (b_done || (b_valid_q && bst_q == B_SEG && step == ST_ABORT && step_go)) bst_q <= B_FIRST;
      if (b_valid_q && bst_q == B_SEG && step == ST_ABORT && !step_go) bst_q <= B_ABORT;
      if (a_to_b) begin
        b_valid_q <= 1'b1;
        bst_q     <= B_FIRST;
        pos_q     <= a_q.hdr_len;
        sop_q     <= 1'b1;
        fe_sent_q <= 1'b0;
        nx_len_q  <= a_q.first_len;
        nx_last_q <= a_q.first_last;
        nx_has_q  <= a_q.pay_len != '0;
        nx_end_q  <= a_q.hdr_len + a_q.first_len;
        nx_str_q  <= a_q.first_str;
      end
      for (int i = 0; i < NUM_RXQ; i++) begin
        if (!qcfg[i].enable) begin
          cq_idx_q[i] <= '0;
          cur_v_q[i]  <= 1'b0;
        end
      end
    end
  end

  // Completion-ring room, a cycle ahead; evaluated only while a frame is around (a frame is
  // at the FIFO head or in stage A for at least a cycle before stage B decides it).
  always_ff @(posedge clk) begin
    if (rst) begin
      cq_room_q <= '0;
      cq_inc_q  <= '0;
    end else begin
      cq_inc_q <= '0;
      if (step_go && step == ST_PIECE) cq_inc_q[q] <= 1'b1;
      if (meta_valid || a_valid_q || b_valid_q) begin
        for (int i = 0; i < NUM_RXQ; i++) begin
          automatic logic [16:0] used = {1'b0, cq_idx_q[i] - qcfg[i].cq_sw_idx};
          automatic logic [16:0] size = 17'd1 << qcfg[i].cq_log2;
          // A consumer index ahead of the producer (a driver bug) leaves no room rather than wrapping.
          cq_room_q[i] <= (used > size) ? 17'd0 : size - used;
        end
      end
    end
  end

  logic unused;
  assign unused = ^{cls.steered, meta.qinq, meta.ipv4_opts, meta.ipv6_ext, nstr, p_tail, p_lane_end[LW-1:0],
                    p_str_end[LW-1:0], b_q.first_len, b_q.first_last, b_q.first_str};
endmodule
