// The registers of one queue kind (RX: nic_csr.rdl regfile rxq_t, TX: txq_t) for MAP_Q queues,
// behind the CSR block's external-block port: the common part of rtl/rx/rxq_regs.sv and
// rtl/tx/txq_regs.sv, which name the fields.
//
// The register block (peakrdl-regblock) hands every access inside the queues' external block
// (RXQ_BLOCK / TXQ_BLOCK: queue q's registers at q * 0x100) here as one request with the
// byte address in the block (csr_addr: queue csr_addr[8 +: QW], register word csr_addr[7:2]).
// An access costs one indexed update; a cycle without one costs only the hardware updates of
// IRQ and STATUS.
//
// Layout of a queue's block (byte offsets):
//   0x00 CTRL    enable[0] and the other bits of CTRL_MASK (read/write)
//   0x04, 0x08   read/write words with the bits of W1_MASK / W2_MASK (resets W1_RESET, W2_RESET)
//   0x14         read/write word with the bits of W5_MASK (reset W5_RESET); the bits of W5_RO
//                read as W5_RO_VALUE and ignore writes (a constant the hardware shows)
//   0x0C IRQ     arm[0]: software writes it; the hardware clears it when irq_fire[q]
//                (a software write in the same cycle wins)
//   0x10 STATUS  dma_wr_err[0]: set by wr_err_set[q], write 1 to clear (a set in the same
//                cycle as a write wins: no error is lost; precedence = hw in the RDL);
//                busy[1] = busy[q], halted[2] = halted[q] (read-only)
//   0x20, 0x40, 0x60: ring r = 0, 1, 2 (ring_t, rtl/common/ring_regs.sv), the first NUM_RINGS
// Other offsets (0x18-0x1F, 0x14 without W5 bits, the rings' unused words, 0x80-0xFF of each
// queue) read as zero and
// ignore writes; writes honour the bit enables. Only the first
// NUM_Q queues exist in hardware and have registers: the others' read zero and ignore
// writes, as the golden model has them (models/nic_model.py), so a 1-queue NIC stores one
// queue's registers, not MAP_Q.
//
// Timing: every access is answered (acked) in the cycle of its request, as the generated block
// answers its own registers; a write takes effect at that clock edge.
// Reset: synchronous, active high; every register to its reset value (zero unless W*_RESET).
module queue_regs
  import nic_pkg::*;
