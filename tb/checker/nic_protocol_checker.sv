// The protocol checker of nic_top's four ports (testbench code, tb/checker/; docs/verification.md):
// tb/checker/nic_checker_bind.sv binds one into every nic_top (its ports have nic_top's port
// names, so the bind connects them with .*), in every simulation tb/sim.py builds of nic_top
// or of the fast harness; `+define+NO_AXI_CHECKER` leaves it out (speed measurements only).
//
//   m_axi     AXI4, the NIC is the master (axi4_checker: AXI4_* rules)
//   s_axil    AXI4-Lite, the NIC is the slave (axil_checker: AXIL_*)
//   s_axis_rx AXI-Stream into the NIC: checks the testbench's MAC source (AXIS_RX_*), against
//             the NIC's documented input contract (tkeep all ones but on the last beat)
//   m_axis_tx AXI-Stream out of the NIC (AXIS_TX_*): docs/tx.md's contract; packets at most
//             TX_FIFO_BYTES (store and forward)
// and the NIC's own port contracts, which are not AXI rules (NIC_*):
//   NIC_RX_TREADY      s_axis_rx_tready is high whenever the NIC is out of reset (architecture.md)
//   NIC_R_TXDESC_READY R beats of TX descriptor reads (RID TX_DESC_ID + t) are never back-pressured
//                      (tx.md; TX segment data, RID 24, may wait a cycle for an inline header)
//   NIC_AX_INCR_FULL   every AR and AW is an INCR burst of full-width beats (architecture.md)
//   NIC_W_STRB_EMPTY   every W beat writes at least one byte (axi_dma_wr: exact strobes)
//
// Checking starts at the first reset: before it, the testbench may not drive anything yet.
// At the end of the run (`final`) it prints how many handshakes it checked and appends a
// summary line to the report file (+nic_checker_report=FILE; tb/sim.py reads both).
module nic_protocol_checker
  import nic_checker_pkg::*;
