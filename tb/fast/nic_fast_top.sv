// Fast testbench harness around nic_top (testbench code: never part of rtl/).
//
// Everything that happens once per clock or once per beat is here, in the node
// (tb/fast/nic_fast_node.sv) or in compiled C (tb/fast/fastmem.cpp, through DPI), so Python
// only wakes up per transaction:
//   - the clock is an HDL clock (Verilator --timing), 4 ns like tb/nic_tb.py;
//   - the RX stream source plays back frames Python queued in bulk in the shared block, one
//     beat per cycle, with optional seeded idle cycles (drawn in C);
//   - the DMA target is an AXI4 slave whose storage is the shared block (host and device
//     memory as Python's HostMemory/DeviceMemory see them), with optional seeded stalls on
//     every channel (xorshift in HDL); its AWREADY ignores W or waits for the burst's write
//     data (`awready_mode`, TrafficProfile.awready);
//   - CSR accesses are commands Python queues; an HDL AXI4-Lite master runs them and toggles
//     csr_ack when one has finished;
//   - the TX stream sink appends every beat the NIC sends to a frame queue in the shared
//     block (compiled C), with optional seeded tready stalls (xorshift in HDL), and toggles
//     tx_done when a frame has ended; it holds tready low while that queue is full, so no
//     frame is lost when Python drains late.
// The node holds all of that but the clock (the cluster testbench, tb/cluster/, has N nodes
// on one clock). Python sees only the ports of this module (tb/fast/fast_public.vlt makes
// them, and nothing else, visible to VPI).
module nic_fast_top #(
  parameter int unsigned DATA_W      = 64,
  parameter int unsigned DMA_DATA_W  = 2 * DATA_W,
  parameter int unsigned NUM_RXQ     = 8,
  parameter int unsigned NUM_TXQ     = 4,
  parameter int unsigned PARSE_BYTES = 128,
  parameter int          STANDALONE  = 0      // 1: no Python, the C driver recycles buffers
) (
  input  logic        rst,
  input  int          fm_attach,      // (generation << 16) | memfd of the shared block
  input  logic [31:0] dma_stall_thr,  // stall probability per channel and cycle, * 2^32
  input  logic [31:0] tx_stall_thr,   // chance m_axis_tx_tready is low in a cycle, * 2^32
  input  logic [31:0] stall_seed,
  input  logic        r_interleave,   // 1: R beats of two bursts with different IDs alternate
  input  logic [1:0]  awready_mode,   // 0: AWREADY ignores W; 1: waits for the burst's first
                                      // W beat; 2: for its last (tb/axi_wr_slave.py AwReady)
  output logic        fm_attached,
  output logic        csr_ack,        // toggles when a CSR command has finished
  output logic        tx_done,        // toggles when the TX sink has taken a frame's last beat
  output logic        rx_busy,        // frames queued or a beat not yet taken
  output logic [63:0] cycles,         // clock cycles since time 0
  output logic [31:0] r_interleaved,  // R beats served ahead of an older burst (r_interleave)
  output logic [31:0] w_first_bursts  // AWs taken after their burst's first W beat was taken
);
  // ------------------------------------------------------------------ clock
  logic clk = 1'b0;
  initial forever #2 clk = ~clk;

  logic [63:0] cyc = '0;
  always_ff @(posedge clk) cyc <= cyc + 64'd1;
  assign cycles = cyc;

  // Reset of the NIC and of this harness: Python's rst (registered, so that no logic
  // depends combinationally on a top-level input: Verilator re-evaluates such logic on every
  // eval call), or the standalone start-up reset.
  logic sa_rst;
  logic rst_q = 1'b1;
  always_ff @(posedge clk) rst_q <= rst || sa_rst;

  import "DPI-C" function int fm_standalone_open();
  import "DPI-C" function int fm_standalone_poll(input longint cycle);

  nic_fast_node #(
    .DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .NUM_RXQ(NUM_RXQ), .NUM_TXQ(NUM_TXQ),
    .PARSE_BYTES(PARSE_BYTES), .INST(0), .MAC_PORTS(0)
  ) u_node (
    .clk, .rst_i(rst_q), .fm_attach, .dma_stall_thr, .tx_stall_thr, .stall_seed, .r_interleave,
    .awready_mode, .fm_attached, .csr_ack, .tx_done, .rx_busy, .r_interleaved, .w_first_bursts,
    .irq_any(),
    .mac_rx_tdata('0), .mac_rx_tkeep('0), .mac_rx_tvalid(1'b0), .mac_rx_tready(),
    .mac_rx_tlast(1'b0), .mac_rx_tuser(1'b0),
    .mac_tx_tdata(), .mac_tx_tkeep(), .mac_tx_tvalid(), .mac_tx_tready(1'b1), .mac_tx_tlast()
  );

  // ------------------------------------------------------------------ standalone driver
  if (STANDALONE != 0) begin : g_standalone
    // No Python: the C side maps the image named by $FASTMEM_IMAGE (CSR program, rings,
    // frames) and recycles buffers every 256 cycles; the run ends when all frames completed.
    logic sa_rst_q = 1'b1;
    assign sa_rst = sa_rst_q;
    initial begin
      if (fm_standalone_open() == 0) $fatal(1, "STANDALONE=1 needs FASTMEM_IMAGE");
      repeat (12) @(posedge clk);
      sa_rst_q = 1'b0;
    end
    always @(posedge clk) begin
      if (!sa_rst_q && cyc[7:0] == 8'd0) begin
        if (fm_standalone_poll(longint'(cyc)) != 0) $finish;
      end
    end
  end else begin : g_python
    assign sa_rst = 1'b0;
  end
endmodule
