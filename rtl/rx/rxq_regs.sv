// RX queue registers: the storage of RXQ[] (nic_csr.rdl regfile rxq_t; docs/registers.md),
// behind the CSR block's external-region port, and the per-queue settings the RX path uses.
//
// The register block (peakrdl-regblock) decodes the address and hands every access inside
// RXQ[q] to this module (csr_req[q], register word csr_word in the queue's block). Settings are
// held as plain per-queue registers; an access costs one indexed update, and a cycle without
// an access costs only the hardware updates below (in silicon and in the simulator).
//
// Layout (byte offsets; must match rxq_t in nic_csr.rdl, checked by tests/rtl/test_csr.py
// through the generated driver/regs.py):
//   0x00 CTRL       enable[0], split_en[1]
//   0x04 HDS_THRESH bytes[15:0]
//   0x08 BUF_SIZE   hdr_buf_bytes[15:0] (reset 256), pay_buf_log2[19:16] (reset 12)
//   0x0C IRQ        arm[0]: software writes it; the hardware clears it when irq_fire[q]
//                   (a software write in the same cycle wins)
//   0x10 STATUS     dma_wr_err[0]: set by wr_err_set[q], write 1 to clear (a set in the same
//                   cycle as a clear wins: no error is lost); busy[1] = busy[HW'(q)] (read-only)
//   0x20, 0x40, 0x60: HDR_RING, PAY_RING, CQ (ring_t: BASE_LO, BASE_HI, SIZE, SW_IDX, HW_IDX)
// Other offsets read as zero and ignore writes. The register map has MAP_Q queues; only the
// first NUM_RXQ exist in hardware: the others' registers hold what is written and do nothing,
// and their HW_IDX and STATUS.busy read zero.
//
// Timing: an access is answered in the cycle of its request (rd/wr ack on the requested
// queue's bit, csr_rd_data with it), as the generated block answers its own registers; a
// write takes effect at that clock edge.
// Reset: synchronous, active high; every register to its RDL reset value.
module rxq_regs
  import nic_pkg::*;
