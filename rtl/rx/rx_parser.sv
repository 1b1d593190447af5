// RX header parser: Ethernet (+ up to two VLAN tags), IPv4 (any IHL), IPv6, TCP and UDP.
//
// It watches the same beats the ingress stores, keeps the first PARSE_BYTES bytes of each
// frame in a capture window, and when the ingress keeps a frame it runs three pipeline stages
// (L2, L3, L4), one frame per cycle, producing an rx_meta_t: where the headers end (pay_off),
// where the IP datagram ends (ip_end), the protocol types, and whether a header lies (hdr_err).
// The rules are docs/rx-rules.md §2. Bytes of the window past the frame's end read as zero.
//
// Latency: meta_valid rises 3 cycles after the frame's last beat. There is no backpressure:
// the ingress only keeps a frame when the metadata FIFO is sure to have room.
// Reset: synchronous, active high; clears the pipeline valid bits.
module rx_parser
  import nic_pkg::*;
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
  // result
  output logic                meta_valid,
  output rx_meta_t            meta
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned NB = PARSE_BYTES / DB;    // window beats
  localparam int unsigned WB = PARSE_BYTES * 8;     // window bits
  localparam logic [15:0] TPID_8021Q  = 16'h8100;
  localparam logic [15:0] TPID_8021AD = 16'h88A8;
  localparam logic [15:0] ET_IPV4     = 16'h0800;
  localparam logic [15:0] ET_IPV6     = 16'h86DD;
  localparam logic [7:0]  PROTO_TCP   = 8'd6;
  localparam logic [7:0]  PROTO_UDP   = 8'd17;
  localparam logic [7:0]  NH_FRAG     = 8'd44;

  initial begin
    // 128 bytes hold every field the parser reads: QinQ (22) + IPv4 with options (60) + the
    // first 20 bytes of TCP = 102.
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

  // ------------------------------------------------------------------ capture window
  logic [WB-1:0] cap_q, cap_d;
  logic [$clog2(NB+1)-1:0] beat_idx_q;
  logic [DATA_W-1:0] keep_mask;

  always_comb begin
    for (int i = 0; i < DB; i++) keep_mask[i*8 +: 8] = {8{beat_keep[i]}};
  end

  always_comb begin
    cap_d = cap_q;
    if (beat_valid) begin
      if (beat_idx_q == '0) begin
        cap_d = '0;
        cap_d[0 +: DATA_W] = beat_data & keep_mask;
      end else if (32'(beat_idx_q) < NB) begin
        for (int b = 1; b < NB; b++) begin
          if (32'(beat_idx_q) == b) cap_d[b*DATA_W +: DATA_W] = beat_data & keep_mask;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      beat_idx_q <= '0;
    end else if (beat_valid) begin
      if (beat_last) beat_idx_q <= '0;
      else if (32'(beat_idx_q) < NB) beat_idx_q <= beat_idx_q + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (beat_valid) cap_q <= cap_d;
  end

  // ------------------------------------------------------------------ stage 1: L2
  logic          s1_valid_q;
  logic [WB-1:0] s1_win_q;
  logic [15:0]   s1_len_q;
  logic [1:0]    s1_tags_q;
  logic          s1_v4_q, s1_v6_q;

  logic [15:0] et0, et1, et2, ethertype;
  logic [1:0]  tags;
  logic        too_many_tags;

  always_comb begin
    et0 = be16_at(cap_d, 12);
    et1 = be16_at(cap_d, 16);
    et2 = be16_at(cap_d, 20);
    too_many_tags = 1'b0;
    if (!is_tpid(et0)) begin
      tags = 2'd0; ethertype = et0;
    end else if (!is_tpid(et1)) begin
      tags = 2'd1; ethertype = et1;
    end else begin
      tags = 2'd2; ethertype = et2;
      too_many_tags = is_tpid(et2);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      s1_valid_q <= 1'b0;
    end else begin
      s1_valid_q <= beat_valid && beat_last && frame_keep;
    end
  end

  always_ff @(posedge clk) begin
    if (beat_valid && beat_last) begin
      s1_win_q  <= cap_d;
      s1_len_q  <= frame_len;
      s1_tags_q <= tags;
      s1_v4_q   <= !too_many_tags && (ethertype == ET_IPV4);
      s1_v6_q   <= !too_many_tags && (ethertype == ET_IPV6);
    end
  end

  // ------------------------------------------------------------------ stage 2: L3
  logic          s2_valid_q;
  logic [WB-1:0] s2_win_q;
  logic [15:0]   s2_len_q;
  logic [1:0]    s2_tags_q;
  l3_type_e      s2_l3_q;
  logic [7:0]    s2_proto_q;
  logic          s2_frag_q, s2_err_q;
  logic [7:0]    s2_l4_off_q;
  logic [15:0]   s2_ip_end_q;

  logic [7:0]    l3_off;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [319:0]  l3w;            // the 40 bytes at l3_off (addresses are for RSS, not read yet)
  /* verilator lint_on UNUSEDSIGNAL */
  logic [3:0]    ip_ver, ihl;
  logic [15:0]   v4_tot, v6_plen;
  logic [16:0]   v4_end, v6_end;
  logic          v4_mf;
  logic [12:0]   v4_frag_off;
  l3_type_e      l3_type;
  logic [7:0]    proto;
  logic          frag, l3_err;
  logic [7:0]    l4_off;
  logic [15:0]   ip_end;

  always_comb begin
    l3_off = 8'd14 + {4'd0, s1_tags_q, 2'd0};
    case (s1_tags_q)
      2'd0:    l3w = s1_win_q[14*8 +: 320];
      2'd1:    l3w = s1_win_q[18*8 +: 320];
      default: l3w = s1_win_q[22*8 +: 320];
    endcase
    ip_ver      = l3w[7:4];
    ihl         = l3w[3:0];
    v4_tot      = {l3w[2*8 +: 8], l3w[3*8 +: 8]};
    v4_mf       = l3w[6*8 + 5];
    v4_frag_off = {l3w[6*8 +: 5], l3w[7*8 +: 8]};
    v6_plen     = {l3w[4*8 +: 8], l3w[5*8 +: 8]};
    v4_end      = {9'd0, l3_off} + {1'b0, v4_tot};
    v6_end      = {9'd0, l3_off} + 17'd40 + {1'b0, v6_plen};

    l3_type = L3_NONE;
    proto   = 8'd0;
    frag    = 1'b0;
    l3_err  = 1'b0;
    l4_off  = 8'd0;
    ip_end  = s1_len_q;
    if (s1_v4_q) begin
      l3_type = L3_IPV4;
      proto   = l3w[9*8 +: 8];
      frag    = v4_mf || (v4_frag_off != '0);
      l4_off  = l3_off + {2'd0, ihl, 2'd0};
      ip_end  = v4_end[15:0];
      l3_err  = (ip_ver != 4'd4) || (ihl < 4'd5) || (v4_tot < {10'd0, ihl, 2'd0}) ||
                (v4_end > {1'b0, s1_len_q});
    end else if (s1_v6_q) begin
      l3_type = L3_IPV6;
      proto   = l3w[6*8 +: 8];
      frag    = (proto == NH_FRAG);
      l4_off  = l3_off + 8'd40;
      ip_end  = v6_end[15:0];
      l3_err  = (ip_ver != 4'd6) || (v6_end > {1'b0, s1_len_q});
    end
  end

  always_ff @(posedge clk) begin
    if (rst) s2_valid_q <= 1'b0;
    else     s2_valid_q <= s1_valid_q;
  end

  always_ff @(posedge clk) begin
    s2_win_q    <= s1_win_q;
    s2_len_q    <= s1_len_q;
    s2_tags_q   <= s1_tags_q;
    s2_l3_q     <= l3_type;
    s2_proto_q  <= proto;
    s2_frag_q   <= frag;
    s2_err_q    <= l3_err;
    s2_l4_off_q <= l4_off;
    s2_ip_end_q <= ip_end;
  end

  // ------------------------------------------------------------------ stage 3: L4
  /* verilator lint_off UNUSEDSIGNAL */
  logic [159:0] l4w;              // the 20 bytes at l4_off (ports are for RSS, not read yet)
  logic [WB-1:0] shifted;         // the window from l4_off on
  /* verilator lint_on UNUSEDSIGNAL */
  logic [3:0]   tcp_doff;
  logic [16:0]  l4_hdr_end;
  l4_type_e     l4_type;
  logic         l4_err;
  logic [15:0]  pay_off;

  always_comb begin
    shifted  = s2_win_q >> {s2_l4_off_q, 3'b000};
    l4w      = shifted[159:0];
    tcp_doff = l4w[12*8 + 4 +: 4];

    l4_type    = L4_NONE;
    l4_err     = 1'b0;
    l4_hdr_end = {9'd0, s2_l4_off_q};
    pay_off    = 16'd0;
    if (s2_l3_q != L3_NONE) begin
      pay_off = {8'd0, s2_l4_off_q};
      if (!s2_frag_q) begin
        if (s2_proto_q == PROTO_TCP) begin
          l4_type    = L4_TCP;
          l4_hdr_end = {9'd0, s2_l4_off_q} + {11'd0, tcp_doff, 2'b00};
          l4_err     = ({9'd0, s2_l4_off_q} + 17'd20 > {1'b0, s2_ip_end_q}) || (tcp_doff < 4'd5) ||
                       (l4_hdr_end > {1'b0, s2_ip_end_q});
          pay_off    = l4_hdr_end[15:0];
        end else if (s2_proto_q == PROTO_UDP) begin
          l4_type    = L4_UDP;
          l4_hdr_end = {9'd0, s2_l4_off_q} + 17'd8;
          l4_err     = l4_hdr_end > {1'b0, s2_ip_end_q};
          pay_off    = l4_hdr_end[15:0];
        end else begin
          l4_type = L4_OTHER;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) meta_valid <= 1'b0;
    else     meta_valid <= s2_valid_q;
  end

  always_ff @(posedge clk) begin
    meta.frame_len <= s2_len_q;
    meta.l3_type   <= s2_l3_q;
    meta.l4_type   <= l4_type;
    meta.ip_frag   <= s2_frag_q;
    meta.vlan_tags <= s2_tags_q;
    meta.hdr_err   <= s2_err_q || l4_err;
    meta.pay_off   <= pay_off;
    meta.ip_end    <= s2_ip_end_q;
  end
endmodule
