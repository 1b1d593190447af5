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
// TSO_BAD_*): l4_off even (l3_off even for IPv4: the IP header length is a multiple of 4;
// any for IPv6), l4_off - l3_off the IP header length, hdr_len at most HDR_MAX. A command
// with mss or pay_len 0 emits nothing (it cannot hang the block).
//
// Interfaces:
//   s_cmd_*   one send: header length and offsets, IPv6 or IPv4, mss, payload bytes.
//   s_hdr_*   the send's first bytes, DB = DATA_W/8 per beat from frame offset 0, TLAST on the
//             beat holding byte hdr_len - 1. Bytes at or past hdr_len are ignored; beats are
//             taken until TLAST (beats past HDR_MAX dropped), so an early TLAST leaves the
//             missing bytes zero and a late one costs only cycles.
//   m_*       per segment ceil(hdr_len / DB) beats of its header, TKEEP all ones but on the
//             segment's last header beat (TLAST; contiguous from lane 0), TUSER
//             {first, last, pay_k[15:0]} constant over the segment's beats. AXI-Stream: TVALID
//             held until TREADY, every output stable meanwhile (they come from registers).
//   m_hdr     the whole patched header of the segment on show (byte i at bits [8i +: 8],
//             bytes past hdr_len unspecified), valid from the segment's first beat until that
//             beat is taken (the form tx_gather's header note takes, `hn_hdr`: tx_sched takes
//             it with the first beat). After that its bytes of the beats already taken become
//             the next segment's (patched in place behind the beats going out).
//
// How (docs/synthesis.md, "TSO nearly doubled the LUT count"): the header is kept once, in
// the register `seg_q` that m_hdr shows, and patched in place one beat at a time through one
// patch unit of DB byte lanes: only the bytes of the beat in hand compare their position
// with the field offsets. The fields' old values (IPv4 identification, TCP sequence number,
// flags, checksum seed) and the IPv4 header sum are taken while the header streams in.
//   - Segment 0: its lengths and flags are patched into the beats as they are loaded; after
//     the last beat the beats from the IPv4 checksum's (IPv6: the TCP checksum's) to the TCP
//     checksum's are patched again with the sums (a walk, one beat per cycle).
//   - Segment k + 1: its values are computed once segment k is on show (PREP, SUM2), then a
//     walk patches the beats from the first field's to the TCP checksum's, each once segment
//     k's beat there has been taken (so no beat on show changes).
// Latency and rate (the same cycles as the register-file version this replaced): a segment
// is on show 4 cycles after the last beat of the one before it; segment 0 is on show 5 cycles
// after the header's last beat (IPv6), 5 + ceil(iphl / 4) for IPv4 (iphl = l4_off - l3_off:
// the cycles the old word-pair header sum took). A counter (`gap_q`) holds the show until
// then; the walks end earlier for every command within the rules (checked in simulation):
// segment 0's walk is at most floor((iphl + 6) / DB) + 2 beats (ready by the show for iphl
// >= 6), segment k + 1's at most ceil(hdr_len / DB) beats, each one cycle after the beat
// it patches was taken and at most one per cycle from 2 cycles after segment k went on show
// (ready by 3 cycles after segment k's last beat). Every value the patch unit uses comes from
// a register (field values, the beat's position relative to l3_off and l4_off).
//
// Reset (`rst`, synchronous, active high): state IDLE (ready for a command), no beat on show,
// counters, captured fields and header storage zero.
module tx_tso_hdr
  import nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W  = 64,
  parameter int unsigned HDR_MAX = TX_TSO_MAX_HDR,
  localparam int unsigned DB     = DATA_W / 8,
  localparam int unsigned LW     = $clog2(DB),
  localparam int unsigned NBEATS = (HDR_MAX + DB - 1) / DB,
  localparam int unsigned BW     = $clog2(NBEATS + 1)          // a beat index, 0..NBEATS
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

  localparam int unsigned NW = DB / 2;          // 16-bit words per beat

  // Prepare the next segment to show: the command and load (PREP0, LOAD), segment 0's sums
  // (EXTRACT, SUM2, WALK), then per segment PREP, SUM2, WALK; READY waits for its show time.
  // All eight encodings are named (no default arm).
  typedef enum logic [2:0] {
    S_IDLE, S_PREP0, S_LOAD, S_EXTRACT, S_PREP, S_SUM2, S_WALK, S_READY
  } state_e;

  state_e state_q;

  // Command
  logic [7:0]  hdr_len_q, l3_q, l4_q;
  logic        ipv6_q;
  logic [15:0] mss_q;

  // The header, patched in place: flip-flops (m_hdr shows them all), written one beat at a time.
  logic [NBEATS-1:0][DATA_W-1:0] seg_q;
  logic [BW-1:0] p_q;                     // beat being loaded or patched
  logic [7:0]    b3_q, b4_q;              // frame offset of beat p_q's byte 0, minus l3_off / l4_off (mod 256)
  logic [BW-1:0] hi_q;                    // the walk's last beat
  logic [BW-1:0] f_lo_q, f_hi_q, c0_lo_q; // walk bounds of the send: first field's beat, TCP
                                          // checksum's beat, segment 0's first beat

  // Per send (taken while the header streams in)
  logic [23:0] s0_q;                      // IPv4 header sum without total length, ID, checksum
  logic [15:0] s0f_q;                     // ... folded
  logic [15:0] id_q;                      // IPv4 identification of the segment being prepared
  logic [31:0] seq_q;                     // TCP sequence number of the segment being prepared
  logic [7:0]  flags0_q;                  // TCP flags of the send
  logic [15:0] seed_q;                    // TCP checksum seed of the send
  logic [15:0] rem_q;                     // payload bytes not yet in a segment on show
  logic        first_q;                   // the segment being prepared is the first

  // Per segment being prepared
  logic [15:0] pay_q;                     // payload bytes
  logic        last_q;                    // the last segment
  logic [15:0] l3len_q;                   // IPv4 total length or IPv6 payload length
  logic [15:0] ipcs_q;                    // IPv4 header checksum (complemented)
  logic [15:0] tcpseed_q;                 // TCP checksum field

  // The segment on show
  logic          show_q;                  // its beats are on show (m_tvalid)
  logic [BW-1:0] e_q;                     // its beat on show
  logic [17:0]   user_q;                  // {first, last, pay_k}
  logic [6:0]    gap_q;                   // cycles until the next segment may go on show

  // ---------------------------------------------------------------- helpers
  function automatic logic [15:0] fold24(input logic [23:0] v);
    logic [16:0] t;
    t = {1'b0, v[15:0]} + {9'd0, v[23:16]};
    return t[15:0] + {15'd0, t[16]};
  endfunction

  // The relative offset (to l3_off or l4_off) that byte lane i (or word lane w, counted in
  // bytes) of a beat has when the beat's byte 0 is at relative offset b: b + i (mod 256).
  // Compared as b == c - i, a compare of a register with a constant.
  function automatic logic [7:0] at(input int c, input int i);
    return 8'(c - i);
  endfunction

  function automatic logic [6:0] atw(input int c, input int w);
    // the same for word lane w, in words: at(c, 2 * w) >> 1 (c even)
    return 7'(c / 2 - w);
  endfunction

  function automatic logic [23:0] tree_sum(input logic [NW-1:0][23:0] v);
    // a balanced adder tree (log2(NW) adders deep, not a chain of NW)
    logic [NW-1:0][23:0] t;
    t = v;
    for (int unsigned s = 1; s < NW; s = 2 * s)
      for (int unsigned i = 0; i + s < NW; i = i + 2 * s) t[i] = t[i] + t[i + s];
    return t[0];
  endfunction

  function automatic logic [BW-1:0] beat_of(input logic [8:0] off);
    // the beat holding frame offset off, at most the last beat
    logic [8:0] b;
    b = off >> LW;
    return (b > 9'(NBEATS - 1)) ? BW'(NBEATS - 1) : BW'(b);
  endfunction

  // ---------------------------------------------------------------- per-segment values
  logic [15:0] pay_d;
  logic        last_d;
  logic [15:0] l3len_d;                   // l3len of a segment of pay_d bytes
  logic [23:0] ipcs_sum, tcp_sum;
  logic [7:0]  fmask;                     // TCP flags kept in the segment being prepared
  logic [6:0]  gap0;                      // gap_q after the header's last beat
  always_comb begin
    pay_d   = (rem_q < mss_q) ? rem_q : mss_q;
    last_d  = (rem_q <= mss_q);
    l3len_d = (ipv6_q ? ({8'd0, hdr_len_q} - {8'd0, l3_q} - 16'd40)
                      : ({8'd0, hdr_len_q} - {8'd0, l3_q})) + pay_d;
    ipcs_sum = {8'd0, s0f_q} + {8'd0, l3len_q} + {8'd0, id_q};
    tcp_sum  = {8'd0, seed_q} + {16'd0, hdr_len_q - l4_q} + {8'd0, pay_q};
    fmask = 8'hFF;
    if (!last_q) fmask = fmask & ~8'h09;                // FIN, PSH: last segment only
    if (!first_q) fmask = fmask & ~8'h80;               // CWR: first segment only
    // Segment 0 goes on show 5 cycles after the header's last beat, plus, for IPv4, the
    // ceil(iphl / 4) cycles (at least 1) of the word-pair header sum of the previous version.
    gap0  = 7'd3;
    if (!ipv6_q) begin
      automatic logic [7:0] iphl = l4_q - l3_q;
      automatic logic [6:0] n = (iphl == 8'd0) ? 7'd1 : 7'((9'(iphl) + 9'd3) >> 2);
      gap0 = 7'd3 + n;
    end
  end

  // ---------------------------------------------------------------- the patch unit
  // One beat: the incoming header beat while loading (segment 0: lengths and flags only; the
  // other fields keep the header's values, which are segment 0's or are patched by its walk),
  // else beat p_q of seg_q (every field from the registers of the segment being prepared).
  logic              loading;
  logic [DATA_W-1:0] pin, pout;
  assign loading = (state_q == S_LOAD);

  always_comb begin
    pin = '0;
    for (int unsigned j = 0; j < NBEATS; j++)
      if (p_q == BW'(j)) pin = seg_q[j];
    if (loading) pin = s_hdr_tdata;
  end

  always_comb begin
    pout = pin;
    // IP fields, by byte lane (an IPv6 l3_off may be odd)
    for (int i = 0; i < int'(DB); i++) begin
      if (ipv6_q) begin
        if (b3_q == at(4, i))  pout[8 * i +: 8] = l3len_q[15:8];
        if (b3_q == at(5, i))  pout[8 * i +: 8] = l3len_q[7:0];
      end else begin
        if (b3_q == at(2, i))  pout[8 * i +: 8] = l3len_q[15:8];
        if (b3_q == at(3, i))  pout[8 * i +: 8] = l3len_q[7:0];
        if (!loading) begin
          if (b3_q == at(4, i))  pout[8 * i +: 8] = id_q[15:8];
          if (b3_q == at(5, i))  pout[8 * i +: 8] = id_q[7:0];
          if (b3_q == at(10, i)) pout[8 * i +: 8] = ipcs_q[15:8];
          if (b3_q == at(11, i)) pout[8 * i +: 8] = ipcs_q[7:0];
        end
      end
    end
    // TCP fields, by word lane (l4_off is even, so b4_q is)
    for (int w = 0; w < int'(NW); w++) begin
      automatic logic [6:0] r = b4_q[7:1];
      if (!loading) begin
        if (r == atw(4, w))  pout[16 * w +: 16] = {seq_q[23:16], seq_q[31:24]};
        if (r == atw(6, w))  pout[16 * w +: 16] = {seq_q[7:0], seq_q[15:8]};
      end
      if (r == atw(12, w))
        pout[16 * w + 8 +: 8] = (loading ? pin[16 * w + 8 +: 8] : flags0_q) & fmask;
      if (!loading && r == atw(16, w)) pout[16 * w +: 16] = {tcpseed_q[7:0], tcpseed_q[15:8]};
    end
  end

  // ---------------------------------------------------------------- taken while loading
  // The IPv4 header sum (the words of [l3_off, l4_off) but total length, identification and
  // checksum) and the fields' old values, from the incoming beat.
  logic [NW-1:0][23:0] lw;                // the beat's words in the sum, the others 0
  logic [23:0] lsum, lsum_q;              // their sum (added to s0_q a cycle later)
  logic        got_id, got_seqh, got_seql, got_flags, got_seed;
  logic [15:0] c_id, c_seqh, c_seql, c_seed;
  logic [7:0]  c_flags;
  always_comb begin
    lw = '0;
    {got_id, got_seqh, got_seql, got_flags, got_seed} = '0;
    {c_id, c_seqh, c_seql, c_seed, c_flags} = '0;
    for (int w = 0; w < int'(NW); w++) begin
      automatic logic [15:0] word = {s_hdr_tdata[16 * w +: 8], s_hdr_tdata[16 * w + 8 +: 8]};
      automatic logic [8:0]  pos  = 9'({p_q, {LW{1'b0}}}) + 9'(2 * w);
      automatic logic [6:0]  r3   = b3_q[7:1];
      automatic logic [6:0]  r4   = b4_q[7:1];
      if (pos >= {1'b0, l3_q} && pos < {1'b0, l4_q} && r3 != atw(2, w)
          && r3 != atw(4, w) && r3 != atw(10, w))
        lw[w] = {8'd0, word};
      if (r3 == atw(4, w))  begin got_id    = 1'b1; c_id    = word;       end
      if (r4 == atw(4, w))  begin got_seqh  = 1'b1; c_seqh  = word;       end
      if (r4 == atw(6, w))  begin got_seql  = 1'b1; c_seql  = word;       end
      if (r4 == atw(12, w)) begin got_flags = 1'b1; c_flags = word[7:0];  end
      if (r4 == atw(16, w)) begin got_seed  = 1'b1; c_seed  = word;       end
    end
    lsum = tree_sum(lw);
  end

  // ---------------------------------------------------------------- control
  logic hdr_hs, out_hs, out_last, store, walk_ok, walk_wr, walk_end, show_go;
  logic [BW-1:0] nbeats_m1;                // header beats per segment, minus one
  always_comb begin
    nbeats_m1 = BW'((({8'd0, hdr_len_q} + 16'(DB) - 16'd1) / 16'(DB)) - 16'd1);
    if (hdr_len_q == 8'd0) nbeats_m1 = '0;
  end
  assign s_cmd_ready  = (state_q == S_IDLE) && !show_q;
  assign s_hdr_tready = loading;
  assign hdr_hs       = s_hdr_tvalid && s_hdr_tready;
  assign store        = hdr_hs && 32'(p_q) < NBEATS;
  assign m_tvalid     = show_q;
  assign out_hs       = m_tvalid && m_tready;
  assign out_last     = (e_q == nbeats_m1);
  assign busy         = (state_q != S_IDLE) || show_q;
  // A beat is patched once the segment on show is past it (no beat on show changes).
  assign walk_ok      = !show_q || p_q < e_q;
  assign walk_wr      = (state_q == S_WALK) && walk_ok;
  assign walk_end     = walk_wr && p_q >= hi_q;
  assign show_go      = !show_q && gap_q == '0 && (state_q == S_READY || walk_end);

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q   <= S_IDLE;
      hdr_len_q <= '0;
      l3_q      <= '0;
      l4_q      <= '0;
      ipv6_q    <= 1'b0;
      mss_q     <= '0;
      seg_q     <= '0;
      p_q       <= '0;
      b3_q      <= '0;
      b4_q      <= '0;
      hi_q      <= '0;
      f_lo_q    <= '0;
      f_hi_q    <= '0;
      c0_lo_q   <= '0;
      s0_q      <= '0;
      lsum_q    <= '0;
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
      show_q    <= 1'b0;
      e_q       <= '0;
      user_q    <= '0;
      gap_q     <= '0;
    end else begin
      if (gap_q != '0) gap_q <= gap_q - 7'd1;
      s0_q   <= s0_q + lsum_q;                             // the IPv4 header sum, a cycle behind
      lsum_q <= '0;

      // the segment on show
      if (out_hs) begin
        e_q <= e_q + BW'(1);
        if (out_last) begin
          show_q <= 1'b0;
          gap_q  <= 7'd2;                                 // the next goes on show 4 cycles later
        end
      end
      if (store || walk_wr)
        for (int unsigned j = 0; j < NBEATS; j++)
          if (p_q == BW'(j)) seg_q[j] <= pout;

      unique case (state_q)
        S_IDLE: if (s_cmd_valid && s_cmd_ready) begin
          state_q   <= S_PREP0;
          hdr_len_q <= (s_cmd_hdr_len > 8'(HDR_MAX)) ? 8'(HDR_MAX) : s_cmd_hdr_len;
          l3_q      <= s_cmd_l3_off;
          l4_q      <= s_cmd_l4_off;
          ipv6_q    <= s_cmd_ipv6;
          mss_q     <= s_cmd_mss;
          rem_q     <= s_cmd_pay_len;
          first_q   <= 1'b1;
          seg_q     <= '0;
          s0_q      <= '0;
          id_q      <= '0;
          seq_q     <= '0;
          flags0_q  <= '0;
          seed_q    <= '0;
        end
        S_PREP0: begin                                    // segment 0's lengths, before its beats
          state_q <= S_LOAD;
          pay_q   <= pay_d;
          last_q  <= last_d;
          l3len_q <= l3len_d;
          p_q     <= '0;
          b3_q    <= 8'd0 - l3_q;
          b4_q    <= 8'd0 - l4_q;
          f_lo_q  <= beat_of(9'(l3_q) + 9'd2);
          f_hi_q  <= beat_of(9'(l4_q) + 9'd16);
          c0_lo_q <= ipv6_q ? beat_of(9'(l4_q) + 9'd16) : beat_of(9'(l3_q) + 9'd10);
        end
        S_LOAD: if (hdr_hs) begin
          if (store) begin
            lsum_q <= lsum;
            if (got_id) id_q <= c_id;
            if (got_seqh) seq_q[31:16] <= c_seqh;
            if (got_seql) seq_q[15:0] <= c_seql;
            if (got_flags) flags0_q <= c_flags;
            if (got_seed) seed_q <= c_seed;
            p_q  <= p_q + BW'(1);
            b3_q <= b3_q + 8'(DB);
            b4_q <= b4_q + 8'(DB);
          end
          if (s_hdr_tlast) begin
            state_q <= S_EXTRACT;
            gap_q   <= gap0;
          end
        end
        S_EXTRACT: begin                                  // segment 0's walk
          s0f_q   <= fold24(s0_q + lsum_q);                // with the last beat's words
          state_q <= (mss_q == 16'd0 || rem_q == 16'd0) ? S_IDLE : S_SUM2;
          p_q     <= c0_lo_q;
          hi_q    <= f_hi_q;
          b3_q    <= 8'({c0_lo_q, {LW{1'b0}}}) - l3_q;
          b4_q    <= 8'({c0_lo_q, {LW{1'b0}}}) - l4_q;
        end
        S_PREP: begin                                     // segment k + 1's lengths and walk
          state_q <= S_SUM2;
          pay_q   <= pay_d;
          last_q  <= last_d;
          l3len_q <= l3len_d;
          p_q     <= f_lo_q;
          hi_q    <= f_hi_q;
          b3_q    <= 8'({f_lo_q, {LW{1'b0}}}) - l3_q;
          b4_q    <= 8'({f_lo_q, {LW{1'b0}}}) - l4_q;
        end
        S_SUM2: begin
          state_q   <= S_WALK;
          ipcs_q    <= ~fold24(ipcs_sum);
          tcpseed_q <= fold24(tcp_sum);
        end
        S_WALK: if (walk_wr) begin
          if (walk_end) begin
            state_q <= S_READY;
          end else begin
            p_q  <= p_q + BW'(1);
            b3_q <= b3_q + 8'(DB);
            b4_q <= b4_q + 8'(DB);
          end
        end
        S_READY: ;
      endcase

      // the prepared segment goes on show; the next one's values start from it
      if (show_go) begin
        show_q  <= 1'b1;
        e_q     <= '0;
        user_q  <= {first_q, last_q, pay_q};
        rem_q   <= rem_q - pay_q;
        seq_q   <= seq_q + {16'd0, mss_q};
        id_q    <= id_q + 16'd1;
        first_q <= 1'b0;
        state_q <= last_q ? S_IDLE : S_PREP;
      end
    end
  end

  // ---------------------------------------------------------------- output beat
  logic [7:0] tail;                        // bytes of the last header beat
  always_comb begin
    m_tdata = '0;
    for (int unsigned j = 0; j < NBEATS; j++)
      if (e_q == BW'(j)) m_tdata = seg_q[j];
    tail = 8'(hdr_len_q - 8'(int'(nbeats_m1) * DB));
    m_tlast = out_last;
    m_tkeep = '1;
    if (out_last)
      for (int unsigned i = 0; i < DB; i++) m_tkeep[i] = (8'(i) < tail);
    m_tuser = user_q;
    m_hdr = (8*HDR_MAX)'(seg_q);
  end

`ifndef SYNTHESIS
  // Simulation checks start at the first reset. For a command within the rules the walk is
  // done by the show time (header comment): a walk still running then delays a segment (the
  // cycle counts would differ from the documented ones).
  /* verilator lint_off PROCASSINIT */
  bit sim_rst_seen = 1'b0;
  always_ff @(posedge clk) if (rst) sim_rst_seen <= 1'b1;
  /* verilator lint_on PROCASSINIT */
  always_ff @(posedge clk) begin
    if (!rst && sim_rst_seen && state_q == S_WALK && !show_q && gap_q == '0 && !walk_end)
      $error("tx_tso_hdr: a segment's patch walk ran past its show time");
  end
`endif
endmodule