#(
  parameter int unsigned DATA_W        = 64,
  parameter int unsigned DMA_DATA_W    = 2 * DATA_W,
  parameter int unsigned ADDR_W        = 64,
  parameter int unsigned ID_W          = 5,
  parameter int unsigned MAX_BURST     = 256,
  parameter int unsigned TX_FIFO_BYTES = 16384,
  parameter int unsigned NUM_TXQ       = 4,
  parameter int unsigned TX_DESC_ID    = 16,
  parameter bit          NIC_RULES     = 1      // 0: AXI rules only (the checker's own tests of them)
) (
  input logic                    clk,
  input logic                    rst,
  input logic [DATA_W-1:0]       s_axis_rx_tdata,
  input logic [DATA_W/8-1:0]     s_axis_rx_tkeep,
  input logic                    s_axis_rx_tvalid,
  input logic                    s_axis_rx_tready,
  input logic                    s_axis_rx_tlast,
  input logic                    s_axis_rx_tuser,
  input logic [DATA_W-1:0]       m_axis_tx_tdata,
  input logic [DATA_W/8-1:0]     m_axis_tx_tkeep,
  input logic                    m_axis_tx_tvalid,
  input logic                    m_axis_tx_tready,
  input logic                    m_axis_tx_tlast,
  input logic                    s_axil_awvalid,
  input logic                    s_axil_awready,
  input logic [15:0]             s_axil_awaddr,
  input logic [2:0]              s_axil_awprot,
  input logic                    s_axil_wvalid,
  input logic                    s_axil_wready,
  input logic [31:0]             s_axil_wdata,
  input logic [3:0]              s_axil_wstrb,
  input logic                    s_axil_bvalid,
  input logic                    s_axil_bready,
  input logic [1:0]              s_axil_bresp,
  input logic                    s_axil_arvalid,
  input logic                    s_axil_arready,
  input logic [15:0]             s_axil_araddr,
  input logic [2:0]              s_axil_arprot,
  input logic                    s_axil_rvalid,
  input logic                    s_axil_rready,
  input logic [31:0]             s_axil_rdata,
  input logic [1:0]              s_axil_rresp,
  input logic [ID_W-1:0]         m_axi_awid,
  input logic [ADDR_W-1:0]       m_axi_awaddr,
  input logic [7:0]              m_axi_awlen,
  input logic [2:0]              m_axi_awsize,
  input logic [1:0]              m_axi_awburst,
  input logic                    m_axi_awlock,
  input logic [3:0]              m_axi_awcache,
  input logic [2:0]              m_axi_awprot,
  input logic                    m_axi_awvalid,
  input logic                    m_axi_awready,
  input logic [DMA_DATA_W-1:0]   m_axi_wdata,
  input logic [DMA_DATA_W/8-1:0] m_axi_wstrb,
  input logic                    m_axi_wlast,
  input logic                    m_axi_wvalid,
  input logic                    m_axi_wready,
  input logic [ID_W-1:0]         m_axi_bid,
  input logic [1:0]              m_axi_bresp,
  input logic                    m_axi_bvalid,
  input logic                    m_axi_bready,
  input logic [ID_W-1:0]         m_axi_arid,
  input logic [ADDR_W-1:0]       m_axi_araddr,
  input logic [7:0]              m_axi_arlen,
  input logic [2:0]              m_axi_arsize,
  input logic [1:0]              m_axi_arburst,
  input logic                    m_axi_arlock,
  input logic [3:0]              m_axi_arcache,
  input logic [2:0]              m_axi_arprot,
  input logic                    m_axi_arvalid,
  input logic                    m_axi_arready,
  input logic [ID_W-1:0]         m_axi_rid,
  input logic [DMA_DATA_W-1:0]   m_axi_rdata,
  input logic [1:0]              m_axi_rresp,
  input logic                    m_axi_rlast,
  input logic                    m_axi_rvalid,
  input logic                    m_axi_rready
);
  /* verilator tracing_off */
  /* verilator coverage_off */
  localparam string NIC = "NIC";
  localparam int unsigned LB = $clog2(DMA_DATA_W / 8);

  // ------------------------------------------------------------------ time, reset
  longint unsigned cycle;             // rising edges since time 0
  longint unsigned last_ns, period_ns;
  logic seen_rst;                     // a reset has been seen: checking is on
  logic rst_q, rst_qq;
  initial begin
    cycle = 0; last_ns = 0; period_ns = 0; seen_rst = 1'b0; rst_q = 1'b0; rst_qq = 1'b0;
  end
  logic chk_rst, after_rst;
  assign chk_rst   = rst || !seen_rst;
  // In reset for two edges: a synchronous reset has cleared the VALIDs by then, even when the
  // simulator counts an edge at time 0 (Verilator with --x-initial unique can).
  assign after_rst = rst_q && rst_qq;
  always_ff @(posedge clk) begin
    cycle <= cycle + 1;
    if (cycle < 3) begin            // the clock period, from the first edges
      period_ns <= now_ns() - last_ns;
      last_ns   <= now_ns();
    end
    rst_q  <= rst;
    rst_qq <= rst_q;
    if (rst) seen_rst <= 1'b1;
  end

  // ------------------------------------------------------------------ the four ports
  longint unsigned n_ar, n_aw, n_w, n_r, n_b, n_wr, n_rd, n_rx_beats, n_rx_frames, n_tx_beats, n_tx_frames;

  axi4_checker #(
    .DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .MAX_BURST(MAX_BURST),
    .MASTER("NIC (DMA master m_axi)"), .SLAVE("testbench (memory slave on m_axi)"), .GROUP("dma")
  ) u_m_axi (
    .clk, .rst(chk_rst), .after_rst, .cycle, .period_ns,
    .arid(m_axi_arid), .araddr(m_axi_araddr), .arlen(m_axi_arlen), .arsize(m_axi_arsize), .arburst(m_axi_arburst),
    .arlock(m_axi_arlock), .arcache(m_axi_arcache), .arprot(m_axi_arprot), .arvalid(m_axi_arvalid), .arready(m_axi_arready),
    .rid(m_axi_rid), .rdata(m_axi_rdata), .rresp(m_axi_rresp), .rlast(m_axi_rlast), .rvalid(m_axi_rvalid),
    .rready(m_axi_rready),
    .awid(m_axi_awid), .awaddr(m_axi_awaddr), .awlen(m_axi_awlen), .awsize(m_axi_awsize), .awburst(m_axi_awburst),
    .awlock(m_axi_awlock), .awcache(m_axi_awcache), .awprot(m_axi_awprot), .awvalid(m_axi_awvalid), .awready(m_axi_awready),
    .wdata(m_axi_wdata), .wstrb(m_axi_wstrb), .wlast(m_axi_wlast), .wvalid(m_axi_wvalid), .wready(m_axi_wready),
    .bid(m_axi_bid), .bresp(m_axi_bresp), .bvalid(m_axi_bvalid), .bready(m_axi_bready),
    .n_ar, .n_aw, .n_w, .n_r, .n_b
  );

  axil_checker #(
    .ADDR_W(16), .DATA_W(32), .MASTER("testbench (CSR master on s_axil)"), .SLAVE("NIC (CSR slave s_axil)"), .GROUP("csr")
  ) u_s_axil (
    .clk, .rst(chk_rst), .after_rst, .cycle, .period_ns,
    .awaddr(s_axil_awaddr), .awprot(s_axil_awprot), .awvalid(s_axil_awvalid), .awready(s_axil_awready),
    .wdata(s_axil_wdata), .wstrb(s_axil_wstrb), .wvalid(s_axil_wvalid), .wready(s_axil_wready),
    .bresp(s_axil_bresp), .bvalid(s_axil_bvalid), .bready(s_axil_bready),
    .araddr(s_axil_araddr), .arprot(s_axil_arprot), .arvalid(s_axil_arvalid), .arready(s_axil_arready),
    .rdata(s_axil_rdata), .rresp(s_axil_rresp), .rvalid(s_axil_rvalid), .rready(s_axil_rready),
    .n_wr, .n_rd
  );

  axis_checker #(
    .DATA_W(DATA_W), .USER_W(1), .MAX_FRAME_BYTES(0), .PREFIX("AXIS_RX"), .SOURCE("testbench (MAC source on s_axis_rx)"),
    .GROUP("rx")
  ) u_s_axis_rx (
    .clk, .rst(chk_rst), .after_rst, .cycle, .period_ns,
    .tdata(s_axis_rx_tdata), .tkeep(s_axis_rx_tkeep), .tlast(s_axis_rx_tlast), .tuser(s_axis_rx_tuser),
    .tvalid(s_axis_rx_tvalid), .tready(s_axis_rx_tready), .n_beats(n_rx_beats), .n_frames(n_rx_frames)
  );

  axis_checker #(
    .DATA_W(DATA_W), .USER_W(1), .MAX_FRAME_BYTES(TX_FIFO_BYTES), .PREFIX("AXIS_TX"), .SOURCE("NIC (TX source m_axis_tx)"),
    .GROUP("tx")
  ) u_m_axis_tx (
    .clk, .rst(chk_rst), .after_rst, .cycle, .period_ns,
    .tdata(m_axis_tx_tdata), .tkeep(m_axis_tx_tkeep), .tlast(m_axis_tx_tlast), .tuser(1'b0),
    .tvalid(m_axis_tx_tvalid), .tready(m_axis_tx_tready), .n_beats(n_tx_beats), .n_frames(n_tx_frames)
  );

  // ------------------------------------------------------------------ the NIC's port contracts
  string where;
  initial where = $sformatf("%m");

  if (NIC_RULES) begin : g_nic_rules
    always_ff @(posedge clk) begin
      if (!chk_rst) begin
        if (!s_axis_rx_tready)
          violation("NIC_RX_TREADY", NIC, where, "s_axis_rx_tready low out of reset (the RX port never back-pressures the MAC)",
                    cycle, now_ns(), now_ns(), "rx");
        if (m_axi_rvalid && 32'(m_axi_rid) >= TX_DESC_ID && 32'(m_axi_rid) < TX_DESC_ID + NUM_TXQ && !m_axi_rready)
          violation("NIC_R_TXDESC_READY", NIC, where, $sformatf("RREADY low for an R beat of a TX descriptor read (RID %0d)", m_axi_rid),
                    cycle, now_ns(), now_ns(), "dma");
        if (m_axi_arvalid && (m_axi_arburst != 2'b01 || 32'(m_axi_arsize) != LB))
          violation("NIC_AX_INCR_FULL", NIC, where, $sformatf("ARBURST %0d ARSIZE %0d (ARID %0d ARADDR 0x%0h): the NIC reads INCR bursts of %0d-byte beats",
                    m_axi_arburst, m_axi_arsize, m_axi_arid, m_axi_araddr, DMA_DATA_W / 8), cycle, now_ns(), now_ns(), "dma");
        if (m_axi_awvalid && (m_axi_awburst != 2'b01 || 32'(m_axi_awsize) != LB))
          violation("NIC_AX_INCR_FULL", NIC, where, $sformatf("AWBURST %0d AWSIZE %0d (AWID %0d AWADDR 0x%0h): the NIC writes INCR bursts of %0d-byte beats",
                    m_axi_awburst, m_axi_awsize, m_axi_awid, m_axi_awaddr, DMA_DATA_W / 8), cycle, now_ns(), now_ns(), "dma");
        if (m_axi_wvalid && m_axi_wready && m_axi_wstrb == '0)
          violation("NIC_W_STRB_EMPTY", NIC, where, "a W beat with WSTRB 0 (the NIC's strobes cover exactly the bytes it writes)",
                    cycle, now_ns(), now_ns(), "dma");
      end
    end
  end

  // ------------------------------------------------------------------ stopping the run
  // STOP_DELAY cycles after the first violation (nic_checker_pkg), or at the end of the run.
  int unsigned stop_wait;
  initial stop_wait = 0;
  always_ff @(posedge clk) begin
    if (stop_pending) begin
      if (stop_wait + 1 >= STOP_DELAY) $fatal(1, "nic_checker: %s", first_violation);
      stop_wait <= stop_wait + 1;
    end
  end

  // ------------------------------------------------------------------ start and end of the run
  initial begin
    $display("nic_checker: protocol checker on %m: AXI4 m_axi (%0d-bit data, ID_W %0d, MAX_BURST %0d), AXI4-Lite s_axil, AXI-Stream s_axis_rx and m_axis_tx (%0d-bit)",
             DMA_DATA_W, ID_W, MAX_BURST, DATA_W);
  end

  final begin
    string report;
    int fd;
    $display("nic_checker: %s: %0d cycles checked: m_axi %0d AR, %0d R, %0d AW, %0d W, %0d B; s_axil %0d writes, %0d reads; s_axis_rx %0d beats, %0d frames; m_axis_tx %0d beats, %0d frames; %0d violations",
             where, cycle, n_ar, n_r, n_aw, n_w, n_b, n_wr, n_rd, n_rx_beats, n_rx_frames, n_tx_beats, n_tx_frames, violations);
    if ($value$plusargs("nic_checker_report=%s", report)) begin
      fd = $fopen(report, "a");
      if (fd != 0) begin
        $fdisplay(fd, "{\"summary\": {\"instance\": \"%s\", \"cycles\": %0d, \"seen_reset\": %0d, \"ar\": %0d, \"r\": %0d, \"aw\": %0d, \"w\": %0d, \"b\": %0d, \"axil_writes\": %0d, \"axil_reads\": %0d, \"rx_beats\": %0d, \"rx_frames\": %0d, \"tx_beats\": %0d, \"tx_frames\": %0d, \"violations\": %0d}}",
                  where, cycle, seen_rst, n_ar, n_r, n_aw, n_w, n_b, n_wr, n_rd, n_rx_beats, n_rx_frames, n_tx_beats, n_tx_frames,
                  violations);
        $fclose(fd);
      end
    end
    if (stop_pending) $fatal(1, "nic_checker: %s", first_violation);
  end

  logic unused;
  assign unused = ^{s_axis_rx_tdata, m_axis_tx_tdata, s_axil_wdata, s_axil_rdata, m_axi_wdata, m_axi_rdata};
endmodule
