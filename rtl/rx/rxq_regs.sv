// RX queue registers: the storage of RXQ[] (nic_csr.rdl regfile rxq_t; docs/registers.md),
// behind the CSR block's external-block port, and the per-queue settings the RX path uses.
//
// The register block (peakrdl-regblock) hands every access inside RXQ_BLOCK (RXQ[q] at
// q * 0x100) to this module (csr_req, byte address csr_addr in the block). The storage
// and the access rules are rtl/common/queue_regs.sv's, shared with TX; this module names the
// RX fields.
//
// Fields (byte offsets; must match rxq_t in nic_csr.rdl, checked by tests/rtl/test_csr.py):
//   0x00 CTRL       enable[0], split_en[1], pay_mpb[2]
//   0x04 HDS_THRESH bytes[15:0]
//   0x08 BUF_SIZE   hdr_buf_bytes[15:0] (reset 256), pay_buf_log2[19:16] (reset 12),
//                   pay_stride_log2[23:20] (reset 6)
//   0x14 COALESCE   usecs[15:0] (reset 0), frames[23:16] (reset 1), frames_max[31:24]
//                   (read-only: CPL_BATCH)
//   0x20, 0x40, 0x60: HDR_RING, PAY_RING, CQ
// IRQ, STATUS, the rings, timing and reset are queue_regs's (see its header).
module rxq_regs #(
  parameter int unsigned NUM_RXQ = 8,
  parameter int unsigned MAP_Q   = 8,
  parameter int unsigned CPL_BATCH = 16,   // COALESCE.frames_max
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
  input  logic [NUM_RXQ-1:0][15:0]  hdr_hw_idx,
  input  logic [NUM_RXQ-1:0][15:0]  pay_hw_idx,
  input  logic [NUM_RXQ-1:0][15:0]  cq_hw_idx,
  input  logic [NUM_RXQ-1:0]        busy,
  input  logic [NUM_RXQ-1:0]        wr_err_set,
  input  logic [NUM_RXQ-1:0]        irq_fire,
  // settings
  output logic [NUM_RXQ-1:0]        enable,
  output logic [NUM_RXQ-1:0]        split_en,
  output logic [NUM_RXQ-1:0]        pay_mpb,
  output logic [NUM_RXQ-1:0][3:0]   pay_stride_log2,
  output logic [NUM_RXQ-1:0][15:0]  coal_usecs,
  output logic [NUM_RXQ-1:0][7:0]   coal_frames,
  output logic [NUM_RXQ-1:0]        irq_arm,
  output logic [NUM_RXQ-1:0][15:0]  hds_thresh,
  output logic [NUM_RXQ-1:0][15:0]  hdr_buf_bytes,
  output logic [NUM_RXQ-1:0][3:0]   pay_buf_log2,
  output logic [NUM_RXQ-1:0][63:0]  hdr_ring_base,
  output logic [NUM_RXQ-1:0][3:0]   hdr_ring_log2,
  output logic [NUM_RXQ-1:0][15:0]  hdr_sw_idx,
  output logic [NUM_RXQ-1:0][63:0]  pay_ring_base,
  output logic [NUM_RXQ-1:0][3:0]   pay_ring_log2,
  output logic [NUM_RXQ-1:0][15:0]  pay_sw_idx,
  output logic [NUM_RXQ-1:0][63:0]  cq_base,
  output logic [NUM_RXQ-1:0][3:0]   cq_log2,
  output logic [NUM_RXQ-1:0][15:0]  cq_sw_idx
);
  // CTRL: enable[0], split_en[1]; HDS_THRESH (0x04): bytes[15:0];
  // BUF_SIZE (0x08): hdr_buf_bytes[15:0] (reset 256), pay_buf_log2[19:16] (reset 12).
  localparam logic [31:0] BUF_SIZE_RESET = {8'd0, 4'd6, 4'd12, 16'd256};
  // COALESCE (0x14): usecs[15:0] (reset 0), frames[23:16] (reset 1), frames_max[31:24] read-only.
  localparam logic [31:0] COALESCE_RESET = {8'd0, 8'd1, 16'd0};

  initial begin
    if (CPL_BATCH < 1 || CPL_BATCH > 255) $fatal(1, "rxq_regs: CPL_BATCH must be 1..255");
  end

  logic [NUM_RXQ-1:0][31:0] ctrl, hds_word, buf_word, coal_word;
  logic [2:0][NUM_RXQ-1:0][63:0] ring_base;
  logic [2:0][NUM_RXQ-1:0][3:0]  ring_log2;
  logic [2:0][NUM_RXQ-1:0][15:0] ring_sw_idx;

  queue_regs #(
    .NUM_Q     (NUM_RXQ),
    .MAP_Q     (MAP_Q),
    .NUM_RINGS (3),                    // 0x20 HDR_RING, 0x40 PAY_RING, 0x60 CQ
    .CTRL_MASK (32'h0000_0007),
    .W1_MASK   (32'h0000_FFFF),
    .W2_MASK   (32'h00FF_FFFF),
    .W2_RESET  (BUF_SIZE_RESET),
    .W5_MASK   (32'h00FF_FFFF),
    .W5_RESET  (COALESCE_RESET),
    .W5_RO     (32'hFF00_0000),
    .W5_RO_VALUE ({8'(CPL_BATCH), 24'd0})
  ) u_regs (
    .clk,
    .rst,
    .csr_req, .csr_addr, .csr_req_is_wr, .csr_wr_data, .csr_wr_biten,
    .csr_rd_ack, .csr_wr_ack, .csr_rd_data,
    .hw_idx      ({cq_hw_idx, pay_hw_idx, hdr_hw_idx}),
    .busy,
    .halted      ('0),
    .wr_err_set,
    .irq_fire,
    .ctrl,
    .word1       (hds_word),
    .word2       (buf_word),
    .word5       (coal_word),
    .irq_arm,
    .ring_base,
    .ring_log2,
    .ring_sw_idx
  );

  for (genvar q = 0; q < NUM_RXQ; q++) begin : g_q
    assign enable[q]        = ctrl[q][0];
    assign split_en[q]      = ctrl[q][1];
    assign pay_mpb[q]       = ctrl[q][2];
    assign pay_stride_log2[q] = buf_word[q][23:20];
    assign coal_usecs[q]    = coal_word[q][15:0];
    assign coal_frames[q]   = coal_word[q][23:16];
    assign hds_thresh[q]    = hds_word[q][15:0];
    assign hdr_buf_bytes[q] = buf_word[q][15:0];
    assign pay_buf_log2[q]  = buf_word[q][19:16];
  end

  assign hdr_ring_base = ring_base[0];
  assign hdr_ring_log2 = ring_log2[0];
  assign hdr_sw_idx    = ring_sw_idx[0];
  assign pay_ring_base = ring_base[1];
  assign pay_ring_log2 = ring_log2[1];
  assign pay_sw_idx    = ring_sw_idx[1];
  assign cq_base       = ring_base[2];
  assign cq_log2       = ring_log2[2];
  assign cq_sw_idx     = ring_sw_idx[2];

  // Bits outside the fields are held at zero by queue_regs.
  logic unused;
  assign unused = ^{ctrl, hds_word, buf_word, coal_word};

endmodule
