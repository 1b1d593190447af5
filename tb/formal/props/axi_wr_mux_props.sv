// Properties of rtl/common/axi_wr_mux.sv: two AXI4 write masters on one write port.
// Bound by axi_wr_mux_bind.sv; proved by tb/formal/axi_wr_mux.sby.
//
// Proved, for every reachable state after a reset:
//   - W follows AW order: the k-th W burst on the port (bursts delimited by WLAST) is made of
//     the W beats of the master whose AW was the k-th presented on the port, taken from that
//     master one for one and unchanged (WDATA, WSTRB, WLAST), the other master's WREADY low;
//     a symbolic k stands for every burst. W beats may go out before, with or after the AW
//     handshake, but never before the mux has presented that AW (so never ahead of the order);
//   - AW: every port AW is one master's AW, unchanged, and it is accepted exactly when that
//     master's AWREADY is; AWVALID held until AWREADY with a stable payload;
//   - each B goes back to its source: a response for an ID goes to the master that issued
//     that ID (a symbolic ID stands for every ID), and BREADY is that master's;
//   - the port's W is held until WREADY with a stable payload.
// The AXI rules inside a burst (WLAST on the last beat, WSTRB) are the masters': the mux
// passes the beats unchanged (axi_dma_wr's proof covers both masters of nic_top).
//
// Environment (assumptions = the interface contract; docs/verification.md):
//   - reset in the first cycle;
//   - each master obeys AXI: AWVALID and WVALID held until READY with a stable payload; master
//     0 uses IDs below S1_ID_MIN, master 1 IDs from S1_ID_MIN (the routing rule of the port);
//   - the slave: AWREADY, WREADY, BVALID free; a B only for an ID with an accepted AW.
/* verilator lint_off UNUSEDSIGNAL */  // ports some checks of a proof only read
module axi_wr_mux_props #(
  parameter int unsigned DATA_W    = 128,
  parameter int unsigned ADDR_W    = 64,
  parameter int unsigned ID_W      = 5,
  parameter int unsigned S1_ID_MIN = 8,
  parameter int unsigned DEPTH     = 8
) (
  input logic                     clk,
  input logic                     rst,
  input logic [1:0][ID_W-1:0]     s_awid,
  input logic [1:0][ADDR_W-1:0]   s_awaddr,
  input logic [1:0][7:0]          s_awlen,
  input logic [1:0][2:0]          s_awsize,
  input logic [1:0][1:0]          s_awburst,
  input logic [1:0]               s_awvalid,
  input logic [1:0]               s_awready,
  input logic [1:0][DATA_W-1:0]   s_wdata,
  input logic [1:0][DATA_W/8-1:0] s_wstrb,
  input logic [1:0]               s_wlast,
  input logic [1:0]               s_wvalid,
  input logic [1:0]               s_wready,
  input logic [1:0]               s_bvalid,
  input logic [1:0]               s_bready,
  input logic [ID_W-1:0]          m_awid,
  input logic [ADDR_W-1:0]        m_awaddr,
  input logic [7:0]               m_awlen,
  input logic [2:0]               m_awsize,
  input logic [1:0]               m_awburst,
  input logic                     m_awvalid,
  input logic                     m_awready,
  input logic [DATA_W-1:0]        m_wdata,
  input logic [DATA_W/8-1:0]      m_wstrb,
  input logic                     m_wlast,
  input logic                     m_wvalid,
  input logic                     m_wready,
  input logic [ID_W-1:0]          m_bid,
  input logic                     m_bvalid,
  input logic                     m_bready,
  // design state, for the induction invariants
  input logic                     aw_pend_q,
  input logic                     gnt,
  input logic                     gnt_valid,
  input logic                     arb_held_q,
  input logic                     arb_held_idx_q,
  input logic [$clog2(DEPTH):0]   ord_count,
  input logic [$clog2(DEPTH)-1:0] ord_rd_ptr,
  input logic [0:0]               ord_mem [DEPTH]
);
  localparam int unsigned AW = $clog2(DEPTH);

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

  logic [1:0]             p_s_awvalid, p_s_awready, p_s_wvalid, p_s_wready;
  logic [1:0][ID_W-1:0]   p_s_awid;
  logic [1:0][ADDR_W-1:0] p_s_awaddr;
  logic [1:0][7:0]        p_s_awlen;
  logic [1:0][2:0]        p_s_awsize;
  logic [1:0][1:0]        p_s_awburst;
  logic [1:0][DATA_W-1:0] p_s_wdata;
  logic [1:0][DATA_W/8-1:0] p_s_wstrb;
  logic [1:0]             p_s_wlast;
  logic                   p_awvalid, p_awready, p_wvalid, p_wready;
  logic [ID_W-1:0]        p_awid;
  logic [ADDR_W-1:0]      p_awaddr;
  logic [7:0]             p_awlen;
  logic [2:0]             p_awsize;
  logic [1:0]             p_awburst;
  logic [DATA_W-1:0]      p_wdata;
  logic [DATA_W/8-1:0]    p_wstrb;
  logic                   p_wlast;
  always_ff @(posedge clk) begin
    f_past      <= f_on;
    p_s_awvalid <= s_awvalid;
    p_s_awready <= s_awready;
    p_s_wvalid  <= s_wvalid;
    p_s_wready  <= s_wready;
    p_s_awid    <= s_awid;
    p_s_awaddr  <= s_awaddr;
    p_s_awlen   <= s_awlen;
    p_s_awsize  <= s_awsize;
    p_s_awburst <= s_awburst;
    p_s_wdata   <= s_wdata;
    p_s_wstrb   <= s_wstrb;
    p_s_wlast   <= s_wlast;
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

  logic f_aw, f_w, f_wb, f_new;
  assign f_aw  = m_awvalid && m_awready;
  assign f_w   = m_wvalid && m_wready;
  assign f_wb  = f_w && m_wlast;                 // a W burst ends
  logic f_pend;                                  // the port's AW is presented, not accepted
  assign f_new = m_awvalid && !f_pend;           // an AW presented for the first time

  // ------------------------------------------------------------------ environment
