// TSO header patcher (docs/tx.md, "TCP segmentation offload"): takes one send's header
// once and emits, for each of its ceil(pay_len / mss) TCP segments, that segment's header,
// patched as the page's table says:
//   IPv4: total length = hdr_len - l3_off + pay_k, identification + k, header checksum
//         recomputed (the ones'-complement sum of the header without those three fields is
//         taken once per send, the three are added per segment);
//   IPv6: payload length = hdr_len - l3_off - 40 + pay_k;
//   TCP:  sequence number + k * mss, FIN and PSH kept on the last segment only, CWR on the
//         first only, and the checksum field turned from the send's seed (the pseudo-header
//         sum without the length, as the driver writes it) into this segment's full
//         pseudo-header sum, fold(seed + hdr_len - l4_off + pay_k): the CHECKSUM_PARTIAL seed
//         the TX checksum path (tx_csum, tx_egress) completes over the header and the
//         segment's payload, as for any frame.
// The command is one send, checked upstream by the descriptor rules (tx_sched; statuses
// TSO_BAD_*): l3_off and l4_off even, l4_off - l3_off the IP header length, hdr_len at most
// HDR_MAX. A command with mss or pay_len 0 emits nothing (it cannot hang the block).
//
// Interfaces:
//   s_cmd_*   one send: header length and offsets, IPv6 or IPv4, mss, payload bytes.
//   s_hdr_*   the send's first bytes, DB = DATA_W/8 per beat from frame offset 0, TLAST on the
//             beat holding byte hdr_len - 1. Bytes at or past hdr_len are ignored; beats are
//             taken until TLAST (bytes past HDR_MAX dropped), so an early TLAST leaves the
//             missing bytes zero and a late one costs only cycles.
//   m_*       per segment ceil(hdr_len / DB) beats of its header, TKEEP all ones but on the
//             segment's last header beat (TLAST; contiguous from lane 0), TUSER
//             {first, last, pay_k[15:0]} constant over the segment's beats. AXI-Stream: TVALID
//             held until TREADY, every output stable meanwhile (they come from registers).
//   m_hdr     the whole patched header of the segment on show (byte i at bits [8i +: 8],
//             bytes past hdr_len unspecified), stable from its first beat to its last: the
//             form tx_gather's header note takes (`hn_hdr`), so the TX path can send every
//             segment as a frame with an inline header followed by its payload reads.
//
// Latency and rate: after the header's last beat, 1 cycle per 4 bytes of IPv4 header (the
// header sum; 0 for IPv6) plus 1, then per segment 3 cycles of patching (PREP, SUM2, PATCH)
// and ceil(hdr_len / DB) output beats, at most one beat per cycle. Every value in the
// patching cycles comes from a register (offsets, sums, counters): per-byte compares against
// registered offsets, two-stage folds.
//
// Reset (`rst`, synchronous, active high): state IDLE (ready for a command), no beat
// valid, counters and header storage zero.
module tx_tso_hdr
  import nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W  = 64,
  parameter int unsigned HDR_MAX = TX_TSO_MAX_HDR,
  localparam int unsigned DB     = DATA_W / 8,
  localparam int unsigned NBEATS = (HDR_MAX + DB - 1) / DB,
  localparam int unsigned BW     = (NBEATS > 1) ? $clog2(NBEATS) : 1
) (
  input  logic              clk,
  input  logic              rst,

  input  logic              s_cmd_valid,
  output logic              s_cmd_ready,
  input  logic [7:0]        s_cmd_hdr_len,
  input  logic [7:0]        s_cmd_l3_off,
  input  logic [7:0]        s_cmd_l4_off,
  input  logic              s_cmd_ipv6,
  input  logic [15:0]       s_cmd_mss,
  input  logic [15:0]       s_cmd_pay_len,

  input  logic [DATA_W-1:0] s_hdr_tdata,
  input  logic              s_hdr_tlast,
  input  logic              s_hdr_tvalid,
  output logic              s_hdr_tready,

  output logic [DATA_W-1:0] m_tdata,
  output logic [DB-1:0]     m_tkeep,
  output logic              m_tlast,
  output logic [17:0]       m_tuser,
  output logic              m_tvalid,
  input  logic              m_tready,
  output logic [8*HDR_MAX-1:0] m_hdr,

  output logic              busy
);
  initial begin
    if (DATA_W < 64 || DATA_W > 1024 || (DATA_W & (DATA_W - 1)) != 0)
      $fatal(1, "tx_tso_hdr: DATA_W=%0d must be a power of two in 64..1024", DATA_W);
    if (HDR_MAX < 54 || HDR_MAX > 255 || HDR_MAX % 4 != 0)
      $fatal(1, "tx_tso_hdr: HDR_MAX=%0d must be a multiple of 4 in 54..255", HDR_MAX);
  end

  localparam int unsigned HB = NBEATS * DB;      // header storage, whole beats

  typedef enum logic [2:0] {
    S_IDLE, S_LOAD, S_SUM, S_EXTRACT, S_PREP, S_SUM2, S_PATCH, S_EMIT
  } state_e;

  state_e state_q, state_d;

  // Command
  logic [7:0]  hdr_len_q, l3_q, l4_q;
  logic        ipv6_q;
  logic [15:0] mss_q;

  // Header storage: the send's header as loaded, and segment k's patched copy. Flip-flops,
  // declared packed so that synthesis sees registers, not a memory: every byte is written
  // under its own condition (load beat, patch offset), so as an unpacked array Yosys made it
  // a memory of 2,176 write ports that its memory passes take tens of minutes over.
  logic [HB-1:0][7:0] hdr_q;
  logic [HB-1:0][7:0] seg_q;
  logic [BW-1:0] beat_q;                  // load or emit beat

  // Per send
  logic [7:0]  woff_q;                    // IPv4 header sum: byte offset from l3 of the next word pair
  logic [23:0] s0_q;                      // IPv4 header sum without total length, ID, checksum
  logic [15:0] s0f_q;                     // ... folded
  logic [15:0] id_q;                      // IPv4 identification of segment k
  logic [31:0] seq_q;                     // TCP sequence number of segment k
  logic [7:0]  flags0_q;                  // TCP flags of the send
  logic [15:0] seed_q;                    // TCP checksum seed of the send
  logic [15:0] rem_q;                     // payload bytes not yet in a segment
  logic        first_q;                   // segment k is the first

  // Per segment
  logic [15:0] pay_q;                     // payload bytes of segment k
  logic        last_q;                    // segment k is the last
  logic [15:0] l3len_q;                   // IPv4 total length or IPv6 payload length
  logic [15:0] ipcs_q;                    // IPv4 header checksum (complemented)
  logic [15:0] tcpseed_q;                 // TCP checksum field of segment k
  logic [7:0]  flags_q;                   // TCP flags of segment k

  // ---------------------------------------------------------------- helpers
  function automatic logic [15:0] fold24(input logic [23:0] v);
    logic [16:0] t;
    t = {1'b0, v[15:0]} + {9'd0, v[23:16]};
    return t[15:0] + {15'd0, t[16]};
  endfunction

  function automatic logic [7:0] hbyte(input logic [7:0] off);
    // hdr_q[off], 0 past the storage
    logic [7:0] b;
    b = 8'd0;
    for (int unsigned i = 0; i < HB; i++)
      if (off == 8'(i)) b = hdr_q[i];
    return b;
  endfunction

  // ---------------------------------------------------------------- IPv4 header sum (S_SUM)
  // One word pair per cycle at l3 + woff: the total length (l3+2), identification (l3+4) and
  // checksum (l3+10) words count as zero; they are added per segment.
  logic [7:0]  sum_off;
  logic [15:0] sum_w0, sum_w1;
  logic [7:0]  iphl;
  always_comb begin
    sum_off = l3_q + woff_q;
    sum_w0  = {hbyte(sum_off), hbyte(sum_off + 8'd1)};
    sum_w1  = {hbyte(sum_off + 8'd2), hbyte(sum_off + 8'd3)};
    if (woff_q == 8'd0) sum_w1 = 16'd0;                 // total length (l3 + 2)
    if (woff_q == 8'd4) sum_w0 = 16'd0;                 // identification (l3 + 4)
    if (woff_q == 8'd8) sum_w1 = 16'd0;                 // header checksum (l3 + 10)
    iphl = l4_q - l3_q;
  end

  // ---------------------------------------------------------------- per-segment values
  logic [15:0] pay_d;
  logic [15:0] l3len_base;                 // bytes of the header after l3 (IPv6: after the fixed 40)
  logic [23:0] ipcs_sum, tcp_sum;
  logic [7:0]  flags_d;
  always_comb begin
    pay_d = (rem_q < mss_q) ? rem_q : mss_q;
    l3len_base = ipv6_q ? ({8'd0, hdr_len_q} - {8'd0, l3_q} - 16'd40)
                        : ({8'd0, hdr_len_q} - {8'd0, l3_q});
    ipcs_sum = {8'd0, s0f_q} + {8'd0, l3len_q} + {8'd0, id_q};
    tcp_sum  = {8'd0, seed_q} + {16'd0, hdr_len_q - l4_q} + {8'd0, pay_q};
    flags_d  = flags0_q;
    if (!last_q) flags_d = flags_d & ~8'h09;            // FIN, PSH: last segment only
    if (!first_q) flags_d = flags_d & ~8'h80;           // CWR: first segment only
  end

  // ---------------------------------------------------------------- state machine
  logic hdr_hs, out_hs, last_beat;
  logic [BW-1:0] nbeats_m1;                // header beats per segment, minus one
  always_comb begin
    nbeats_m1 = BW'((({8'd0, hdr_len_q} + 16'(DB) - 16'd1) / 16'(DB)) - 16'd1);
    if (hdr_len_q == 8'd0) nbeats_m1 = '0;
  end
  assign s_cmd_ready  = (state_q == S_IDLE);
  assign s_hdr_tready = (state_q == S_LOAD);
  assign hdr_hs       = s_hdr_tvalid && s_hdr_tready;
  assign m_tvalid     = (state_q == S_EMIT);
  assign out_hs       = m_tvalid && m_tready;
  assign last_beat    = (beat_q == nbeats_m1);
  assign busy         = (state_q != S_IDLE);

  always_comb begin
    state_d = state_q;
    unique case (state_q)
      S_IDLE:    if (s_cmd_valid) state_d = S_LOAD;
      S_LOAD:    if (hdr_hs && s_hdr_tlast) state_d = ipv6_q ? S_EXTRACT : S_SUM;
      S_SUM:     if (woff_q + 8'd4 >= iphl) state_d = S_EXTRACT;
      S_EXTRACT: state_d = (mss_q == 16'd0 || rem_q == 16'd0) ? S_IDLE : S_PREP;
      S_PREP:    state_d = S_SUM2;
      S_SUM2:    state_d = S_PATCH;
      S_PATCH:   state_d = S_EMIT;
      S_EMIT:    if (out_hs && last_beat) state_d = last_q ? S_IDLE : S_PREP;
      default:   state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q   <= S_IDLE;
      hdr_len_q <= '0;
      l3_q      <= '0;
      l4_q      <= '0;
      ipv6_q    <= 1'b0;
      mss_q     <= '0;
      beat_q    <= '0;
      woff_q    <= '0;
      s0_q      <= '0;
      s0f_q     <= '0;
      id_q      <= '0;
      seq_q     <= '0;
      flags0_q  <= '0;
      seed_q    <= '0;
      rem_q     <= '0;
      first_q   <= 1'b0;
      pay_q     <= '0;
      last_q    <= 1'b0;
      l3len_q   <= '0;
      ipcs_q    <= '0;
      tcpseed_q <= '0;
      flags_q   <= '0;
      for (int unsigned i = 0; i < HB; i++) begin
        hdr_q[i] <= '0;
        seg_q[i] <= '0;
      end
    end else begin
      state_q <= state_d;
      unique case (state_q)
        S_IDLE: if (s_cmd_valid) begin
          hdr_len_q <= (s_cmd_hdr_len > 8'(HDR_MAX)) ? 8'(HDR_MAX) : s_cmd_hdr_len;
          l3_q      <= s_cmd_l3_off;
          l4_q      <= s_cmd_l4_off;
          ipv6_q    <= s_cmd_ipv6;
          mss_q     <= s_cmd_mss;
          rem_q     <= s_cmd_pay_len;
          beat_q    <= '0;
          woff_q    <= '0;
          s0_q      <= '0;
          for (int unsigned i = 0; i < HB; i++) hdr_q[i] <= '0;
        end
        S_LOAD: if (hdr_hs) begin
          for (int unsigned j = 0; j < NBEATS; j++)
            if (beat_q == BW'(j))
              for (int unsigned i = 0; i < DB; i++)
                if (j * DB + i < HDR_MAX) hdr_q[j * DB + i] <= s_hdr_tdata[8 * i +: 8];
          if (beat_q != BW'(NBEATS - 1)) beat_q <= beat_q + BW'(1);
        end
        S_SUM: begin
          s0_q   <= s0_q + {8'd0, sum_w0} + {8'd0, sum_w1};
          woff_q <= woff_q + 8'd4;
        end
        S_EXTRACT: begin
          s0f_q    <= fold24(s0_q);
          id_q     <= {hbyte(l3_q + 8'd4), hbyte(l3_q + 8'd5)};
          seq_q    <= {hbyte(l4_q + 8'd4), hbyte(l4_q + 8'd5), hbyte(l4_q + 8'd6), hbyte(l4_q + 8'd7)};
          flags0_q <= hbyte(l4_q + 8'd13);
          seed_q   <= {hbyte(l4_q + 8'd16), hbyte(l4_q + 8'd17)};
          first_q  <= 1'b1;
        end
        S_PREP: begin
          pay_q   <= pay_d;
          last_q  <= (rem_q <= mss_q);
          l3len_q <= l3len_base + pay_d;
        end
        S_SUM2: begin
          ipcs_q    <= ~fold24(ipcs_sum);
          tcpseed_q <= fold24(tcp_sum);
          flags_q   <= flags_d;
        end
        S_PATCH: begin
          beat_q <= '0;
          for (int unsigned i = 0; i < HB; i++) begin
            seg_q[i] <= hdr_q[i];
            if (ipv6_q) begin
              if (8'(i) == l3_q + 8'd4) seg_q[i] <= l3len_q[15:8];
              if (8'(i) == l3_q + 8'd5) seg_q[i] <= l3len_q[7:0];
            end else begin
              if (8'(i) == l3_q + 8'd2)  seg_q[i] <= l3len_q[15:8];
              if (8'(i) == l3_q + 8'd3)  seg_q[i] <= l3len_q[7:0];
              if (8'(i) == l3_q + 8'd4)  seg_q[i] <= id_q[15:8];
              if (8'(i) == l3_q + 8'd5)  seg_q[i] <= id_q[7:0];
              if (8'(i) == l3_q + 8'd10) seg_q[i] <= ipcs_q[15:8];
              if (8'(i) == l3_q + 8'd11) seg_q[i] <= ipcs_q[7:0];
            end
            if (8'(i) == l4_q + 8'd4)  seg_q[i] <= seq_q[31:24];
            if (8'(i) == l4_q + 8'd5)  seg_q[i] <= seq_q[23:16];
            if (8'(i) == l4_q + 8'd6)  seg_q[i] <= seq_q[15:8];
            if (8'(i) == l4_q + 8'd7)  seg_q[i] <= seq_q[7:0];
            if (8'(i) == l4_q + 8'd13) seg_q[i] <= flags_q;
            if (8'(i) == l4_q + 8'd16) seg_q[i] <= tcpseed_q[15:8];
            if (8'(i) == l4_q + 8'd17) seg_q[i] <= tcpseed_q[7:0];
          end
        end
        S_EMIT: if (out_hs) begin
          beat_q <= beat_q + BW'(1);
          if (last_beat) begin
            rem_q   <= rem_q - pay_q;
            seq_q   <= seq_q + {16'd0, mss_q};
            id_q    <= id_q + 16'd1;
            first_q <= 1'b0;
          end
        end
        default: ;
      endcase
    end
  end

  // ---------------------------------------------------------------- output beat
  logic [7:0] tail;                        // bytes of the last header beat
  always_comb begin
    m_tdata = '0;
    for (int unsigned j = 0; j < NBEATS; j++)
      if (beat_q == BW'(j))
        for (int unsigned i = 0; i < DB; i++) m_tdata[8 * i +: 8] = seg_q[j * DB + i];
    tail = 8'(hdr_len_q - 8'(int'(nbeats_m1) * DB));
    m_tlast = last_beat;
    m_tkeep = '1;
    if (last_beat)
      for (int unsigned i = 0; i < DB; i++) m_tkeep[i] = (8'(i) < tail);
    m_tuser = {first_q, last_q, pay_q};
    for (int unsigned i = 0; i < HDR_MAX; i++) m_hdr[8 * i +: 8] = seg_q[i];
  end
endmodule
