// TX queue registers: the storage of TXQ[] (nic_csr.rdl regfile txq_t; docs/registers.md),
// behind the CSR block's external-region port, and the per-queue settings the TX path uses.
// Same scheme as rtl/rx/rxq_regs.sv: the register block decodes the address and hands every
// access inside TXQ[t] here (csr_req[t], register word csr_word in the queue's block); an access
// costs one indexed update, and a cycle without one costs only the hardware updates below.
//
// Layout (byte offsets; must match txq_t in nic_csr.rdl, checked by tests/rtl/test_csr.py
// through the generated driver/regs.py):
//   0x00 CTRL    enable[0]
//   0x0C IRQ     arm[0]: software writes it; the hardware clears it when irq_fire[t]
//                (a software write in the same cycle wins)
//   0x10 STATUS  dma_wr_err[0]: set by wr_err_set[t], write 1 to clear (a set in the same
//                cycle as a clear wins); busy[1] = busy[t] (read-only)
//   0x20, 0x40: DESC_RING, CQ (ring_t: BASE_LO, BASE_HI, SIZE, SW_IDX, HW_IDX)
// Other offsets read as zero and ignore writes. The register map has MAP_Q queues; only the
// first NUM_TXQ exist in hardware: the others' registers hold what is written and do nothing,
// and their HW_IDX and STATUS.busy read zero.
//
// Timing: an access is answered in the cycle of its request; a write takes effect at that
// clock edge. Reset: synchronous, active high; every register to zero (the RDL reset).
module txq_regs
  import nic_pkg::*;
#(
  parameter int unsigned NUM_TXQ = 4,
  parameter int unsigned MAP_Q   = 8,
  localparam int unsigned QW     = MAP_Q > 1 ? $clog2(MAP_Q) : 1,
  localparam int unsigned HW     = NUM_TXQ > 1 ? $clog2(NUM_TXQ) : 1     // index width of the hardware queues
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
  input  logic [NUM_TXQ-1:0][15:0]  desc_hw_idx,
  input  logic [NUM_TXQ-1:0][15:0]  cq_hw_idx,
  input  logic [NUM_TXQ-1:0]        busy,
  input  logic [NUM_TXQ-1:0]        wr_err_set,
  input  logic [NUM_TXQ-1:0]        irq_fire,
  // settings
  output logic [NUM_TXQ-1:0]        enable,
  output logic [NUM_TXQ-1:0]        irq_arm,
  output logic [NUM_TXQ-1:0][63:0]  ring_base,
  output logic [NUM_TXQ-1:0][3:0]   ring_log2,
  output logic [NUM_TXQ-1:0][15:0]  sw_idx,
  output logic [NUM_TXQ-1:0][63:0]  cq_base,
  output logic [NUM_TXQ-1:0][3:0]   cq_log2,
  output logic [NUM_TXQ-1:0][15:0]  cq_sw_idx
);
  initial begin
    if (NUM_TXQ < 1 || NUM_TXQ > MAP_Q) $fatal(1, "txq_regs: NUM_TXQ must be 1..MAP_Q");
  end

  logic [MAP_Q-1:0] en_q, arm_q, err_q;

  // The requested queue (csr_req is one-hot: the block decodes one region at a time).
  function automatic logic [QW-1:0] req_queue(input logic [MAP_Q-1:0] req);
    return QW'(onehot_index(256'(req)));
  endfunction

  // ---------------------------------------------------------------- rings
  logic [MAP_Q-1:0][63:0] rbase [2];
  logic [MAP_Q-1:0][3:0]  rlog2 [2];
  logic [MAP_Q-1:0][15:0] rsw   [2];
  logic                   wr;

  assign wr = (|csr_req) && csr_req_is_wr;

  for (genvar r = 0; r < 2; r++) begin : g_ring      // 0x20 DESC_RING, 0x40 CQ
    ring_regs #(.NUM_Q(MAP_Q)) u_ring (
      .clk,
      .rst,
      .wr_req       ((wr && csr_word[4:3] == 2'(r + 1)) ? csr_req : '0),
      .wr_word      (csr_word[2:0]),
      .wr_data      (csr_wr_data),
      .wr_biten     (csr_wr_biten),
      .base         (rbase[r]),
      .log2_entries (rlog2[r]),
      .sw_idx       (rsw[r])
    );
  end

  function automatic logic [31:0] queue_word(input logic [QW-1:0] q, input logic [4:0] a);
    logic [31:0] v;
    logic        exists;     // the queue exists in hardware
    exists = 32'(q) < NUM_TXQ;
    v  = '0;
    unique case (a[4:3])
      2'd0: begin
        unique case (a[2:0])
          3'd0:    v = {31'd0, en_q[q]};
          3'd3:    v = {31'd0, arm_q[q]};
          3'd4:    v = {30'd0, exists ? busy[HW'(q)] : 1'b0, err_q[q]};
          default: v = '0;
        endcase
      end
      2'd1:    v = ring_reg_word(rbase[0][q][63:4], rlog2[0][q], rsw[0][q], exists ? desc_hw_idx[HW'(q)] : 16'd0, a[2:0]);
      2'd2:    v = ring_reg_word(rbase[1][q][63:4], rlog2[1][q], rsw[1][q], exists ? cq_hw_idx[HW'(q)] : 16'd0, a[2:0]);
      default: v = '0;       // not a register of the queue
    endcase
    return v;
  endfunction

  // ---------------------------------------------------------------- queue registers
  always_ff @(posedge clk) begin
    if (rst) begin
      en_q  <= '0;
      arm_q <= '0;
      err_q <= '0;
    end else begin
      automatic logic [MAP_Q-1:0] err_n = err_q;
      arm_q[NUM_TXQ-1:0] <= arm_q[NUM_TXQ-1:0] & ~irq_fire;   // a software write below wins
      if (wr && csr_word[4:3] == 2'd0) begin
        automatic logic [QW-1:0] wq = req_queue(csr_req);
        unique case (csr_word[2:0])
          3'd0: en_q[wq]  <= (en_q[wq] & ~csr_wr_biten[0]) | (csr_wr_data[0] & csr_wr_biten[0]);
          3'd3: arm_q[wq] <= (arm_q[wq] & ~csr_wr_biten[0]) | (csr_wr_data[0] & csr_wr_biten[0]);
          3'd4: err_n[wq] = err_q[wq] & ~(csr_wr_data[0] & csr_wr_biten[0]);   // write 1 to clear
          default: ;
        endcase
      end
      err_n[NUM_TXQ-1:0] = err_n[NUM_TXQ-1:0] | wr_err_set;                      // set wins
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
  assign enable    = en_q[NUM_TXQ-1:0];
  assign irq_arm   = arm_q[NUM_TXQ-1:0];
  assign ring_base = rbase[0][NUM_TXQ-1:0];
  assign ring_log2 = rlog2[0][NUM_TXQ-1:0];
  assign sw_idx    = rsw[0][NUM_TXQ-1:0];
  assign cq_base   = rbase[1][NUM_TXQ-1:0];
  assign cq_log2   = rlog2[1][NUM_TXQ-1:0];
  assign cq_sw_idx = rsw[1][NUM_TXQ-1:0];

endmodule