`ifdef FORMAL
  always_comb begin
    if (f_started) begin
      if (s_awvalid[0]) assume (32'(s_awid[0]) < S1_ID_MIN);
      if (s_awvalid[1]) assume (32'(s_awid[1]) >= S1_ID_MIN);
    end
    if (f_past) begin
      for (int i = 0; i < 2; i++) begin
        if (p_s_awvalid[i] && !p_s_awready[i]) begin
          assume (s_awvalid[i] && s_awid[i] == p_s_awid[i] && s_awaddr[i] == p_s_awaddr[i] && s_awlen[i] == p_s_awlen[i] &&
                  s_awsize[i] == p_s_awsize[i] && s_awburst[i] == p_s_awburst[i]);
        end
        if (p_s_wvalid[i] && !p_s_wready[i]) begin
          assume (s_wvalid[i] && s_wdata[i] == p_s_wdata[i] && s_wstrb[i] == p_s_wstrb[i] && s_wlast[i] == p_s_wlast[i]);
        end
      end
    end
  end
`endif

  // ------------------------------------------------------------------ models
  // Port AWs presented and port W bursts completed (counts), the tracked burst k and the
  // tracked ID (free constants in a proof: the .sby script makes f_const_* an $anyconst).
  logic [7:0]      f_awn, f_wbn;
  logic [7:0]      f_const_burst, f_k;
  logic [ID_W-1:0] f_const_id, f_id;
