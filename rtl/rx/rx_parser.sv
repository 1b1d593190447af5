// RX header parser: Ethernet (+ up to two VLAN tags), IPv4 (any IHL), IPv6 with up to two
// extension headers, TCP and UDP.
//
// It watches the same beats the ingress stores, keeps the first PARSE_BYTES bytes of each
// frame in a capture window, and when the ingress keeps a frame it runs four pipeline stages,
// one frame per cycle:
//   1. L2 and L3: VLAN tags and EtherType; the IPv4 or IPv6 fixed header (lengths, addresses,
//      first next-header) decoded at each of the three possible L3 offsets at once, the one
//      the tags give kept; the two bytes at the end of the IPv6 fixed header (where a first
//      extension header starts) picked out
//   2. IPv6 extension header 1 (hop-by-hop, routing, destination options, fragment), and the
//      two bytes where a second one would start read from the window
//   3. IPv6 extension header 2, and the L4 header's ports and TCP data offset read from the
//      window at the L4 offset
//   4. L4: TCP or UDP checks, ports, payload offset
// producing an rx_meta_t (where the headers end, where the IP datagram ends, the protocol
// types, whether a header lies) and the frame's flow tuple for RSS and flow steering.
// The rules are docs/rx-rules.md §2. Bytes of the window past the frame's end read as zero.
//
// Window reads after stage 1 are 4-byte aligned: every offset they use is the L3 offset
// (14 + 4 * tags) plus a multiple of 4 (IHL words, 40, extension headers of 8 * n bytes), so
// it is 2 mod 4, and it is read only from W0 = 34 (the L4 header of the shortest IPv4
// header) to PARSE_BYTES - 8 (the last offset a header is read at): NS slots, a NS:1 mux per
// byte read instead of a shifter over the window.
//
// Width scaling (NARROW, MAC up to 128 bits): kept frames (>= 60 bytes) then have their last
// beats at least 4 cycles apart, and between a frame's last beat and its stage 3 at most one
// beat (the next frame's first, bytes below DATA_W/8 <= 16) is written to the capture window.
// So stages 2 and 3 read the capture window itself, bytes W0 and up, and stage 4 reads the
// addresses from stage 2's registers: no copies of the window or the addresses travel down
// the pipeline. Wider, a frame may end every cycle and each stage carries its own copy.
// Either way a byte at or past the frame's length reads as zero (the capture window is not
// cleared between frames and the beats are stored unmasked: every read masks by the length).
//
// Latency: meta_valid rises 4 cycles after the frame's last beat. There is no
// backpressure: the ingress only keeps a frame when the metadata FIFO is sure to have room.
// meta and tuple hold their last values while meta_valid is low.
// Reset: synchronous, active high; clears the pipeline valid bits and the beat index (data
// registers are not reset: each is loaded before its valid bit reads it).
module rx_parser
  import nic_pkg::*, nic_dma_pkg::*;
