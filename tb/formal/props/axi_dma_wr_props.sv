// Properties of rtl/common/axi_dma_wr.sv: "write these bytes at this address" commands to AXI4
// INCR bursts. Bound by axi_dma_wr_bind.sv; proved by tb/formal/axi_dma_wr.sby.
//
// Proved (see the .sby file for which configurations by k-induction and which by BMC):
//   - AXI master rules: AWVALID and WVALID held until READY with a stable payload; AWLEN + 1
//     within MAX_BURST; no burst crosses a 4 KiB boundary; AWSIZE the full bus width, INCR,
//     AWADDR aligned to it; WLAST exactly on the last beat of the burst the beat belongs to;
//   - bursts tile each command: in command order, the bursts of a command start at its address
//     rounded down to the bus width and follow each other without gap or overlap until the
//     command's last byte, with the command's AXI ID;
//   - bytes: every W beat's strobe lane is set exactly when the byte it addresses lies in the
//     command's [addr, addr + len) (a symbolic beat number and a symbolic lane stand for every
//     beat and lane); with the tiling above, every byte of [addr, addr + len) is written exactly
//     once and no other byte is written;
//   - data: one input beat per W beat (WDATA is the input beat), never more W beats than the
//     accepted commands hold;
//   - responses: b_err exactly for SLVERR/DECERR, with the BID; `idle` exactly when nothing
//     is in progress.
// The W beats and the AW bursts are matched by their order (AXI4 has no write interleaving),
// so the checks hold whether a burst's data goes before, with or after its address.
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - commands: valid held until ready with a stable payload; cmd_len >= 1; the range does not
//     wrap the address space; with `define F_MAX_LEN (BMC configurations) cmd_len <= F_MAX_LEN;
//   - input beats: valid held until ready with stable data;
//   - the AXI slave: AWREADY, WREADY, BVALID, BID, BRESP free (any order, any delay).
/* verilator lint_off UNUSEDSIGNAL */  // ports some checks of a proof only read
module axi_dma_wr_props #(
  parameter int unsigned DATA_W    = 64,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned MAX_BURST = 256,
  parameter int unsigned ID_W      = 4
) (
  input logic                clk,
  input logic                rst,
  input logic                cmd_valid,
  input logic                cmd_ready,
  input logic [ADDR_W-1:0]   cmd_addr,
  input logic [16:0]         cmd_len,
  input logic [ID_W-1:0]     cmd_id,
  input logic                in_valid,
  input logic                in_ready,
  input logic [DATA_W-1:0]   in_data,
  input logic [ID_W-1:0]     m_awid,
  input logic [ADDR_W-1:0]   m_awaddr,
  input logic [7:0]          m_awlen,
  input logic [2:0]          m_awsize,
  input logic [1:0]          m_awburst,
  input logic                m_awvalid,
  input logic                m_awready,
  input logic [DATA_W-1:0]   m_wdata,
  input logic [DATA_W/8-1:0] m_wstrb,
  input logic                m_wlast,
  input logic                m_wvalid,
  input logic                m_wready,
  input logic [ID_W-1:0]     m_bid,
  input logic [1:0]          m_bresp,
  input logic                m_bvalid,
  input logic                m_bready,
  input logic                b_err,
  input logic [ID_W-1:0]     b_err_id,
  input logic                idle
);
  localparam int unsigned DB = DATA_W / 8;
  localparam int unsigned LW = $clog2(DB);
  localparam int unsigned XW = ADDR_W + 1;      // addresses with a carry bit

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

  logic                p_cmd_valid, p_cmd_ready, p_in_valid, p_in_ready;
  logic [ADDR_W-1:0]   p_cmd_addr;
  logic [16:0]         p_cmd_len;
  logic [ID_W-1:0]     p_cmd_id;
  logic [DATA_W-1:0]   p_in_data;
  logic                p_awvalid, p_awready, p_wvalid, p_wready;
  logic [ID_W-1:0]     p_awid;
  logic [ADDR_W-1:0]   p_awaddr;
  logic [7:0]          p_awlen;
  logic [2:0]          p_awsize;
  logic [1:0]          p_awburst;
  logic [DATA_W-1:0]   p_wdata;
  logic [DATA_W/8-1:0] p_wstrb;
  logic                p_wlast;
  always_ff @(posedge clk) begin
    f_past      <= f_on;
    p_cmd_valid <= cmd_valid;
    p_cmd_ready <= cmd_ready;
    p_cmd_addr  <= cmd_addr;
    p_cmd_len   <= cmd_len;
    p_cmd_id    <= cmd_id;
    p_in_valid  <= in_valid;
    p_in_ready  <= in_ready;
    p_in_data   <= in_data;
    p_awvalid   <= m_awvalid;
    p_awready   <= m_awready;
    p_awid      <= m_awid;
    p_awaddr    <= m_awaddr;
    p_awlen     <= m_awlen;
    p_awsize    <= m_awsize;
    p_awburst   <= m_awburst;
    p_wvalid    <= m_wvalid;
    p_wready    <= m_wready;
    p_wdata     <= m_wdata;
    p_wstrb     <= m_wstrb;
    p_wlast     <= m_wlast;
  end

  logic f_cmd, f_aw, f_w, f_in;
  assign f_cmd = cmd_valid && cmd_ready;
  assign f_aw  = m_awvalid && m_awready;
  assign f_w   = m_wvalid && m_wready;
  assign f_in  = in_valid && in_ready;

  // ------------------------------------------------------------------ environment
