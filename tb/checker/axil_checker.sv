// AXI4-Lite protocol checker for one interface (testbench code, tb/checker/): passive, reports
// the first broken rule through nic_checker_pkg::violation (IHI 0022 H.c, chapter B1):
//
//   AXIL_AW_STABLE, AXIL_W_STABLE, AXIL_AR_STABLE  (master) VALID held until READY, payload
//   AXIL_B_STABLE, AXIL_R_STABLE                   (slave)  stable
//   AXIL_RESET_VALID   AWVALID, WVALID, ARVALID (master), BVALID, RVALID (slave) low in reset
//                      and in the first cycle after it
//   AXIL_X             no X/Z on VALID/READY out of reset (4-state simulators only)
//   AXIL_B_UNEXPECTED  (slave) one write response per write: BVALID only when a write's AW and
//                      W have both been handshaken and it has had no response
//   AXIL_R_UNEXPECTED  (slave) one read response per read: RVALID only with a read unanswered
// Reset (`rst`, synchronous): nothing outstanding; `after_rst`: the previous cycle was in reset.
module axil_checker
  import nic_checker_pkg::*;
#(
  parameter int unsigned ADDR_W = 16,
  parameter int unsigned DATA_W = 32,
  parameter string       MASTER = "master",
  parameter string       SLAVE  = "slave",
  parameter string       GROUP  = "csr"
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  after_rst,
  input  longint unsigned       cycle,
  input  longint unsigned       period_ns,
  input  logic [ADDR_W-1:0]     awaddr,
  input  logic [2:0]            awprot,
  input  logic                  awvalid,
  input  logic                  awready,
  input  logic [DATA_W-1:0]     wdata,
  input  logic [DATA_W/8-1:0]   wstrb,
  input  logic                  wvalid,
  input  logic                  wready,
  input  logic [1:0]            bresp,
  input  logic                  bvalid,
  input  logic                  bready,
  input  logic [ADDR_W-1:0]     araddr,
  input  logic [2:0]            arprot,
  input  logic                  arvalid,
  input  logic                  arready,
  input  logic [DATA_W-1:0]     rdata,
  input  logic [1:0]            rresp,
  input  logic                  rvalid,
  input  logic                  rready,
  output longint unsigned       n_wr,      // write responses handshaken
  output longint unsigned       n_rd       // read responses handshaken
);
  /* verilator tracing_off */
  /* verilator coverage_off */
  localparam int unsigned SW = DATA_W / 8;
  logic aw_drop, aw_wait, w_drop, w_wait, ar_drop, ar_wait, b_drop, b_wait, r_drop, r_wait;
  logic [ADDR_W+2:0]      aw_held, ar_held;
  logic [DATA_W+SW-1:0]   w_held;
  logic [1:0]             b_held;
  logic [DATA_W+1:0]      r_held;

  valid_hold_check #(.W(ADDR_W + 3)) u_aw (.clk, .rst, .valid(awvalid), .ready(awready), .payload({awaddr, awprot}),
                                           .waiting(aw_wait), .drop(aw_drop), .held(aw_held));
  valid_hold_check #(.W(DATA_W + SW)) u_w (.clk, .rst, .valid(wvalid), .ready(wready), .payload({wdata, wstrb}),
                                           .waiting(w_wait), .drop(w_drop), .held(w_held));
  valid_hold_check #(.W(2)) u_b (.clk, .rst, .valid(bvalid), .ready(bready), .payload(bresp),
                                 .waiting(b_wait), .drop(b_drop), .held(b_held));
  valid_hold_check #(.W(ADDR_W + 3)) u_ar (.clk, .rst, .valid(arvalid), .ready(arready), .payload({araddr, arprot}),
                                           .waiting(ar_wait), .drop(ar_drop), .held(ar_held));
  valid_hold_check #(.W(DATA_W + 2)) u_r (.clk, .rst, .valid(rvalid), .ready(rready), .payload({rdata, rresp}),
                                          .waiting(r_wait), .drop(r_drop), .held(r_held));

  // Handshakes since reset (wrapping counters; differences are what count).
  logic [15:0] aw_n_q, w_n_q, b_n_q, ar_n_q, r_n_q;
  longint unsigned c_wr, c_rd;
  initial begin
    c_wr = 0; c_rd = 0;
  end
  assign n_wr = c_wr;
  assign n_rd = c_rd;

  string where;
  initial where = $sformatf("%m");

  always_ff @(posedge clk) begin
    if (rst) begin
      aw_n_q <= '0; w_n_q <= '0; b_n_q <= '0; ar_n_q <= '0; r_n_q <= '0;
    end else begin
      aw_n_q <= aw_n_q + 16'(awvalid && awready);
      w_n_q  <= w_n_q + 16'(wvalid && wready);
      b_n_q  <= b_n_q + 16'(bvalid && bready);
      ar_n_q <= ar_n_q + 16'(arvalid && arready);
      r_n_q  <= r_n_q + 16'(rvalid && rready);
      c_wr   <= c_wr + 64'(bvalid && bready);
      c_rd   <= c_rd + 64'(rvalid && rready);
    end
    if (after_rst && (awvalid || wvalid || arvalid))
      violation("AXIL_RESET_VALID", MASTER, where, $sformatf("AWVALID %0d WVALID %0d ARVALID %0d %s", awvalid, wvalid,
                arvalid, pick(rst, "in reset", "in the first cycle after reset")), cycle, now_ns(), now_ns(), GROUP);
    if (after_rst && (bvalid || rvalid))
      violation("AXIL_RESET_VALID", SLAVE, where, $sformatf("BVALID %0d RVALID %0d %s", bvalid, rvalid,
                pick(rst, "in reset", "in the first cycle after reset")), cycle, now_ns(), now_ns(), GROUP);
    if (!rst) begin
      if (aw_drop) violation("AXIL_AW_STABLE", MASTER, where, $sformatf("AWVALID fell before AWREADY (AWADDR 0x%0h)",
                             aw_held[ADDR_W+2:3]), cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (aw_wait) if (awvalid && {awaddr, awprot} != aw_held) violation("AXIL_AW_STABLE", MASTER, where, {"AW changed while AWVALID waited for AWREADY:",
                               `NIC_DIFF("AWADDR", (aw_held[ADDR_W+2:3]), (awaddr)),
                               `NIC_DIFF("AWPROT", (aw_held[2:0]), (awprot))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (w_drop) violation("AXIL_W_STABLE", MASTER, where, "WVALID fell before WREADY", cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (w_wait) if (wvalid && {wdata, wstrb} != w_held) violation("AXIL_W_STABLE", MASTER, where, {"W changed while WVALID waited for WREADY:",
                              `NIC_DIFF("WDATA", (w_held[DATA_W+SW-1:SW]), (wdata)),
                              `NIC_DIFF("WSTRB", (w_held[SW-1:0]), (wstrb))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (ar_drop) violation("AXIL_AR_STABLE", MASTER, where, $sformatf("ARVALID fell before ARREADY (ARADDR 0x%0h)",
                             ar_held[ADDR_W+2:3]), cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (ar_wait) if (arvalid && {araddr, arprot} != ar_held) violation("AXIL_AR_STABLE", MASTER, where, {"AR changed while ARVALID waited for ARREADY:",
                               `NIC_DIFF("ARADDR", (ar_held[ADDR_W+2:3]), (araddr)),
                               `NIC_DIFF("ARPROT", (ar_held[2:0]), (arprot))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (b_drop) violation("AXIL_B_STABLE", SLAVE, where, "BVALID fell before BREADY", cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (b_wait) if (bvalid && bresp != b_held) violation("AXIL_B_STABLE", SLAVE, where, {"B changed while BVALID waited for BREADY:",
                              `NIC_DIFF("BRESP", (b_held), (bresp))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (r_drop) violation("AXIL_R_STABLE", SLAVE, where, "RVALID fell before RREADY", cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (r_wait) if (rvalid && {rdata, rresp} != r_held) violation("AXIL_R_STABLE", SLAVE, where, {"R changed while RVALID waited for RREADY:",
                              `NIC_DIFF("RDATA", (r_held[DATA_W+1:2]), (rdata)),
                              `NIC_DIFF("RRESP", (r_held[1:0]), (rresp))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (bvalid && !b_wait && (aw_n_q == b_n_q || w_n_q == b_n_q))
        violation("AXIL_B_UNEXPECTED", SLAVE, where, $sformatf("BVALID with no write left to answer (%0d AW, %0d W, %0d B handshakes since reset)",
                  aw_n_q, w_n_q, b_n_q), cycle, now_ns(), now_ns(), GROUP);
      if (rvalid && !r_wait && ar_n_q == r_n_q)
        violation("AXIL_R_UNEXPECTED", SLAVE, where, $sformatf("RVALID with no read left to answer (%0d AR, %0d R handshakes since reset)",
                  ar_n_q, r_n_q), cycle, now_ns(), now_ns(), GROUP);
    end
  end

`ifndef VERILATOR
  always_ff @(posedge clk) begin
    if (!rst && $isunknown({awvalid, awready, wvalid, wready, bvalid, bready, arvalid, arready, rvalid, rready}))
      violation("AXIL_X", "master or slave", where, "X or Z on a VALID/READY", cycle, now_ns(), now_ns(), GROUP);
  end
`endif
endmodule