#(
  parameter int unsigned NUM_RXQ = 8,
  parameter int unsigned MAP_Q   = 8,
  localparam int unsigned QW     = MAP_Q > 1 ? $clog2(MAP_Q) : 1,
  localparam int unsigned HW     = NUM_RXQ > 1 ? $clog2(NUM_RXQ) : 1     // index width of the hardware queues
) (
  input  logic                      clk,
  input  logic                      rst,
  // CSR external region: one request line per queue, the rest shared
  input  logic [MAP_Q-1:0]          csr_req,
  input  logic [4:0]                csr_word,     // register word in the queue's block (byte offset / 4)
  input  logic                      csr_req_is_wr,
  input  logic [31:0]               csr_wr_data,
  input  logic [31:0]               csr_wr_biten,
  output logic [MAP_Q-1:0]          csr_rd_ack,
  output logic [MAP_Q-1:0]          csr_wr_ack,
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
  initial begin
    if (NUM_RXQ < 1 || NUM_RXQ > MAP_Q) $fatal(1, "rxq_regs: NUM_RXQ must be 1..MAP_Q");
  end

  localparam logic [15:0] HDR_BUF_RESET = 16'd256;
  localparam logic [3:0]  PAY_LOG2_RESET = 4'd12;

  logic [MAP_Q-1:0]       en_q, split_q, arm_q, err_q;
  logic [MAP_Q-1:0][15:0] hds_q, hdrb_q;
  logic [MAP_Q-1:0][3:0]  payl_q;

  // The requested queue (csr_req is one-hot: the block decodes one region at a time).
  function automatic logic [QW-1:0] req_queue(input logic [MAP_Q-1:0] req);
    return QW'(onehot_index(256'(req)));
  endfunction

  // ---------------------------------------------------------------- rings
  logic [MAP_Q-1:0][63:0] ring_base [3];
  logic [MAP_Q-1:0][3:0]  ring_log2 [3];
  logic [MAP_Q-1:0][15:0] ring_sw   [3];
  logic                   wr;

  assign wr = (|csr_req) && csr_req_is_wr;

  for (genvar r = 0; r < 3; r++) begin : g_ring      // 0x20 HDR_RING, 0x40 PAY_RING, 0x60 CQ
    ring_regs #(.NUM_Q(MAP_Q)) u_ring (
      .clk,
      .rst,
      .wr_req       ((wr && csr_word[4:3] == 2'(r + 1)) ? csr_req : '0),
      .wr_word      (csr_word[2:0]),
      .wr_data      (csr_wr_data),
      .wr_biten     (csr_wr_biten),
      .base         (ring_base[r]),
      .log2_entries (ring_log2[r]),
      .sw_idx       (ring_sw[r])
    );
  end

  // HW_IDX of ring r of queue q (zero for queues the hardware does not have).
  function automatic logic [15:0] hw_idx_of(input logic [QW-1:0] q, input logic [1:0] r);
    if (32'(q) >= NUM_RXQ) return 16'd0;
    unique case (r)
      2'd0:    return hdr_hw_idx[HW'(q)];
      2'd1:    return pay_hw_idx[HW'(q)];
      default: return cq_hw_idx[HW'(q)];
    endcase
  endfunction

  // Register at byte offset `a` of queue q as software reads it.
  function automatic logic [31:0] queue_word(input logic [QW-1:0] q, input logic [4:0] a);
    logic [31:0] v;
    logic [1:0]  r;
    v = '0;
    if (a[4:3] == 2'd0) begin
      unique case (a[2:0])
        3'd0:    v = {30'd0, split_q[q], en_q[q]};
        3'd1:    v = {16'd0, hds_q[q]};
        3'd2:    v = {12'd0, payl_q[q], hdrb_q[q]};
        3'd3:    v = {31'd0, arm_q[q]};
        3'd4:    v = {30'd0, (32'(q) < NUM_RXQ) ? busy[HW'(q)] : 1'b0, err_q[q]};
        default: v = '0;
      endcase
    end else begin
      r = a[4:3] - 2'd1;
      v = ring_reg_word(ring_base[r][q][63:4], ring_log2[r][q], ring_sw[r][q], hw_idx_of(q, r), a[2:0]);
    end
    return v;
  endfunction

  // ---------------------------------------------------------------- queue registers
  always_ff @(posedge clk) begin
    if (rst) begin
      en_q    <= '0;
      split_q <= '0;
      arm_q   <= '0;
      err_q   <= '0;
      hds_q   <= '0;
      hdrb_q  <= {MAP_Q{HDR_BUF_RESET}};
      payl_q  <= {MAP_Q{PAY_LOG2_RESET}};
    end else begin
      automatic logic [MAP_Q-1:0] err_n = err_q;
      // hardware clear of IRQ.arm (a software write below, later in this block, wins)
      arm_q[NUM_RXQ-1:0] <= arm_q[NUM_RXQ-1:0] & ~irq_fire;
      if (wr && csr_word[4:3] == 2'd0) begin
        automatic logic [QW-1:0] wq = req_queue(csr_req);
        automatic logic [19:0] v = 20'((queue_word(wq, csr_word) & ~csr_wr_biten) | (csr_wr_data & csr_wr_biten));
        unique case (csr_word[2:0])
          3'd0: {split_q[wq], en_q[wq]} <= v[1:0];
          3'd1: hds_q[wq] <= v[15:0];
          3'd2: {payl_q[wq], hdrb_q[wq]} <= v[19:0];
          3'd3: arm_q[wq] <= v[0];
          3'd4: err_n[wq] = err_q[wq] & ~(csr_wr_data[0] & csr_wr_biten[0]);   // write 1 to clear
          default: ;
        endcase
      end
      err_n[NUM_RXQ-1:0] = err_n[NUM_RXQ-1:0] | wr_err_set;                      // set wins
      err_q <= err_n;
    end
  end

  // ---------------------------------------------------------------- answers (same cycle)
  assign csr_wr_ack = csr_req_is_wr ? csr_req : '0;
  assign csr_rd_ack = csr_req_is_wr ? '0 : csr_req;

  always_comb begin
    csr_rd_data = '0;
    if ((|csr_req) && !csr_req_is_wr) csr_rd_data = queue_word(req_queue(csr_req), csr_word);
  end

  // ---------------------------------------------------------------- settings
  assign enable        = en_q[NUM_RXQ-1:0];
  assign split_en      = split_q[NUM_RXQ-1:0];
  assign irq_arm       = arm_q[NUM_RXQ-1:0];
  assign hds_thresh    = hds_q[NUM_RXQ-1:0];
  assign hdr_buf_bytes = hdrb_q[NUM_RXQ-1:0];
  assign pay_buf_log2  = payl_q[NUM_RXQ-1:0];
  assign hdr_ring_base = ring_base[0][NUM_RXQ-1:0];
  assign hdr_ring_log2 = ring_log2[0][NUM_RXQ-1:0];
  assign hdr_sw_idx    = ring_sw[0][NUM_RXQ-1:0];
  assign pay_ring_base = ring_base[1][NUM_RXQ-1:0];
  assign pay_ring_log2 = ring_log2[1][NUM_RXQ-1:0];
  assign pay_sw_idx    = ring_sw[1][NUM_RXQ-1:0];
  assign cq_base       = ring_base[2][NUM_RXQ-1:0];
  assign cq_log2       = ring_log2[2][NUM_RXQ-1:0];
  assign cq_sw_idx     = ring_sw[2][NUM_RXQ-1:0];

endmodule