#(
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned PARSE_BYTES = 128
) (
  input  logic                clk,
  input  logic                rst,
  // the RX beats (observed, never stalled)
  input  logic                beat_valid,
  input  logic [DATA_W-1:0]   beat_data,
  input  logic [DATA_W/8-1:0] beat_keep,
  input  logic                beat_last,
  // from the ingress, with the last beat
  input  logic                frame_keep,
  input  logic [15:0]         frame_len,
  // the frame's addresses, after stage 1: 3 cycles before its meta_valid, held until the
  // next frame's (rx_classify hashes them while the later stages run)
  output logic                addr_valid,
  output logic                addr_v6,
  output logic [127:0]        addr_src,
  output logic [127:0]        addr_dst,
  // result
  output logic                meta_valid,
  output rx_meta_t            meta,
  output rx_tuple_t           tuple
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned NB = PARSE_BYTES / DB;    // window beats
  localparam int unsigned WB = PARSE_BYTES * 8;     // window bits
  localparam int unsigned IW = $clog2(NB + 1);      // beat index (saturates at NB)
  localparam logic [15:0] TPID_8021Q  = 16'h8100;
  localparam logic [15:0] TPID_8021AD = 16'h88A8;
  localparam logic [15:0] ET_IPV4     = 16'h0800;
  localparam logic [15:0] ET_IPV6     = 16'h86DD;
  localparam logic [7:0]  PROTO_TCP   = 8'd6;
  localparam logic [7:0]  PROTO_UDP   = 8'd17;
  localparam logic [7:0]  NH_HOPOPT   = 8'd0;
  localparam logic [7:0]  NH_ROUTING  = 8'd43;
  localparam logic [7:0]  NH_FRAG     = 8'd44;
  localparam logic [7:0]  NH_DSTOPTS  = 8'd60;

  // The window the later stages read: bytes W0 .. PARSE_BYTES-1, in NS 4-byte slots at
  // W0 + 4p; a slot read takes bytes 0..3 and 12 after its start (padding past the window
  // reads zero).
  localparam int unsigned W0  = 34;
  localparam int unsigned NWB = WB - 8 * W0;
  localparam int unsigned NS  = (PARSE_BYTES - 8 - W0) / 4 + 1;
  localparam int unsigned SW  = $clog2(NS);
  localparam int unsigned KEPT_GAP = (60 + DB - 1) / DB;   // min cycles between kept last beats
  localparam bit          NARROW   = (KEPT_GAP >= 3) && (DB <= W0);

  initial begin
    // 128 bytes hold every field of the fixed headers the parser reads: QinQ (22) + IPv4 with
    // options (60) + the first 20 bytes of TCP = 102.
    if (PARSE_BYTES < 128 || PARSE_BYTES > 255 || PARSE_BYTES % DB != 0) begin
      $fatal(1, "rx_parser: PARSE_BYTES must be 128..255 and a multiple of DATA_W/8");
    end
  end

  function automatic logic [15:0] be16_at(input logic [WB-1:0] w, input int unsigned i);
    return {w[i*8 +: 8], w[(i+1)*8 +: 8]};
  endfunction

  function automatic logic is_tpid(input logic [15:0] et);
    return (et == TPID_8021Q) || (et == TPID_8021AD);
  endfunction

  function automatic logic is_ext(input logic [7:0] nh);
    return (nh == NH_HOPOPT) || (nh == NH_ROUTING) || (nh == NH_FRAG) || (nh == NH_DSTOPTS);
  endfunction

  // ------------------------------------------------------------------ capture window
  // Data registers throughout load only with their stage's valid (clock enables), and each
  // stage's logic is a function called in that enabled branch: a cycle without a frame in a
  // stage does no work there (the simulator skips it; in silicon these are enable flops).
  logic [WB-1:0] cap_q;
  logic [IW-1:0] beat_idx_q;

  // The window as stage 1 sees it: the current beat in its slice, the capture register
  // elsewhere, and every byte at or past the frame's length zero. The input contract
  // (rx_ingress: tkeep all ones but on the last beat, contiguous from lane 0 there; frame_len
  // counts the kept bytes) makes "before frame_len" the same as "received and kept", so the
  // beats are stored as they come and tkeep is not needed here.
  // The byte mask is a thermometer from a shift (`in_frame[b]` = b < frame_len), a mux tree
  // in LUTs, where a compare per byte would be a carry chain each.
  function automatic logic [WB-1:0] with_beat(input logic [WB-1:0] win);
    logic [WB-1:0]          w;
    logic [PARSE_BYTES-1:0] in_frame;
    in_frame = (frame_len[15:8] != '0) ? '1 : ~({PARSE_BYTES{1'b1}} << frame_len[7:0]);
    for (int k = 0; k < NB; k++) begin
      w[k * DATA_W +: DATA_W] = (beat_idx_q == IW'(k)) ? beat_data : win[k * DATA_W +: DATA_W];
    end
    for (int b = 0; b < PARSE_BYTES; b++) begin
      if (!in_frame[b]) w[b * 8 +: 8] = 8'd0;
    end
    return w;
  endfunction

  always_ff @(posedge clk) begin
    if (rst) begin
      beat_idx_q <= '0;
    end else if (beat_valid) begin
      if (beat_last) beat_idx_q <= '0;
      else if (32'(beat_idx_q) < NB) beat_idx_q <= beat_idx_q + 1'b1;
    end
  end

  // Only the beat's own slice is written, as it comes; bytes past a frame's end (its last
  // beat's unkept lanes, slices it does not reach) keep older data, which every reader
  // masks by the frame's length.
  always_ff @(posedge clk) begin
    if (beat_valid && 32'(beat_idx_q) < NB) begin
      cap_q[32'(beat_idx_q) * DATA_W +: DATA_W] <= beat_data;
    end
  end

  /* verilator lint_off UNUSEDSIGNAL */
  // A slot read: bytes 0..3 and 12 at W0 + 4 * p ({b12, b3, b2, b1, b0}), zero where off is
  // below W0, bytes at or past the frame's length `len` zero.
  function automatic logic [39:0] slot_read(input logic [NWB-1:0] win, input logic [15:0] off,
                                            input logic [15:0] len);
    logic [NWB+8*16-1:0] wp;
    logic [NS-1:0][39:0] cand;
    logic [7:0]          p;
    logic [39:0]         r;
    logic [8:0]          o;
    wp = {128'd0, win};
    for (int s = 0; s < NS; s++) begin
      cand[s] = {wp[(4*s+12)*8 +: 8], wp[(4*s)*8 +: 32]};
    end
    p = (off[7:0] - 8'(W0)) >> 2;
    r = (off[7:0] < 8'(W0) || 32'(p) >= NS) ? 40'd0 : cand[p[SW-1:0]];
    for (int i = 0; i < 5; i++) begin
      o = {1'b0, off[7:0]} + 9'((i == 4) ? 12 : i);
      if (len <= {7'd0, o}) r[i*8 +: 8] = 8'd0;
    end
    return r;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // ------------------------------------------------------------------ stage 1: L2 and L3
  typedef struct packed {
    logic [1:0] tags;
    logic       v4;
    logic       v6;
  } l2_t;

  function automatic l2_t l2_decode(input logic [WB-1:0] win);
    l2_t         o;
    logic [15:0] et0, et1, et2, ethertype;
    logic        too_many_tags;
    et0 = be16_at(win, 12);
    et1 = be16_at(win, 16);
    et2 = be16_at(win, 20);
    too_many_tags = 1'b0;
    if (!is_tpid(et0)) begin
      o.tags = 2'd0; ethertype = et0;
    end else if (!is_tpid(et1)) begin
      o.tags = 2'd1; ethertype = et1;
    end else begin
      o.tags = 2'd2; ethertype = et2;
      too_many_tags = is_tpid(et2);
    end
    o.v4 = !too_many_tags && (ethertype == ET_IPV4);
    o.v6 = !too_many_tags && (ethertype == ET_IPV6);
    return o;
  endfunction

  // State carried through the extension-header stages.
  typedef struct packed {
    logic [15:0] len;
    logic [1:0]  tags;
    logic        qinq;
    l3_type_e    l3;
    logic        err;
    logic        frag;
    logic        v4_opts;
    logic        v6_ext;
    logic [7:0]  nh;         // protocol / next header at `off`
    logic [15:0] off;        // where the next header starts
    logic [15:0] ip_end;
    logic        stop;       // extension-header walk ended (window or count)
    logic [127:0] src;
    logic [127:0] dst;
  } l3_state_t;

  logic           s2_valid_q;
  logic [NWB-1:0] s2_win_q;
  logic [15:0]    s2_ext_q;       // {byte off + 1, byte off}: the first extension header
  l3_state_t      s2_q;

  function automatic logic [7:0] l3b(input logic [319:0] w, input int unsigned i);
    return w[i*8 +: 8];
  endfunction

  /* verilator lint_off UNUSEDSIGNAL */    // the L3 header is 40 bytes of the window
  function automatic l3_state_t l3_decode(input logic [WB-1:0] win, input logic [15:0] len,
                                          input logic [1:0] tags, input logic qinq,
                                          input logic v4, input logic v6);
    l3_state_t   o;
    logic [7:0]   l3_off;
    logic [319:0] l3w;            // the 40 bytes at l3_off
    logic [3:0]   ip_ver, ihl;
    logic [15:0]  v4_tot, v6_plen;
    logic [16:0]  v4_end, v6_end;
    logic         v4_mf;
    logic [12:0]  v4_frag_off;
    l3_off = 8'd14 + {4'd0, tags, 2'd0};
    case (tags)
      2'd0:    l3w = win[14*8 +: 320];
      2'd1:    l3w = win[18*8 +: 320];
      default: l3w = win[22*8 +: 320];
    endcase
    ip_ver      = l3w[7:4];
    ihl         = l3w[3:0];
    v4_tot      = {l3b(l3w, 2), l3b(l3w, 3)};
    v4_mf       = l3w[6*8 + 5];
    v4_frag_off = {l3w[6*8 +: 5], l3b(l3w, 7)};
    v6_plen     = {l3b(l3w, 4), l3b(l3w, 5)};
    v4_end      = {9'd0, l3_off} + {1'b0, v4_tot};
    v6_end      = {9'd0, l3_off} + 17'd40 + {1'b0, v6_plen};

    o         = '0;
    o.len     = len;
    o.tags    = tags;
    o.qinq    = qinq;
    o.l3      = L3_NONE;
    o.ip_end  = len;
    o.stop    = 1'b1;
    if (v4) begin
      o.l3      = L3_IPV4;
      o.nh      = l3b(l3w, 9);
      o.frag    = v4_mf || (v4_frag_off != '0);
      o.off     = {8'd0, l3_off} + {10'd0, ihl, 2'd0};
      o.ip_end  = v4_end[15:0];
      o.v4_opts = (ihl > 4'd5);
      o.err     = (ip_ver != 4'd4) || (ihl < 4'd5) || (v4_tot < {10'd0, ihl, 2'd0}) ||
                  (v4_end > {1'b0, len});
      o.src     = {96'd0, l3w[12*8 +: 32]};
      o.dst     = {96'd0, l3w[16*8 +: 32]};
    end else if (v6) begin
      o.l3      = L3_IPV6;
      o.nh      = l3b(l3w, 6);
      o.off     = {8'd0, l3_off} + 16'd40;
      o.ip_end  = v6_end[15:0];
      o.err     = (ip_ver != 4'd6) || (v6_end > {1'b0, len});
      o.stop    = 1'b0;
      o.src     = l3w[8*8 +: 128];
      o.dst     = l3w[24*8 +: 128];
    end
    // Byte order: the window holds byte 0 in bits [7:0]; addresses are wanted with their
    // first byte most significant.
    o.src = {<<8{o.src}};
    o.dst = {<<8{o.dst}};
    if (v4) begin
      o.src = o.src >> 96;
      o.dst = o.dst >> 96;
    end
    return o;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // L2 and L3 in one stage: the L3 decode runs at each of the three offsets the tags may give,
  // beside the L2 decode, which then picks one (each copy reads fixed window bytes).
  function automatic l3_state_t l23_decode(input logic [WB-1:0] win, input logic [15:0] len);
    l2_t       l2;
    l3_state_t at [3];
    l2 = l2_decode(win);
    for (int k = 0; k < 3; k++) begin
      at[k] = l3_decode(win, len, 2'(k), k == 2, l2.v4, l2.v6);
    end
    return at[l2.tags];
  endfunction

  // The two bytes after the IPv6 fixed header (at 54 + 4 * tags), in ext_step's order.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic [15:0] ext1_bytes(input logic [WB-1:0] win, input logic [1:0] tags);
    case (tags)
      2'd0:    return {win[55*8 +: 8], win[54*8 +: 8]};
      2'd1:    return {win[59*8 +: 8], win[58*8 +: 8]};
      default: return {win[63*8 +: 8], win[62*8 +: 8]};
    endcase
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= beat_valid && beat_last && frame_keep;
  end

  assign addr_valid = s2_valid_q;
  assign addr_v6    = s2_q.l3 == L3_IPV6;
  assign addr_src   = s2_q.src;
  assign addr_dst   = s2_q.dst;

  // Loaded for kept frames only: a dropped frame (runt, bad FCS) right behind a kept one must
  // not overwrite the addresses rx_classify still hashes (kept frames are >= 60 bytes, so
  // their last beats are at least 4 cycles apart up to 128 bits).
  always_ff @(posedge clk) begin
    if (beat_valid && beat_last && frame_keep) begin
      automatic logic [WB-1:0] win = with_beat(cap_q);
      s2_win_q  <= win[WB-1:8*W0];
      s2_ext_q  <= ext1_bytes(win, l2_decode(win).tags);
      s2_q      <= l23_decode(win, frame_len);
    end
  end

  // ------------------------------------------------------------------ stages 2, 3: IPv6 extension headers
  // One extension header per stage: hop-by-hop (0), routing (43) and destination options (60)
  // are 8 * (1 + length byte) long, a fragment header (44) is 8 bytes and marks a fragment.
  // A header that does not start inside the window with 8 bytes to spare, or a third one,
  // ends the walk: the frame is then "other L4" at that point (docs/rx-rules.md §2).
  // `hb` holds the header's first two bytes {length, next header}, read a stage earlier.
  function automatic logic [16:0] ext_end(input logic [7:0] len_byte, input logic [7:0] nh,
                                          input logic [15:0] off);
    logic [16:0] size;
    size = (nh == NH_FRAG) ? 17'd8 : ({9'd0, len_byte} + 17'd1) << 3;
    return {1'b0, off} + size;
  endfunction

  function automatic l3_state_t ext_step(input logic [15:0] hb, input l3_state_t st);
    l3_state_t   o;
    logic [16:0] end_off;
    o       = st;
    end_off = ext_end(hb[15:8], st.nh, st.off);
    if (!st.stop && !st.err && is_ext(st.nh)) begin
      if ({1'b0, st.off} + 17'd8 > 17'(PARSE_BYTES)) begin
        o.stop = 1'b1;
      end else begin
        o.v6_ext = 1'b1;
        if (end_off > {1'b0, st.ip_end}) begin
          o.err = 1'b1;
        end else begin
          o.off  = end_off[15:0];
          o.nh   = hb[7:0];
          o.frag = st.frag || (st.nh == NH_FRAG);
        end
      end
    end
    return o;
  endfunction

  logic           s3_valid_q, s4_valid_q;
  logic [NWB-1:0] s3_win_q;
  logic [15:0]    s3_ext_q;       // the second extension header's first two bytes
  logic [39:0]    s4_l4_q;        // the L4 header's bytes {12, 3, 2, 1, 0}
  l3_state_t      s3_q, s4_q;

  // What stages 2 and 3 read: the capture window itself when NARROW, else their own copies.
  logic [NWB-1:0] win2, win3;
  assign win2 = NARROW ? cap_q[WB-1:8*W0] : s2_win_q;
  assign win3 = NARROW ? cap_q[WB-1:8*W0] : s3_win_q;

  always_ff @(posedge clk) begin
    if (rst) begin
      s3_valid_q <= 1'b0;
      s4_valid_q <= 1'b0;
    end else begin
      s3_valid_q <= s2_valid_q;
      s4_valid_q <= s3_valid_q;
    end
  end

  // The second header's bytes are read where the first one ends: they are used only when
  // the first one was walked, and then that is where the walk is.
  /* verilator lint_off UNUSEDSIGNAL */    // two of the five bytes read, 16 bits of the end
  always_ff @(posedge clk) begin
    if (s2_valid_q) begin
      automatic logic [16:0] e1_end = ext_end(s2_ext_q[15:8], s2_q.nh, s2_q.off);
      automatic logic [39:0] rd     = slot_read(win2, e1_end[15:0], s2_q.len);
      s3_win_q  <= s2_win_q;
      s3_ext_q  <= rd[15:0];
      s3_q      <= ext_step(s2_ext_q, s2_q);
    end
    if (s3_valid_q) begin
      automatic l3_state_t st = ext_step(s3_ext_q, s3_q);
      s4_l4_q <= slot_read(win3, st.off, s3_q.len);
      s4_q    <= st;
    end
  end
  /* verilator lint_on UNUSEDSIGNAL */

  // ------------------------------------------------------------------ stage 4: L4
  typedef struct packed {
    l4_type_e    l4_type;
    logic        err;
    logic [15:0] pay_off;
    logic [15:0] sport;
    logic [15:0] dport;
  } l4_t;

  /* verilator lint_off UNUSEDSIGNAL */
  function automatic l4_t l4_decode(input logic [39:0] l4b, input l3_state_t st);
    l4_t            o;
    logic [3:0]     tcp_doff;
    logic [16:0]    l4_off, l4_hdr_end;
    logic           more_ext;
    // The L4 offset is W0 or more unless the IPv4 header lies (IHL < 5: a header error,
    // whose frame is dropped); such an offset reads zeros (slot_read).
    tcp_doff = l4b[32 + 4 +: 4];
    l4_off   = {1'b0, st.off};
    more_ext = (st.l3 == L3_IPV6) && is_ext(st.nh);   // walk ended early

    o.l4_type  = L4_NONE;
    o.err      = 1'b0;
    l4_hdr_end = l4_off;
    o.pay_off  = 16'd0;
    if (st.l3 != L3_NONE) begin
      o.pay_off = st.off;
      if (!st.frag) begin
        if (st.nh == PROTO_TCP && !more_ext && l4_off + 17'd20 <= 17'(PARSE_BYTES)) begin
          o.l4_type  = L4_TCP;
          l4_hdr_end = l4_off + {11'd0, tcp_doff, 2'b00};
          o.err      = (l4_off + 17'd20 > {1'b0, st.ip_end}) || (tcp_doff < 4'd5) ||
                       (l4_hdr_end > {1'b0, st.ip_end});
          o.pay_off  = l4_hdr_end[15:0];
        end else if (st.nh == PROTO_UDP && !more_ext && l4_off + 17'd8 <= 17'(PARSE_BYTES)) begin
          o.l4_type  = L4_UDP;
          l4_hdr_end = l4_off + 17'd8;
          o.err      = l4_hdr_end > {1'b0, st.ip_end};
          o.pay_off  = l4_hdr_end[15:0];
        end else begin
          o.l4_type = L4_OTHER;
        end
      end
    end
    // ports only for TCP/UDP
    o.sport = (o.l4_type == L4_TCP || o.l4_type == L4_UDP) ? {l4b[7:0], l4b[15:8]} : 16'd0;
    o.dport = (o.l4_type == L4_TCP || o.l4_type == L4_UDP) ? {l4b[23:16], l4b[31:24]} : 16'd0;
    return o;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  always_ff @(posedge clk) begin
    if (rst) meta_valid <= 1'b0;
    else     meta_valid <= s4_valid_q;
  end

  // meta and tuple load with s4_valid_q and hold while meta_valid is low. When NARROW the
  // addresses come from stage 2's registers, which the next kept frame loads no earlier
  // than KEPT_GAP >= 3 cycles after this frame did (this load is 3 cycles after it).
  always_ff @(posedge clk) begin
    if (s4_valid_q) begin
      automatic l4_t l4 = l4_decode(s4_l4_q, s4_q);
      meta.frame_len <= s4_q.len;
      meta.l3_type   <= s4_q.l3;
      meta.l4_type   <= l4.l4_type;
      meta.ip_frag   <= s4_q.frag;
      meta.vlan_tags <= s4_q.tags;
      meta.hdr_err   <= s4_q.err || l4.err;
      meta.pay_off   <= l4.pay_off;
      meta.ip_end    <= s4_q.ip_end;
      meta.qinq      <= s4_q.qinq;
      meta.ipv4_opts <= s4_q.v4_opts;
      meta.ipv6_ext  <= s4_q.v6_ext;

      tuple.l3_type  <= s4_q.l3;
      tuple.l4_type  <= l4.l4_type;
      tuple.ip_frag  <= s4_q.frag;
      tuple.proto    <= s4_q.nh;
      tuple.src_addr <= NARROW ? s2_q.src : s4_q.src;
      tuple.dst_addr <= NARROW ? s2_q.dst : s4_q.dst;
      tuple.sport    <= l4.sport;
      tuple.dport    <= l4.dport;
    end
  end

  // The walk's end is read from the next header itself; tkeep is implied by frame_len.
  logic unused;
  assign unused = s4_q.stop ^ (^beat_keep);
endmodule