`ifndef FORMAL
  // simulation: track the next burst to be presented after each one checked, and one ID per reset
  logic [7:0] f_k_q;
  logic [ID_W-1:0] f_id_q;
  always_ff @(posedge clk) begin
    if (rst || (f_wb && f_wbn == f_k)) f_k_q <= f_awn + 8'(f_new);
    if (rst) f_id_q <= ID_W'($urandom);
  end
  assign f_const_burst = f_k_q;
  assign f_const_id    = f_id_q;
`endif
  assign f_k  = f_const_burst;
  assign f_id = f_const_id;

  logic       f_k_src, f_k_known;     // the master of the k-th port AW, once presented
  logic       f_k_wdone, f_k_adone;   // its W burst is out / its AW accepted (tracking ends with both)
  logic [7:0] f_acc;                  // port AWs accepted
  logic       f_k_w_now, f_k_a_now, f_k_new;
  assign f_k_new   = f_new && f_awn == f_k;
  assign f_k_w_now = f_wb && f_wbn == f_k;
  assign f_k_a_now = f_aw && f_acc == f_k;
  logic [1:0] f_id_owner;             // masters whose AWs used the tracked ID
  always_ff @(posedge clk) begin
    if (rst) begin
      f_awn      <= '0;
      f_wbn      <= '0;
      f_pend     <= 1'b0;
      f_k_known  <= 1'b0;
      f_id_owner <= '0;
      f_acc      <= '0;
    end else begin
      if (f_aw) f_acc <= f_acc + 8'd1;
      f_pend <= m_awvalid && !m_awready;
      if (f_new) f_awn <= f_awn + 8'd1;
      if (f_wb)  f_wbn <= f_wbn + 8'd1;
      if (f_k_new) begin
        f_k_known <= 1'b1;
        f_k_src   <= gnt;                   // confirmed at its handshake: a_aw_k_accepted_from_its_master
        f_k_wdone <= 1'b0;
        f_k_adone <= f_k_a_now;
      end else if (f_k_known) begin
        // both sides done: checked; k comes round again 256 bursts on
        if ((f_k_wdone || f_k_w_now) && (f_k_adone || f_k_a_now)) f_k_known <= 1'b0;
        if (f_k_w_now) f_k_wdone <= 1'b1;
        if (f_k_a_now) f_k_adone <= 1'b1;
      end
      for (int i = 0; i < 2; i++) if (s_awvalid[i] && s_awready[i] && s_awid[i] == f_id) f_id_owner[i] <= 1'b1;
    end
  end

  // the master the AW presented now is taken from: the grant, checked against the masters' AWs
  // below and against the master whose AWREADY the handshake raises (a_aw_k_accepted_from_its_master)
  logic f_src_now;
  assign f_src_now = gnt;

