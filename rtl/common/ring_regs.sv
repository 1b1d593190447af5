// The ring registers of one kind of ring (nic_csr.rdl regfile ring_t: BASE_LO, BASE_HI,
// SIZE, SW_IDX) for NUM_Q queues, e.g. every RX queue's header ring. HW_IDX is not stored
// here: it is the prefetcher's or writer's count, read through nic_pkg::ring_reg_word.
//
// A write (wr_en, to queue wr_q) stores wr_value, the register word wr_word after the caller's
// merge (nic_pkg::csr_merge of the word as nic_pkg::ring_reg_word reads it); bits outside the
// fields (BASE_LO[3:0], SIZE[31:4], SW_IDX[31:16]) and the read-only HW_IDX are not stored.
// Nothing else happens in a cycle without a write.
// Reset: synchronous, active high; every register to zero (the RDL reset).
module ring_regs #(
  parameter int unsigned NUM_Q = 8,
  localparam int unsigned QW   = NUM_Q > 1 ? $clog2(NUM_Q) : 1
) (
  input  logic                    clk,
  input  logic                    rst,
  input  logic                    wr_en,
  input  logic [QW-1:0]           wr_q,         // below NUM_Q
  input  logic [2:0]              wr_word,      // 0 BASE_LO, 1 BASE_HI, 2 SIZE, 3 SW_IDX
  input  logic [31:0]             wr_value,     // the whole register after the write
  output logic [NUM_Q-1:0][63:0]  base,         // [3:0] always zero
  output logic [NUM_Q-1:0][3:0]   log2_entries,
  output logic [NUM_Q-1:0][15:0]  sw_idx
);
  initial begin
    if (NUM_Q < 1 || NUM_Q > 256) $fatal(1, "ring_regs: NUM_Q must be 1..256");
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      base         <= '0;
      log2_entries <= '0;
      sw_idx       <= '0;
    end else if (wr_en) begin
      for (int q = 0; q < NUM_Q; q++) begin
        if (wr_q == QW'(q)) begin
          unique case (wr_word)
            3'd0:    base[q][31:4]     <= wr_value[31:4];
            3'd1:    base[q][63:32]    <= wr_value;
            3'd2:    log2_entries[q]   <= wr_value[3:0];
            3'd3:    sw_idx[q]         <= wr_value[15:0];
            default: ;                 // HW_IDX and beyond: read-only or nothing
          endcase
        end
      end
    end
  end

endmodule