#(
  parameter int unsigned NUM_Q     = 8,
  parameter int unsigned MAP_Q     = 8,
  parameter int unsigned NUM_RINGS = 3,
  parameter logic [31:0] CTRL_MASK = 32'h1,
  parameter logic [31:0] W1_MASK   = '0,
  parameter logic [31:0] W1_RESET  = '0,
  parameter logic [31:0] W2_MASK   = '0,
  parameter logic [31:0] W2_RESET  = '0,
  parameter logic [31:0] W5_MASK   = '0,
  parameter logic [31:0] W5_RESET  = '0,
  parameter logic [31:0] W5_RO     = '0,
  parameter logic [31:0] W5_RO_VALUE = '0,
  localparam int unsigned QW       = MAP_Q > 1 ? $clog2(MAP_Q) : 1,
  localparam int unsigned HW       = NUM_Q > 1 ? $clog2(NUM_Q) : 1,    // index width of the hardware queues
  localparam int unsigned AW       = QW + 8                            // byte address in the block
) (
  input  logic                                  clk,
  input  logic                                  rst,
  // CSR external block (all queues): one request, its byte address in the block
  input  logic                                  csr_req,
  input  logic [AW-1:0]                         csr_addr,
  input  logic                                  csr_req_is_wr,
  input  logic [31:0]                           csr_wr_data,
  input  logic [31:0]                           csr_wr_biten,
  output logic                                  csr_rd_ack,
  output logic                                  csr_wr_ack,
  output logic [31:0]                           csr_rd_data,
  // hardware state shown in the registers
  input  logic [NUM_RINGS-1:0][NUM_Q-1:0][15:0] hw_idx,
  input  logic [NUM_Q-1:0]                      busy,
  input  logic [NUM_Q-1:0]                      halted,      // STATUS bit 2 (0 where the queue kind has none)
  input  logic [NUM_Q-1:0]                      wr_err_set,
  input  logic [NUM_Q-1:0]                      irq_fire,
  // settings
  output logic [NUM_Q-1:0][31:0]                ctrl,        // CTRL (enable in bit 0)
  output logic [NUM_Q-1:0][31:0]                word1,       // the word at 0x04
  output logic [NUM_Q-1:0][31:0]                word2,       // the word at 0x08
  output logic [NUM_Q-1:0][31:0]                word5,       // the word at 0x14 (W5_MASK bits)
  output logic [NUM_Q-1:0]                      irq_arm,
  output logic [NUM_RINGS-1:0][NUM_Q-1:0][63:0] ring_base,
  output logic [NUM_RINGS-1:0][NUM_Q-1:0][3:0]  ring_log2,
  output logic [NUM_RINGS-1:0][NUM_Q-1:0][15:0] ring_sw_idx
);
  localparam logic [31:0] C_MASK = CTRL_MASK | 32'h1;

  initial begin
    if (NUM_Q < 1 || NUM_Q > MAP_Q) $fatal(1, "queue_regs: NUM_Q must be 1..MAP_Q");
    if ((MAP_Q & (MAP_Q - 1)) != 0) $fatal(1, "queue_regs: MAP_Q must be a power of two");
    if (NUM_RINGS < 1 || NUM_RINGS > 3) $fatal(1, "queue_regs: NUM_RINGS must be 1..3");
  end

  logic [NUM_Q-1:0][31:0] ctrl_q, w1_q, w2_q, w5_q;
  logic [NUM_Q-1:0]       arm_q, err_q;

  // The addressed queue and register word (words 32-63, offsets 0x80-0xFF, hold nothing).
  logic [QW-1:0] csr_q;
  logic [HW-1:0] csr_hq;     // the queue as an index of the hardware queues
  logic          csr_exists;
  logic [5:0]    csr_word;
  assign csr_q      = MAP_Q > 1 ? QW'(csr_addr[AW-1:8]) : '0;
  assign csr_hq     = HW'(csr_q);
  assign csr_exists = 32'(csr_q) < NUM_Q;
  assign csr_word   = csr_addr[7:2];

  // ---------------------------------------------------------------- rings
  logic [NUM_Q-1:0][63:0] rbase [NUM_RINGS];
  logic [NUM_Q-1:0][3:0]  rlog2 [NUM_RINGS];
  logic [NUM_Q-1:0][15:0] rsw   [NUM_RINGS];
  logic                   wr;
  logic [31:0]            cur_word;    // the addressed register as software reads it (below)
  logic [31:0]            wr_value;    // the addressed register after the write

  assign wr       = csr_req && csr_req_is_wr;
  assign wr_value = csr_merge(cur_word, csr_wr_data, csr_wr_biten);

  for (genvar r = 0; r < NUM_RINGS; r++) begin : g_ring
    ring_regs #(.NUM_Q(NUM_Q)) u_ring (
      .clk,
      .rst,
      .wr_en        (wr && csr_exists && csr_word[5:3] == 3'(r + 1)),
      .wr_q         (csr_hq),
      .wr_word      (csr_word[2:0]),
      .wr_value     (wr_value),
      .base         (rbase[r]),
      .log2_entries (rlog2[r]),
      .sw_idx       (rsw[r])
    );
    assign ring_base[r]   = rbase[r];
    assign ring_log2[r]   = rlog2[r];
    assign ring_sw_idx[r] = rsw[r];
  end

  // Register word `a` of hardware queue q as software reads it.
  function automatic logic [31:0] queue_word(input logic [HW-1:0] q, input logic [5:0] a);
    logic [31:0] v;
    int unsigned r;
    r = 32'(a[5:3]) - 1;
    v = '0;
    if (a[5:3] == 3'd0) begin
      unique case (a[2:0])
        3'd0:    v = ctrl_q[q] & C_MASK;
        3'd1:    v = w1_q[q] & W1_MASK;
        3'd2:    v = w2_q[q] & W2_MASK;
        3'd3:    v = {31'd0, arm_q[q]};
        3'd4:    v = {29'd0, halted[q], busy[q], err_q[q]};
        3'd5:    v = (w5_q[q] & W5_MASK) | (W5_RO_VALUE & W5_RO);
        default: v = '0;
      endcase
    end else if (r < NUM_RINGS) begin
      v = ring_reg_word(rbase[r][q][63:4], rlog2[r][q], rsw[r][q], hw_idx[r][q], a[2:0]);
    end
    return v;
  endfunction

  // Read in its own process; the write only writes (nic_pkg, "external register tables").
  always_comb begin
    cur_word = '0;
    if (csr_req && csr_exists) cur_word = queue_word(csr_hq, csr_word);
  end

  // ---------------------------------------------------------------- queue registers
  always_ff @(posedge clk) begin
    if (rst) begin
      ctrl_q <= '0;
      w1_q   <= {NUM_Q{W1_RESET & W1_MASK}};
      w2_q   <= {NUM_Q{W2_RESET & W2_MASK}};
      w5_q   <= {NUM_Q{W5_RESET & W5_MASK}};
      arm_q  <= '0;
      err_q  <= '0;
    end else if (wr || irq_fire != '0 || wr_err_set != '0) begin   // nothing moves otherwise
      automatic logic [NUM_Q-1:0] arm_n, err_n;
      arm_n = arm_q & ~irq_fire;     // hardware clear; a write below wins
      err_n = err_q;
      if (wr && csr_exists && csr_word[5:3] == 3'd0) begin
        automatic logic [31:0] v = wr_value;
        for (int q = 0; q < NUM_Q; q++) begin
          if (csr_hq == HW'(q)) begin
            unique case (csr_word[2:0])
              3'd0: ctrl_q[q] <= v & C_MASK;
              3'd1: w1_q[q]   <= v & W1_MASK;
              3'd2: w2_q[q]   <= v & W2_MASK;
              3'd5: w5_q[q]   <= v & W5_MASK;
              3'd3: arm_n[q]  = v[0];
              3'd4: err_n[q]  = err_q[q] & ~(csr_wr_data[0] & csr_wr_biten[0]);   // write 1 to clear
              default: ;
            endcase
          end
        end
      end
      err_n = err_n | wr_err_set;                                               // set wins
      arm_q <= arm_n;
      err_q <= err_n;
    end
  end

  // ---------------------------------------------------------------- answers (same cycle)
  assign csr_wr_ack  = csr_req && csr_req_is_wr;
  assign csr_rd_ack  = csr_req && !csr_req_is_wr;
  assign csr_rd_data = csr_req_is_wr ? '0 : cur_word;

  // ---------------------------------------------------------------- settings
  assign ctrl    = ctrl_q;
  assign word1   = w1_q;
  assign word2   = w2_q;
  assign word5   = w5_q;
  assign irq_arm = arm_q;

  logic unused_addr;
  assign unused_addr = ^csr_addr[1:0];   // 32-bit registers: byte bits unused

endmodule