`ifdef FORMAL
  // a B only for an ID with an accepted AW (the tracked ID: enough to route every ID)
  always_comb if (f_started && m_bvalid && m_bid == f_id) assume (f_id_owner != '0);
`endif

  // ------------------------------------------------------------------ assertions
  logic f_in_k;                       // the port's W beat now belongs to burst k
  assign f_in_k = f_wbn == f_k;
  logic e_k_src;                      // burst k's master, known or presented now
  assign e_k_src = f_k_known ? f_k_src : gnt;

  always_comb begin
    if (f_on) begin
      // ---- AW: one master's AW, unchanged; accepted exactly with that master's AWREADY
      a_aw_ready_one_master: assert (!(s_awready[0] && s_awready[1]) && ((s_awready != '0) == f_aw));
      if (m_awvalid) a_aw_from_a_valid_master: assert (s_awvalid[f_src_now] && m_awid == s_awid[f_src_now] &&
                                                       m_awaddr == s_awaddr[f_src_now] && m_awlen == s_awlen[f_src_now]);
      if (f_k_a_now) a_aw_k_accepted_from_its_master: assert (((f_k_known && !f_k_adone) || f_k_new) && s_awready[e_k_src]);
      // ---- W: in AW order, from the burst's master, one for one
      a_w_one_master_at_a_time: assert (!(s_wready[0] && s_wready[1]));
      if (f_w) a_w_port_beat_from_a_master: assert ((s_wvalid[0] && s_wready[0]) || (s_wvalid[1] && s_wready[1]));
      if (m_wvalid) a_w_after_its_aw_presented: assert (f_awn != f_wbn);
      if (m_wvalid && f_in_k) begin
        a_w_follows_aw_order: assert (f_k_known && !f_k_wdone && s_wvalid[f_k_src] && m_wdata == s_wdata[f_k_src] &&
                                      m_wstrb == s_wstrb[f_k_src] && m_wlast == s_wlast[f_k_src] &&
                                      (!m_wready || s_wready[f_k_src]) && !s_wready[!f_k_src]);
      end
      // ---- B back to its source
      a_b_only_with_port_b: assert ((s_bvalid != '0) == m_bvalid && !(s_bvalid[0] && s_bvalid[1]));
    end
    if (f_past) begin
      if (p_awvalid && !p_awready) a_aw_held: assert (m_awvalid && m_awid == p_awid && m_awaddr == p_awaddr && m_awlen == p_awlen &&
                                                    m_awsize == p_awsize && m_awburst == p_awburst);
      if (p_wvalid && !p_wready) a_w_held: assert (m_wvalid && m_wdata == p_wdata && m_wstrb == p_wstrb && m_wlast == p_wlast);
    end
  end

  // Per master (a generate loop: each master's assertions have their own names).
  for (genvar gi = 0; gi < 2; gi++) begin : g_master
    always_comb begin
      if (f_on) begin
        if (s_awready[gi]) a_aw_passes_master: assert (s_awvalid[gi] && m_awid == s_awid[gi] && m_awaddr == s_awaddr[gi] &&
                                                       m_awlen == s_awlen[gi] && m_awsize == s_awsize[gi] && m_awburst == s_awburst[gi]);
        if (s_wvalid[gi] && s_wready[gi]) a_w_master_beat_goes_out: assert (f_w && m_wdata == s_wdata[gi] && m_wstrb == s_wstrb[gi] &&
                                                                            m_wlast == s_wlast[gi]);
        if (m_bvalid && m_bid == f_id && f_id_owner[gi]) a_b_to_its_source: assert (s_bvalid[gi] && !s_bvalid[1 - gi] &&
                                                                                    m_bready == s_bready[gi]);
      end
    end
  end

  // ------------------------------------------------------------------ induction invariants
  logic [AW:0] f_k_pos;                 // burst k's place in the order FIFO
  assign f_k_pos = (AW + 1)'(f_k - f_wbn);
  always_comb begin
    if (f_started) begin
      i_pend: assert (aw_pend_q == f_pend);
      i_order_count: assert (32'(ord_count) <= DEPTH && 8'(ord_count) == f_awn - f_wbn);
      i_accepted: assert (f_acc == f_awn - 8'(f_pend));
      if (f_pend) i_pend_granted: assert (arb_held_q && arb_held_idx_q == gnt && gnt_valid);
      if (f_pend && ord_count != '0) i_pend_newest: assert (ord_mem[AW'(32'(ord_rd_ptr) + 32'(ord_count) - 1)] == gnt);
      // burst k presented: its W burst still queued unless done, its AW pending unless accepted
      i_k_queued: assert (((f_k - f_wbn) < (f_awn - f_wbn)) == (f_k_known && !f_k_wdone));
      if (f_k_known && !f_k_wdone) i_k_order: assert (ord_mem[AW'(32'(ord_rd_ptr) + 32'(f_k_pos))] == f_k_src);
      i_k_pending: assert (((f_k - f_acc) < (f_awn - f_acc)) == (f_k_known && !f_k_adone));
      if (f_k_known && !f_k_adone) i_k_pending_src: assert (f_pend && f_k == f_awn - 8'd1 && f_k_src == gnt);
      if (f_k_known) i_k_not_both_done: assert (!(f_k_wdone && f_k_adone));
      if (f_id_owner[0]) i_id_owner0: assert (32'(f_id) < S1_ID_MIN);
      if (f_id_owner[1]) i_id_owner1: assert (32'(f_id) >= S1_ID_MIN);
    end
  end

  // ------------------------------------------------------------------ covers
  always_comb begin
    if (f_on) begin
      c_w_before_aw_accepted: cover (f_w && f_pend && !m_awready);
      c_masters_alternate: cover (f_wb && f_k_known && f_in_k && f_k_src && f_awn - f_wbn == 8'd2);
      c_b_to_master1: cover (s_bvalid[1] && s_bready[1] && f_id_owner[1] && m_bid == f_id);
      c_order_full: cover (32'(ord_count) == DEPTH && m_awvalid);
    end
  end
endmodule
