// The cluster testbench (testbench code: never part of rtl/): N NICs, each with its own host
// and device (GPU) memory, cabled to the ports of one Ethernet switch, on one clock. Each NIC
// is a node of the fast harness (tb/fast/nic_fast_node.sv: nic_top, its DMA memory over its
// own shared block, its CSR master) with its MAC streams on ports; NIC p's TX stream is the
// switch's ingress p and the switch's egress p is NIC p's RX stream. The switch is
// tb/cluster/eth_switch.sv (rules: docs/cluster.md). Python (tb/cluster/cluster_tb.py) runs
// one reference driver per NIC and wakes per transaction, never per beat.
//
// Python-facing ports are vectors with one slice per node (node p in bits [p*w +: w]):
// fm_attach (32 bits: the node's shared-block token), fm_attached, csr_ack (toggles), and
// irq_count (8 bits: interrupts of the node's NIC so far, any RX or TX queue, wrapping). The
// forwarding table is written one entry at a time: set fwd_idx/mac/port/valid, then toggle
// fwd_seq; the entry is written 2 cycles later. The switch's buffer size, its seeded random
// drops (drop_thr / 2^32 per frame at each ingress) and its counters are ports too.
//
// Reset: Python's rst, registered, for every node and the switch (the table is kept).
module cluster_top #(
  parameter int unsigned N           = 4,
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned DMA_DATA_W  = 2 * DATA_W,
  parameter int unsigned NUM_RXQ     = 2,
  parameter int unsigned NUM_TXQ     = 2,
  parameter int unsigned SW_CELLS    = (1 << 20) / (DATA_W / 8),   // largest switch buffer per port
  parameter int unsigned MAX_FRAME   = 16384,
  parameter int unsigned IFG_BYTES   = 24
) (
  input  logic              rst,
  input  logic [32*N-1:0]   fm_attach,
  input  logic [31:0]       dma_stall_thr,
  input  logic [31:0]       stall_seed,
  input  logic              r_interleave,
  output logic [N-1:0]      fm_attached,
  output logic [N-1:0]      csr_ack,
  output logic [8*N-1:0]    irq_count,
  output logic [63:0]       cycles,
  // the switch
  input  logic [31:0]       sw_cap_cells,
  input  logic [31:0]       sw_drop_thr,
  input  logic [31:0]       sw_drop_seed,
  input  logic              fwd_seq,
  input  logic [7:0]        fwd_idx,
  input  logic [47:0]       fwd_mac,
  input  logic [7:0]        fwd_port,
  input  logic              fwd_valid,
  output logic [32*N-1:0]   sw_rx_frames,
  output logic [32*N-1:0]   sw_tx_frames,
  output logic [32*N-1:0]   sw_drops,
  output logic [32*N-1:0]   sw_drop_bytes,
  output logic [32*N-1:0]   sw_injected,
  output logic [32*N-1:0]   sw_no_route,
  output logic [32*N-1:0]   sw_hairpin,
  output logic [32*N-1:0]   sw_oversize,
  output logic [32*N-1:0]   sw_depth,
  output logic [32*N-1:0]   sw_depth_peak,
  output logic [31:0]       sw_window
);
  localparam int unsigned DB = DATA_W / 8;

  // ------------------------------------------------------------------ clock, reset
  logic clk = 1'b0;
  initial forever #2 clk = ~clk;

  logic [63:0] cyc = '0;
  always_ff @(posedge clk) cyc <= cyc + 64'd1;
  assign cycles = cyc;

  logic rst_q = 1'b1;
  always_ff @(posedge clk) rst_q <= rst;

  // ------------------------------------------------------------------ forwarding table writes
  logic fwd_seq_q = 1'b0, fwd_we = 1'b0;
  logic [7:0] fwd_idx_q, fwd_port_q;
  logic [47:0] fwd_mac_q;
  logic fwd_valid_q;
  always_ff @(posedge clk) begin
    fwd_seq_q <= fwd_seq;
    fwd_we <= fwd_seq != fwd_seq_q;
    fwd_idx_q <= fwd_idx;
    fwd_mac_q <= fwd_mac;
    fwd_port_q <= fwd_port;
    fwd_valid_q <= fwd_valid;
  end

  // ------------------------------------------------------------------ nodes
  logic [N*DATA_W-1:0] sw_s_tdata, sw_m_tdata;
  logic [N*DB-1:0]     sw_s_tkeep, sw_m_tkeep;
  logic [N-1:0]        sw_s_tvalid, sw_s_tready, sw_s_tlast, sw_m_tvalid, sw_m_tready, sw_m_tlast;

  for (genvar p = 0; p < N; p++) begin : g_node
    logic irq;
    logic [7:0] irq_n = '0;
    nic_fast_node #(
      .DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .NUM_RXQ(NUM_RXQ), .NUM_TXQ(NUM_TXQ),
      .INST(p), .MAC_PORTS(1)
    ) u_node (
      .clk, .rst_i(rst_q), .fm_attach(fm_attach[32 * p +: 32]), .dma_stall_thr, .tx_stall_thr(32'd0),
      .stall_seed(stall_seed ^ (32'h9e3779b9 * (p + 1))), .r_interleave,
      .awready_mode(2'd0),  // AWREADY independent of W (the single-NIC harness sweeps the others)
      .fm_attached(fm_attached[p]), .csr_ack(csr_ack[p]), .tx_done(), .rx_busy(), .r_interleaved(),
      .w_first_bursts(),
      .irq_any(irq),
      .mac_rx_tdata(sw_m_tdata[p * DATA_W +: DATA_W]), .mac_rx_tkeep(sw_m_tkeep[p * DB +: DB]),
      .mac_rx_tvalid(sw_m_tvalid[p]), .mac_rx_tready(sw_m_tready[p]), .mac_rx_tlast(sw_m_tlast[p]),
      .mac_rx_tuser(1'b0),
      .mac_tx_tdata(sw_s_tdata[p * DATA_W +: DATA_W]), .mac_tx_tkeep(sw_s_tkeep[p * DB +: DB]),
      .mac_tx_tvalid(sw_s_tvalid[p]), .mac_tx_tready(sw_s_tready[p]), .mac_tx_tlast(sw_s_tlast[p])
    );
    always_ff @(posedge clk) if (irq) irq_n <= irq_n + 8'd1;
    assign irq_count[8 * p +: 8] = irq_n;
  end

  // ------------------------------------------------------------------ the switch
  eth_switch #(
    .N(N), .DATA_W(DATA_W), .MAX_CELLS(SW_CELLS), .MAX_FRAME(MAX_FRAME), .IFG_BYTES(IFG_BYTES)
  ) u_switch (
    .clk, .rst(rst_q), .cap_cells(sw_cap_cells), .drop_thr(sw_drop_thr), .drop_seed(sw_drop_seed),
    .fwd_we, .fwd_idx(fwd_idx_q), .fwd_mac(fwd_mac_q), .fwd_port(fwd_port_q), .fwd_valid(fwd_valid_q),
    .s_tdata(sw_s_tdata), .s_tkeep(sw_s_tkeep), .s_tvalid(sw_s_tvalid), .s_tready(sw_s_tready),
    .s_tlast(sw_s_tlast),
    .m_tdata(sw_m_tdata), .m_tkeep(sw_m_tkeep), .m_tvalid(sw_m_tvalid), .m_tready(sw_m_tready),
    .m_tlast(sw_m_tlast),
    .rx_frames(sw_rx_frames), .tx_frames(sw_tx_frames), .drops(sw_drops), .drop_bytes(sw_drop_bytes),
    .injected(sw_injected), .no_route(sw_no_route), .hairpin(sw_hairpin), .oversize(sw_oversize),
    .depth(sw_depth), .depth_peak(sw_depth_peak), .window_idx(sw_window)
  );
endmodule
