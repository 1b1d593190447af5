// RX DMA engine with header/data split (docs/rx-rules.md §3-4).
//
// Takes one frame at a time from the parser's metadata queue, decides split / drop, waits until
// every descriptor the frame needs is prefetched, then writes:
//   1. bytes [0, hdr_len) to the header buffer (split frames only),
//   2. the payload bytes to as many payload buffers as needed, each from offset 0, and after
//      each payload buffer one 16-byte completion (a frame with no payload gets one completion),
//   3. discards the rest of the frame (Ethernet padding past the IP datagram).
// Everything goes through one AXI write master in order on one AXI ID, so completions never
// overtake the data they describe.
// Reset: synchronous, active high. While `enable` is low the completion index is held at zero.
module rx_split_dma
  import nic_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,   // DMA data width
  parameter int unsigned ADDR_W      = 64,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int unsigned CACHE_DEPTH = 16,
  parameter int unsigned QUEUE       = 0
) (
  input  logic                clk,
  input  logic                rst,
  // frame metadata
  input  logic                meta_valid,
  output logic                meta_ready,
  input  rx_meta_t            meta,
  // queue configuration
  input  logic                enable,
  input  logic                split_en,
  input  logic [15:0]         hds_thresh,
  input  logic [15:0]         hdr_buf_bytes,
  input  logic [3:0]          pay_buf_log2,
  input  logic [63:0]         cq_base,
  input  logic [3:0]          cq_log2,
  input  logic [15:0]         cq_sw_idx,
  output logic [15:0]         cq_hw_idx,
  // descriptor caches
  input  logic                hdr_desc_valid,
  output logic                hdr_desc_pop,
  input  logic [63:0]         hdr_desc_addr,
  input  logic [15:0]         hdr_desc_id,
  input  logic [15:0]         hdr_posted,
  input  logic                pay_desc_valid,
  output logic                pay_desc_pop,
  input  logic [63:0]         pay_desc_addr,
  input  logic [15:0]         pay_desc_id,
  input  logic [15:0]         pay_posted,
  input  logic [$clog2(CACHE_DEPTH):0] pay_cached,
  // realigner
  output logic                rng_valid,
  input  logic                rng_ready,
  output logic [15:0]         rng_end,
  output logic                rng_emit,
  output logic                rng_frame_end,
  input  logic                rng_done,
  input  logic                ra_valid,
  output logic                ra_ready,
  input  logic [DATA_W-1:0]   ra_data,
  // AXI write master commands and data
  output logic                wr_cmd_valid,
  input  logic                wr_cmd_ready,
  output logic [ADDR_W-1:0]   wr_cmd_addr,
  output logic [16:0]         wr_cmd_len,
  output logic                wr_valid,
  input  logic                wr_ready,
  output logic [DATA_W-1:0]   wr_data,
  // events (one-cycle pulses)
  output logic                ev_frame,
  output logic                ev_drop_hdr_err,
  output logic                ev_drop_queue_off,
  output logic                ev_drop_no_hdr_buf,
  output logic                ev_drop_no_pay_buf,
  output logic                ev_drop_cq_full
);
  localparam int unsigned DB        = DATA_W / 8;
  localparam int unsigned LW        = $clog2(DB);
  localparam int unsigned CW        = (DATA_W >= 128) ? DATA_W : 128;
  localparam int unsigned CPL_BEATS = (DATA_W >= 128) ? 1 : 128 / DATA_W;

  initial begin
    if (DB < 8 || (DB & (DB - 1)) != 0) $fatal(1, "rx_split_dma: DATA_W must be a power of two >= 64");
    if (QUEUE > 127) $fatal(1, "rx_split_dma: QUEUE must fit the completion's 7-bit queue field");
  end

  typedef enum logic [3:0] {
    S_IDLE,
    S_DECIDE,
    S_DROP,
    S_HDR_CMD,
    S_HDR_DATA,
    S_SEG_CMD,
    S_SEG_DATA,
    S_CPL_CMD,
    S_CPL_DATA,
    S_TAIL
  } state_e;

  state_e      state_q, state_d;
  rx_meta_t    meta_q;

  // ---------------------------------------------------------------- per-frame decision
  logic        split_cand, hdr_overflow, split;
  logic [15:0] hdr_len, pay_end, pay_len;
  logic [16:0] n_pay, n_cpl, cq_used, cq_room;
  logic        drop_hdr_err, drop_queue_off, drop_no_hdr, drop_no_pay, drop_cq_full, drop_any;
  logic        ready_to_go;

  always_comb begin
    split_cand   = split_en && (meta_q.l3_type != L3_NONE) && (meta_q.frame_len > hds_thresh);
    hdr_overflow = split_cand && ((meta_q.pay_off > hdr_buf_bytes) || (meta_q.pay_off > 16'(PARSE_BYTES)));
    split        = split_cand && !hdr_overflow;
    hdr_len      = split ? meta_q.pay_off : 16'd0;
    pay_end      = split ? meta_q.ip_end : meta_q.frame_len;
    pay_len      = pay_end - hdr_len;
    n_pay        = ({1'b0, pay_len} + (17'd1 << pay_buf_log2) - 17'd1) >> pay_buf_log2;
    n_cpl        = (n_pay == '0) ? 17'd1 : n_pay;
    cq_used      = {1'b0, cq_hw_idx - cq_sw_idx};
    cq_room      = (17'd1 << cq_log2) - cq_used;

    drop_hdr_err   = meta_q.hdr_err;
    drop_queue_off = !drop_hdr_err && !enable;
    drop_no_hdr    = !drop_hdr_err && !drop_queue_off && split && (hdr_posted == '0);
    drop_no_pay    = !drop_hdr_err && !drop_queue_off && !drop_no_hdr &&
                     ((n_pay > {1'b0, pay_posted}) || (n_pay > 17'(CACHE_DEPTH)));
    drop_cq_full   = !drop_hdr_err && !drop_queue_off && !drop_no_hdr && !drop_no_pay &&
                     (cq_room < n_cpl);
    drop_any       = drop_hdr_err || drop_queue_off || drop_no_hdr || drop_no_pay || drop_cq_full;
    ready_to_go    = (!split || hdr_desc_valid) &&
                     (n_pay == '0 || (pay_desc_valid && {1'b0, 11'd0, pay_cached} >= n_pay));
  end

  // ---------------------------------------------------------------- segment walk
  logic [15:0] pos_q;            // next payload byte (frame offset)
  logic        first_q;          // next completion is the frame's first
  logic [15:0] hdr_id_q, pay_id_q;
  logic [15:0] seg_len;
  logic [16:0] buf_bytes;
  logic        last_seg;
  logic [15:0] cq_idx_q;
  logic [$clog2(CPL_BEATS+1)-1:0] cpl_beat_q;
  logic        cmd_sent_q, rng_sent_q;
  logic [15:0] seg_len_q;

  assign buf_bytes = 17'd1 << pay_buf_log2;
  assign seg_len   = ({1'b0, pay_end - pos_q} > buf_bytes) ? buf_bytes[15:0] : (pay_end - pos_q);
  assign last_seg  = (pos_q + seg_len_q == pay_end);
  assign cq_hw_idx = cq_idx_q;

  // ---------------------------------------------------------------- completion record
  logic [127:0]  cpl;
  logic [7:0]    cpl_flags;
  logic [15:0]   cq_mask;
  logic [63:0]   cq_addr;
  logic          gen;
  logic [CW-1:0] cpl_ext;

  assign cq_mask = (16'd1 << cq_log2) - 16'd1;
  assign cq_addr = cq_base + {44'd0, cq_idx_q & cq_mask, 4'd0};
  assign gen     = !cq_idx_q[cq_log2];

  always_comb begin
    cpl_flags = '0;
    cpl_flags[CPL_SOP]          = first_q;
    cpl_flags[CPL_EOP]          = last_seg;
    cpl_flags[CPL_SPLIT]        = split;
    cpl_flags[CPL_HDR_VALID]    = split;
    cpl_flags[CPL_PAY_VALID]    = (seg_len_q != '0);
    cpl_flags[CPL_HDR_OVERFLOW] = hdr_overflow;
    cpl = pack_cpl((seg_len_q != '0) ? pay_id_q : 16'd0, seg_len_q, split ? hdr_id_q : 16'd0, hdr_len,
                   32'd0, 8'd0, {1'b0, meta_q.vlan_tags, meta_q.ip_frag, meta_q.l4_type, meta_q.l3_type},
                   cpl_flags, 7'(QUEUE), gen);
    cpl_ext = CW'(cpl) << {cq_addr[LW-1:0], 3'b000};
  end

  // ---------------------------------------------------------------- control
  always_comb begin
    state_d            = state_q;
    meta_ready         = 1'b0;
    rng_valid          = 1'b0;
    rng_end            = '0;
    rng_emit           = 1'b0;
    rng_frame_end      = 1'b0;
    ra_ready           = 1'b0;
    wr_cmd_valid       = 1'b0;
    wr_cmd_addr        = '0;
    wr_cmd_len         = '0;
    wr_valid           = 1'b0;
    wr_data            = ra_data;
    hdr_desc_pop       = 1'b0;
    pay_desc_pop       = 1'b0;
    ev_frame           = 1'b0;
    ev_drop_hdr_err    = 1'b0;
    ev_drop_queue_off  = 1'b0;
    ev_drop_no_hdr_buf = 1'b0;
    ev_drop_no_pay_buf = 1'b0;
    ev_drop_cq_full    = 1'b0;

    unique case (state_q)
      S_IDLE: begin
        meta_ready = 1'b1;
        if (meta_valid) state_d = S_DECIDE;
      end
      S_DECIDE: begin
        if (drop_any) begin
          ev_drop_hdr_err    = drop_hdr_err;
          ev_drop_queue_off  = drop_queue_off;
          ev_drop_no_hdr_buf = drop_no_hdr;
          ev_drop_no_pay_buf = drop_no_pay;
          ev_drop_cq_full    = drop_cq_full;
          state_d = S_DROP;
        end else if (ready_to_go) begin
          state_d = split ? S_HDR_CMD : S_SEG_CMD;
        end
      end
      S_DROP: begin
        rng_valid     = !rng_sent_q;
        rng_end       = meta_q.frame_len;
        rng_frame_end = 1'b1;
        if (rng_done) state_d = S_IDLE;
      end
      S_HDR_CMD: begin
        wr_cmd_valid = !cmd_sent_q;
        wr_cmd_addr  = ADDR_W'(hdr_desc_addr);
        wr_cmd_len   = {1'b0, hdr_len};
        hdr_desc_pop = wr_cmd_valid && wr_cmd_ready;
        rng_valid    = !rng_sent_q;
        rng_end      = hdr_len;
        rng_emit     = 1'b1;
        if ((cmd_sent_q || wr_cmd_ready) && (rng_sent_q || rng_ready)) state_d = S_HDR_DATA;
      end
      S_HDR_DATA, S_SEG_DATA: begin
        wr_valid = ra_valid;
        ra_ready = wr_ready;
        if (rng_done) state_d = (state_q == S_HDR_DATA) ? S_SEG_CMD : S_CPL_CMD;
      end
      S_SEG_CMD: begin
        if (seg_len == '0) begin
          state_d = S_CPL_CMD;            // empty payload: one completion, no payload buffer
        end else begin
          wr_cmd_valid = !cmd_sent_q;
          wr_cmd_addr  = ADDR_W'(pay_desc_addr);
          wr_cmd_len   = {1'b0, seg_len};
          pay_desc_pop = wr_cmd_valid && wr_cmd_ready;
          rng_valid    = !rng_sent_q;
          rng_end      = pos_q + seg_len;
          rng_emit     = 1'b1;
          if ((cmd_sent_q || wr_cmd_ready) && (rng_sent_q || rng_ready)) state_d = S_SEG_DATA;
        end
      end
      S_CPL_CMD: begin
        wr_cmd_valid = 1'b1;
        wr_cmd_addr  = ADDR_W'(cq_addr);
        wr_cmd_len   = 17'(CPL_BYTES);
        if (wr_cmd_ready) state_d = S_CPL_DATA;
      end
      S_CPL_DATA: begin
        wr_valid = 1'b1;
        wr_data  = cpl_ext[cpl_beat_q * DATA_W +: DATA_W];
        if (wr_ready && 32'(cpl_beat_q) == CPL_BEATS - 1) state_d = last_seg ? S_TAIL : S_SEG_CMD;
      end
      S_TAIL: begin
        rng_valid     = !rng_sent_q;
        rng_end       = meta_q.frame_len;
        rng_frame_end = 1'b1;
        if (rng_done) begin
          ev_frame = 1'b1;
          state_d  = S_IDLE;
        end
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q    <= S_IDLE;
      cq_idx_q   <= '0;
      cmd_sent_q <= 1'b0;
      rng_sent_q <= 1'b0;
      cpl_beat_q <= '0;
      pos_q      <= '0;
      first_q    <= 1'b0;
      seg_len_q  <= '0;
    end else begin
      state_q <= state_d;
      // A command and a range issued in the same state may be accepted in different cycles.
      if (state_d != state_q) begin
        cmd_sent_q <= 1'b0;
        rng_sent_q <= 1'b0;
      end else begin
        if (wr_cmd_valid && wr_cmd_ready) cmd_sent_q <= 1'b1;
        if (rng_valid && rng_ready)       rng_sent_q <= 1'b1;
      end
      if (state_q == S_DECIDE) begin
        pos_q   <= hdr_len;
        first_q <= 1'b1;
      end
      if (state_q == S_SEG_CMD && state_d != S_SEG_CMD) begin
        seg_len_q <= seg_len;
      end
      if (state_q == S_CPL_DATA && wr_ready) begin
        if (32'(cpl_beat_q) == CPL_BEATS - 1) begin
          cpl_beat_q <= '0;
          cq_idx_q   <= cq_idx_q + 1'b1;
          pos_q      <= pos_q + seg_len_q;
          first_q    <= 1'b0;
        end else begin
          cpl_beat_q <= cpl_beat_q + 1'b1;
        end
      end
      if (!enable) cq_idx_q <= '0;
    end
  end

  always_ff @(posedge clk) begin
    if (state_q == S_IDLE && meta_valid) meta_q <= meta;
    if (hdr_desc_pop) hdr_id_q <= hdr_desc_id;
    if (pay_desc_pop) pay_id_q <= pay_desc_id;
  end
endmodule