`ifdef FORMAL
  always_comb begin
    if (f_started) begin
      if (cmd_valid) begin
        assume (cmd_len != '0);
        assume ({1'b0, cmd_addr} + XW'(cmd_len) <= (XW'(1) << ADDR_W));
`ifdef F_MAX_LEN
        assume (32'(cmd_len) <= `F_MAX_LEN);
`endif
      end
    end
    if (f_past) begin
      if (p_cmd_valid && !p_cmd_ready) assume (cmd_valid && cmd_addr == p_cmd_addr && cmd_len == p_cmd_len && cmd_id == p_cmd_id);
      if (p_in_valid && !p_in_ready) assume (in_valid && in_data == p_in_data);
    end
  end
`endif

  // ------------------------------------------------------------------ the command being issued on AW
  // Beats of a command: its bytes, from its address rounded down to the bus width.
  function automatic logic [15:0] cmd_beats(input logic [ADDR_W-1:0] a, input logic [16:0] n);
    return 16'((32'(a[LW-1:0]) + 32'(n) + DB - 1) >> LW);
  endfunction

  logic              f_c_valid;          // accepted, not all its beats announced on AW
  logic [ADDR_W-1:0] f_c_addr;
  logic [XW-1:0]     f_c_end;            // addr + len
  logic [XW-1:0]     f_c_next;           // where its next burst must start
  logic [15:0]       f_c_left;           // its beats not yet announced
  logic [ID_W-1:0]   f_c_id;
  logic [15:0]       f_an, f_wn, f_cn;   // beats announced on AW, written on W, of accepted commands
  logic              f_aw_ends_cmd;
  assign f_aw_ends_cmd = f_aw && f_c_valid && 16'(m_awlen) + 16'd1 == f_c_left;

  always_ff @(posedge clk) begin
    if (rst) begin
      f_c_valid <= 1'b0;
      f_an      <= '0;
      f_wn      <= '0;
      f_cn      <= '0;
    end else begin
      if (f_aw) begin
        f_an     <= f_an + 16'(m_awlen) + 16'd1;
        f_c_next <= f_c_next + XW'(32'((32'(m_awlen) + 1) * DB));
        f_c_left <= f_c_left - 16'(m_awlen) - 16'd1;
        if (f_aw_ends_cmd) f_c_valid <= 1'b0;
      end
      if (f_w) f_wn <= f_wn + 16'd1;
      if (f_cmd) begin
        f_c_valid <= 1'b1;
        f_c_addr  <= cmd_addr;
        f_c_end   <= {1'b0, cmd_addr} + XW'(cmd_len);
        f_c_next  <= {1'b0, cmd_addr[ADDR_W-1:LW], {LW{1'b0}}};
        f_c_left  <= cmd_beats(cmd_addr, cmd_len);
        f_c_id    <= cmd_id;
        f_cn      <= f_cn + cmd_beats(cmd_addr, cmd_len);
      end
    end
  end

  // ------------------------------------------------------------------ the tracked beat and lane
  // Beat number f_g of the W stream (counted from reset) and its lane f_l: free constants in a
  // proof (the .sby script makes f_const_* an $anyconst), pseudo-random in simulation. The AW
  // burst that covers beat f_g gives its address and command; the checks run once both sides
  // have been seen, whichever came first.
  logic [15:0]   f_const_beat, f_g;
  logic [LW-1:0] f_const_lane, f_l;
  assign f_g = f_const_beat;
  assign f_l = f_const_lane;

  logic              f_gw, f_ga;             // its W beat / its AW burst seen (registered)
  logic              f_g_strb, f_g_last;     // from its W beat
  logic [XW-1:0]     f_g_addr, f_g_lo, f_g_hi; // from its AW burst: the beat's address, the command's range
  logic              f_g_is_last;            // ... it is the burst's last beat
  logic              f_w_now, f_a_now, f_gw_seen, f_ga_seen;
  logic [15:0]       f_g_off;                // its place in the AW burst that fires now
  assign f_w_now = f_w && f_wn == f_g;
  assign f_g_off = f_g - f_an;
  assign f_a_now = f_aw && f_g_off <= 16'(m_awlen);
  assign f_gw_seen = f_gw || f_w_now;
  assign f_ga_seen = f_ga || f_a_now;

`ifndef FORMAL
  // simulation: after each check, a beat a few beats past both streams, and a random lane
  logic [31:0] f_lfsr;
  initial f_lfsr = 32'h1234_5679;
  always_ff @(posedge clk) f_lfsr <= {f_lfsr[30:0], f_lfsr[31] ^ f_lfsr[21] ^ f_lfsr[1] ^ f_lfsr[0]};
  logic [15:0]   f_beat_q, f_later;
  logic [LW-1:0] f_lane_q;
  assign f_later = ((f_an - f_wn) < 16'h8000) ? f_an : f_wn;
  always_ff @(posedge clk) begin
    if (rst || (f_gw_seen && f_ga_seen)) begin
      f_beat_q <= f_later + 16'(f_lfsr[3:0]) + 16'(f_w) + 16'(f_aw) * (16'(m_awlen) + 16'd1);
      f_lane_q <= LW'(f_lfsr[31:16]);
    end
  end
  assign f_const_beat = f_beat_q;
  assign f_const_lane = f_lane_q;
`endif

  logic          e_strb, e_last;             // the tracked beat's values, registered or now
  logic [XW-1:0] e_addr, e_lo, e_hi;
  logic          e_is_last;
  always_comb begin
    e_strb    = f_gw ? f_g_strb : m_wstrb[f_l];
    e_last    = f_gw ? f_g_last : m_wlast;
    e_addr    = f_ga ? f_g_addr : {1'b0, m_awaddr} + XW'(32'(f_g_off) * DB);
    e_lo      = f_ga ? f_g_lo : {1'b0, f_c_addr};
    e_hi      = f_ga ? f_g_hi : f_c_end;
    e_is_last = f_ga ? f_g_is_last : (f_g_off == 16'(m_awlen));
  end

  always_ff @(posedge clk) begin
    if (rst || (f_gw_seen && f_ga_seen)) begin
      f_gw <= 1'b0;
      f_ga <= 1'b0;
    end else begin
      if (f_w_now) begin
        f_gw     <= 1'b1;
        f_g_strb <= m_wstrb[f_l];
        f_g_last <= m_wlast;
      end
      if (f_a_now) begin
        f_ga        <= 1'b1;
        f_g_addr    <= e_addr;
        f_g_lo      <= {1'b0, f_c_addr};
        f_g_hi      <= f_c_end;
        f_g_is_last <= f_g_off == 16'(m_awlen);
      end
    end
  end

  // ------------------------------------------------------------------ assertions
  logic [XW-1:0] f_byte;                     // the tracked beat's byte in lane f_l
  assign f_byte = e_addr + XW'(f_l);

  always_comb begin
    if (f_on) begin
      // ---- AW
      if (m_awvalid) begin
        a_aw_len_max: assert (32'(m_awlen) + 1 <= MAX_BURST);
        a_aw_no_4k_cross: assert (32'(m_awaddr[11:0]) + (32'(m_awlen) + 1) * DB <= 32'h1000);
        a_aw_size_burst_aligned: assert (m_awsize == 3'(LW) && m_awburst == 2'b01 && m_awaddr[LW-1:0] == '0);
      end
      if (f_aw) begin
        a_aw_for_a_command: assert (f_c_valid);
        a_aw_tiles_command: assert ({1'b0, m_awaddr} == f_c_next && 16'(m_awlen) + 16'd1 <= f_c_left && m_awid == f_c_id);
      end
      if (f_cmd) a_cmd_after_previous_issued: assert (!f_c_valid || f_aw_ends_cmd);
      // ---- W
      if (f_w) a_w_within_commands: assert (f_wn != f_cn);
      a_w_one_input_beat_each: assert (f_w == f_in && (!m_wvalid || m_wdata == in_data));
      if (f_gw_seen && f_ga_seen) begin
        a_wlast_on_last_beat: assert (e_last == e_is_last);
        a_wstrb_only_addressed_bytes: assert (e_strb == (f_byte >= e_lo && f_byte < e_hi));
      end
      // ---- responses, idle
      a_bready: assert (m_bready);
      a_b_err: assert (b_err == (m_bvalid && m_bresp[1]) && (!b_err || b_err_id == m_bid));
      a_idle_iff_nothing_pending: assert (idle == (!f_c_valid && f_wn == f_cn));
    end
    if (f_past) begin
      if (p_awvalid && !p_awready) begin
        a_aw_held: assert (m_awvalid && m_awaddr == p_awaddr && m_awlen == p_awlen && m_awid == p_awid &&
                           m_awsize == p_awsize && m_awburst == p_awburst);
      end
      if (p_wvalid && !p_wready) a_w_held: assert (m_wvalid && m_wdata == p_wdata && m_wstrb == p_wstrb && m_wlast == p_wlast);
    end
  end

  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_two_bursts_at_4k: cover (f_aw && f_c_valid && !f_aw_ends_cmd && m_awaddr[11:LW] == '1);
      c_unaligned_both_ends: cover (f_cmd && cmd_addr[LW-1:0] != '0 && (cmd_addr[LW-1:0] + LW'(cmd_len)) != '0 && cmd_len > 17'(DB));
      c_tracked_checked: cover (f_gw_seen && f_ga_seen && e_strb && !e_last);
      c_w_and_aw_stalled: cover (m_awvalid && !m_awready && m_wvalid && !m_wready);
    end
  end
endmodule
