// TX queue registers: the storage of TXQ[] (nic_csr.rdl regfile txq_t; docs/registers.md),
// behind the CSR block's external-block port, and the per-queue settings the TX path uses.
// Same scheme as rtl/rx/rxq_regs.sv: the register block hands every access inside TXQ_BLOCK
// (TXQ[t] at t * 0x100) here (csr_req, byte address csr_addr in the block); the storage and
// the access rules are rtl/common/queue_regs.sv's, this module names the TX fields.
//
// Fields (byte offsets; must match txq_t in nic_csr.rdl, checked by tests/rtl/test_csr.py):
//   0x00 CTRL enable[0], inline_en[1]; STATUS halted[2] from the TX path; nothing at 0x04 and 0x08; 0x14 COALESCE usecs[15:0], frames[23:16],
//   frames_max[31:24] (read-only, TX_COAL_MAX)
//   0x20, 0x40: DESC_RING, CQ
// IRQ, STATUS, the rings, timing and reset are queue_regs's (see its header).
module txq_regs
  import nic_dma_pkg::*;
#(
  parameter int unsigned NUM_TXQ = 4,
  parameter int unsigned MAP_Q   = 8,
  localparam int unsigned QAW    = (MAP_Q > 1 ? $clog2(MAP_Q) : 1) + 8
) (
  input  logic                      clk,
  input  logic                      rst,
  // CSR external block (all queues): one request, its byte address in the block
  input  logic                      csr_req,
  input  logic [QAW-1:0]            csr_addr,     // queue csr_addr[QAW-1:8], byte offset csr_addr[7:0]
  input  logic                      csr_req_is_wr,
  input  logic [31:0]               csr_wr_data,
  input  logic [31:0]               csr_wr_biten,
  output logic                      csr_rd_ack,
  output logic                      csr_wr_ack,
  output logic [31:0]               csr_rd_data,
  // hardware state shown in the registers
  input  logic [NUM_TXQ-1:0][15:0]  desc_hw_idx,
  input  logic [NUM_TXQ-1:0][15:0]  cq_hw_idx,
  input  logic [NUM_TXQ-1:0]        busy,
  input  logic [NUM_TXQ-1:0]        halted,
  input  logic [NUM_TXQ-1:0]        wr_err_set,
  input  logic [NUM_TXQ-1:0]        irq_fire,
  // settings
  output logic [NUM_TXQ-1:0]        enable,
  output logic [NUM_TXQ-1:0]        inline_en,
  output logic [NUM_TXQ-1:0][15:0]  coal_usecs,
  output logic [NUM_TXQ-1:0][7:0]   coal_frames,
  output logic [NUM_TXQ-1:0]        irq_arm,
  output logic [NUM_TXQ-1:0][63:0]  ring_base,
  output logic [NUM_TXQ-1:0][3:0]   ring_log2,
  output logic [NUM_TXQ-1:0][15:0]  sw_idx,
  output logic [NUM_TXQ-1:0][63:0]  cq_base,
  output logic [NUM_TXQ-1:0][3:0]   cq_log2,
  output logic [NUM_TXQ-1:0][15:0]  cq_sw_idx
);
  logic [NUM_TXQ-1:0][31:0]      ctrl, word1, word2, word5;
  logic [1:0][NUM_TXQ-1:0][63:0] rbase;
  logic [1:0][NUM_TXQ-1:0][3:0]  rlog2;
  logic [1:0][NUM_TXQ-1:0][15:0] rsw;

  queue_regs #(
    .NUM_Q     (NUM_TXQ),
    .MAP_Q     (MAP_Q),
    .NUM_RINGS (2),                    // 0x20 DESC_RING, 0x40 CQ
    .CTRL_MASK (32'h0000_0003),        // enable, inline_en
    .W5_MASK   (32'h00FF_FFFF),        // COALESCE usecs, frames (reset 1) ...
    .W5_RESET  (32'h0001_0000),
    .W5_RO     (32'hFF00_0000),        // ... and frames_max
    .W5_RO_VALUE (32'(TX_COAL_MAX) << 24)
  ) u_regs (
    .clk,
    .rst,
    .csr_req, .csr_addr, .csr_req_is_wr, .csr_wr_data, .csr_wr_biten,
    .csr_rd_ack, .csr_wr_ack, .csr_rd_data,
    .hw_idx      ({cq_hw_idx, desc_hw_idx}),
    .busy,
    .halted,
    .wr_err_set,
    .irq_fire,
    .ctrl,
    .word1,
    .word2,
    .word5,
    .irq_arm,
    .ring_base   (rbase),
    .ring_log2   (rlog2),
    .ring_sw_idx (rsw)
  );

  for (genvar t = 0; t < NUM_TXQ; t++) begin : g_q
    assign enable[t]      = ctrl[t][0];
    assign inline_en[t]   = ctrl[t][1];
    assign coal_usecs[t]  = word5[t][15:0];
    assign coal_frames[t] = word5[t][23:16];
  end

  assign ring_base = rbase[0];
  assign ring_log2 = rlog2[0];
  assign sw_idx    = rsw[0];
  assign cq_base   = rbase[1];
  assign cq_log2   = rlog2[1];
  assign cq_sw_idx = rsw[1];

  // Bits outside the fields (and the unused words 0x04, 0x08) are held at zero by queue_regs.
  logic unused;
  assign unused = ^{ctrl, word1, word2};

endmodule
