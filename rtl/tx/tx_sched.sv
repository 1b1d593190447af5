// TX scheduler: picks a queue, takes one whole frame's descriptors, checks them and issues the
// frame's segment reads (docs/tx.md).
//
// Queues are served round robin, one whole frame at a time. A queue is eligible when it is
// enabled, its descriptor cache holds a whole frame (EOP, a failed descriptor, or MAX_SEGS
// descriptors) and its completion ring has room for one more completion (`cq_room`).
//   IDLE  : pick a queue and pop its first descriptor in the same cycle
//   POP   : pop one descriptor per cycle until EOP, a failed descriptor, or MAX_SEGS
//   CHECK : status in the order of docs/tx.md; a failed frame goes straight to the completion
//           path (no reads); a good one waits for room in the TX FIFO (`FIFO_WORDS` words,
//           reserved here for the whole frame, so R beats never wait for space) and is handed
//           to the store stage
//   ISSUE : one AXI read burst per cycle, at most MAX_BURST beats (a good segment never
//           crosses 4 KiB), each with a note for the gather stage of its byte lanes
// A frame with a failed descriptor read gets status DESC_RD_ERR whatever else its known
// descriptors say: its length and checksum fields are unknown.
// Reset: synchronous, active high.
module tx_sched
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DMA_DATA_W = 128,
  parameter int unsigned ADDR_W     = 64,
  parameter int unsigned NUM_TXQ    = 4,
  parameter int unsigned MAX_BURST  = 256,
  parameter int unsigned FIFO_WORDS = 128,     // TX FIFO size in DMA words
  parameter int unsigned EGR_FRAMES = 32,      // frames the FIFO may hold at once
  localparam int unsigned DB        = DMA_DATA_W / 8,
  localparam int unsigned LW        = $clog2(DB),
  localparam int unsigned RW        = $clog2(FIFO_WORDS) + 1,
  localparam int unsigned QW        = (NUM_TXQ > 1) ? $clog2(NUM_TXQ) : 1
) (
  input  logic                          clk,
  input  logic                          rst,
  input  logic [15:0]                   max_frame_len,   // TX_FRAME_LIMIT
  // per queue
  input  logic [NUM_TXQ-1:0]            q_enable,
  input  logic [NUM_TXQ-1:0]            cq_room,
  input  logic [NUM_TXQ-1:0]            desc_valid,
  output logic [QW-1:0]                 desc_sel,        // the queue whose cache head is read
  input  tx_desc_t                      desc,            // head of queue desc_sel's cache
  input  logic                          desc_err,
  input  logic [NUM_TXQ-1:0]            frame_ready,
  input  logic [NUM_TXQ-1:0][15:0]      desc_hw_idx,
  output logic [NUM_TXQ-1:0]            desc_pop,
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
  // burst notes for the gather stage, pushed when the burst is accepted
  input  logic                          bn_ready,
  output logic [8:0]                    bn_beats,
  output logic [LW-1:0]                 bn_lo,           // first valid lane of the first beat
  output logic [LW:0]                   bn_hi,           // one past the last valid lane of the last beat
  output logic                          bn_frame_last
);
  localparam int unsigned SW  = $clog2(TX_MAX_SEGS);

  initial begin
    if (NUM_TXQ < 1 || NUM_TXQ > 8) $fatal(1, "tx_sched: NUM_TXQ must be 1..8");
    if (MAX_BURST < 1 || MAX_BURST > 256) $fatal(1, "tx_sched: MAX_BURST must be 1..256");
    if (FIFO_WORDS * DB < 9216) $fatal(1, "tx_sched: the TX FIFO must hold a 9 KiB frame");
  end

  typedef enum logic [1:0] {S_IDLE, S_POP, S_CHECK, S_ISSUE} state_e;

  state_e            state_q;
  logic [QW-1:0]     q_q, last_q;
  logic [SW-1:0]     i_q;               // descriptors taken so far (POP), segment (ISSUE)
  logic [SW-1:0]     nseg_q;            // segments of the frame, minus one
  logic [19:0]       len_q;
  logic              bad_seg_q, desc_err_q;
  logic              csum_en_q, csum_udp_q;
  logic [7:0]        csum_start_q, csum_off_q;
  logic [15:0]       tag_q, desc_idx_q;
  logic [63:0]       seg_addr_q [TX_MAX_SEGS];
  logic [12:0]       seg_len_q  [TX_MAX_SEGS];
  logic [9:0]        issued_q;          // beats of the current segment already requested
  logic [RW-1:0]     resv_q;            // FIFO words reserved (frames in the FIFO or coming)
  logic [$clog2(EGR_FRAMES):0] frames_q;

  // ---------------------------------------------------------------- pick
  logic [NUM_TXQ-1:0] eligible;
  logic [QW-1:0]      pick;
  logic               found;

  always_comb begin
    for (int t = 0; t < NUM_TXQ; t++) eligible[t] = q_enable[t] && frame_ready[t] && cq_room[t];
    pick  = '0;
    found = 1'b0;
    for (int k = 1; k <= NUM_TXQ; k++) begin
      if (!found && eligible[(32'(last_q) + k) % NUM_TXQ]) begin
        pick  = QW'((32'(last_q) + k) % NUM_TXQ);
        found = 1'b1;
      end
    end
  end

  // ---------------------------------------------------------------- descriptor intake
  logic          take;             // a descriptor is popped this cycle
  logic [QW-1:0] tq;               // from this queue
  /* verilator lint_off UNUSEDSIGNAL */
  tx_desc_t      d;                // reserved bits unused
  /* verilator lint_on UNUSEDSIGNAL */
  logic          d_err, d_eop, d_bad, d_last;
  logic [63:0]   d_addr;
  logic [15:0]   d_len;

  assign take   = (state_q == S_IDLE && found && ord_ready) || (state_q == S_POP);
  assign tq     = (state_q == S_IDLE) ? pick : q_q;
  assign desc_sel = tq;
  assign d      = desc;
  assign d_err  = desc_err;
  assign d_addr = d.addr;
  assign d_len  = d.len;
  assign d_eop  = d.eop;
  assign d_bad  = !d_err && (d_len == 16'd0 || d_len > 16'd4096 || {4'd0, d_addr[11:0]} + d_len > 16'd4096);
  // The frame ends at EOP, at a failed descriptor, or at MAX_SEGS descriptors.
  assign d_last = d_eop || d_err || (32'(i_q) == TX_MAX_SEGS - 1 && state_q == S_POP);

  always_comb begin
    desc_pop = '0;
    if (take) desc_pop[tq] = 1'b1;
  end

  assign start_valid = take && state_q == S_IDLE;
  assign start_queue = 3'(tq);

  // ---------------------------------------------------------------- checks
  logic [15:0]   limit;
  logic [16:0]   csum_end;
  tx_status_e    status;
  logic [RW-1:0] words;
  logic          room, go;

  // The FIFO size caps the limit; compared in 32 bits, since a 64 KiB or larger FIFO does not
  // fit the 16-bit register (it then caps nothing).
  assign limit    = (32'(max_frame_len) > FIFO_WORDS * DB) ? 16'(FIFO_WORDS * DB) : max_frame_len;
  assign csum_end = {9'd0, csum_start_q} + {9'd0, csum_off_q} + 17'd2;

  always_comb begin
    if (desc_err_q)                                   status = TX_DESC_RD_ERR;
    else if (bad_seg_q)                               status = TX_BAD_SEG;
    else if (len_q < 20'(TX_MIN_FRAME_LEN) || len_q > {4'd0, limit}) status = TX_BAD_LEN;
    else if (csum_en_q && (csum_start_q[0] || csum_off_q[0] || {3'd0, csum_end} > len_q)) status = TX_BAD_CSUM;
    else                                              status = TX_OK;
  end

  assign words = RW'((len_q + 20'(DB - 1)) >> LW);
  assign room  = ({1'b0, resv_q} + {1'b0, words} <= (RW+1)'(FIFO_WORDS)) && (32'(frames_q) < EGR_FRAMES);
  assign go    = state_q == S_CHECK && (status != TX_OK || room);

  assign ord_valid   = go;
  assign ord_nodata  = status != TX_OK;
  assign fail_valid  = go && status != TX_OK;
  assign frame_valid = go && status == TX_OK;

  always_comb begin
    fail_cpl          = '0;
    fail_cpl.qid      = 3'(q_q);
    fail_cpl.desc_idx = desc_idx_q;
    fail_cpl.ndesc    = 16'({1'b0, i_q} + 1'b1);
    fail_cpl.status   = status;
    if (status != TX_DESC_RD_ERR) begin
      fail_cpl.len = len_q[15:0];
      fail_cpl.tag = tag_q;
    end
  end

  always_comb begin
    frame            = '0;
    frame.qid        = 3'(q_q);
    frame.desc_idx   = desc_idx_q;
    frame.ndesc      = 16'({1'b0, i_q} + 1'b1);
    frame.len        = len_q[15:0];
    frame.tag        = tag_q;
    frame.csum_en    = csum_en_q;
    frame.csum_udp   = csum_udp_q;
    frame.csum_start = csum_start_q;
    frame.csum_pos   = {8'd0, csum_start_q} + {8'd0, csum_off_q};
  end

  // ---------------------------------------------------------------- read issue
  logic [63:0]   s_addr;
  logic [12:0]   s_len;
  logic [13:0]   s_end;          // lane offset + length
  logic [9:0]    s_beats, left;
  logic [8:0]    burst;
  logic          seg_done, ar_fire;

  assign s_addr   = seg_addr_q[i_q];
  assign s_len    = seg_len_q[i_q];
  assign s_end    = {1'b0, s_len} + 14'(s_addr[LW-1:0]);
  assign s_beats  = 10'((s_end + 14'(DB - 1)) >> LW);
  assign left     = s_beats - issued_q;
  assign burst    = (left > 10'(MAX_BURST)) ? 9'(MAX_BURST) : 9'(left);
  assign seg_done = {1'b0, burst} == left;

  assign m_arvalid     = state_q == S_ISSUE && bn_ready;
  assign m_araddr      = ADDR_W'({s_addr[63:LW], {LW{1'b0}}} + {44'd0, issued_q, {LW{1'b0}}});
  assign m_arlen       = 8'(burst - 9'd1);
  assign ar_fire       = m_arvalid && m_arready;
  assign bn_beats      = burst;
  assign bn_lo         = (issued_q == '0) ? s_addr[LW-1:0] : '0;
  assign bn_hi         = seg_done ? ((s_end[LW-1:0] == '0) ? (LW+1)'(DB) : {1'b0, s_end[LW-1:0]}) : (LW+1)'(DB);
  assign bn_frame_last = seg_done && i_q == nseg_q;

  // ---------------------------------------------------------------- state
  always_ff @(posedge clk) begin
    if (rst) begin
      state_q  <= S_IDLE;
      last_q   <= QW'(NUM_TXQ - 1);
      q_q      <= '0;
      i_q      <= '0;
      nseg_q   <= '0;
      issued_q <= '0;
    end else begin
      case (state_q)
        S_IDLE: if (take) begin
          q_q     <= pick;
          last_q  <= pick;
          i_q     <= '0;
          state_q <= d_last ? S_CHECK : S_POP;
          if (!d_last) i_q <= SW'(1);
        end
        S_POP: if (!d_last) i_q <= i_q + 1'b1;
               else state_q <= S_CHECK;
        S_CHECK: if (go) begin
          nseg_q   <= i_q;
          i_q      <= '0;
          issued_q <= '0;
          state_q  <= (status == TX_OK) ? S_ISSUE : S_IDLE;
        end
        S_ISSUE: if (ar_fire) begin
          if (seg_done) begin
            issued_q <= '0;
            if (i_q == nseg_q) begin
              i_q     <= '0;
              state_q <= S_IDLE;
            end else begin
              i_q     <= i_q + 1'b1;
            end
          end else begin
            issued_q <= issued_q + 10'(burst);
          end
        end
        default: state_q <= S_IDLE;
      endcase
    end
  end

  // Frame fields: the first descriptor's settings, the segments, the checks so far.
  always_ff @(posedge clk) begin
    if (take) begin
      seg_addr_q[i_q] <= d_addr;
      seg_len_q[i_q]  <= d_len[12:0];
      if (state_q == S_IDLE) begin
        desc_idx_q   <= desc_hw_idx[tq];
        csum_en_q    <= d.csum;
        csum_udp_q   <= d.csum_udp;
        csum_start_q <= d.csum_start;
        csum_off_q   <= d.csum_offset;
        tag_q        <= d.tag;
        len_q        <= d_err ? 20'd0 : {4'd0, d_len};
        bad_seg_q    <= d_bad;
        desc_err_q   <= d_err;
      end else begin
        len_q        <= len_q + (d_err ? 20'd0 : {4'd0, d_len});
        bad_seg_q    <= bad_seg_q || d_bad || (d_last && !d_eop && !d_err);
        desc_err_q   <= desc_err_q || d_err;
      end
    end
  end

  // ---------------------------------------------------------------- FIFO reservation
  always_ff @(posedge clk) begin
    if (rst) begin
      resv_q   <= '0;
      frames_q <= '0;
    end else begin
      resv_q   <= resv_q + (frame_valid ? words : '0) - RW'(rel_word)
                         - (rel_discard ? rel_discard_words : '0);
      frames_q <= frames_q + ($clog2(EGR_FRAMES)+1)'(frame_valid)
                           - ($clog2(EGR_FRAMES)+1)'(rel_frame) - ($clog2(EGR_FRAMES)+1)'(rel_discard);
    end
  end

  logic unused;
  assign unused = ^desc_valid;  // frame_ready guarantees the frame's descriptors are cached
endmodule
