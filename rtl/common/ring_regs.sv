// The ring registers of one kind of ring (nic_csr.rdl regfile ring_t: BASE_LO, BASE_HI,
// SIZE, SW_IDX) for NUM_Q queues, e.g. every RX queue's header ring. HW_IDX is not stored
// here: it is the prefetcher's or writer's count, read through nic_pkg::ring_reg_word.
//
// A write (wr_en, to queue wr_q) to register word wr_word merges wr_data under
// wr_biten into that register; bits outside the fields (BASE_LO[3:0], SIZE[31:4], SW_IDX[31:16]) and the
// read-only HW_IDX ignore writes. Nothing else happens in a cycle without a write.
// Reset: synchronous, active high; every register to zero (the RDL reset).
module ring_regs
  import nic_pkg::*;
#(
  parameter int unsigned NUM_Q = 8,
  localparam int unsigned QW   = NUM_Q > 1 ? $clog2(NUM_Q) : 1
) (
  input  logic                    clk,
  input  logic                    rst,
  input  logic                    wr_en,
  input  logic [QW-1:0]           wr_q,         // below NUM_Q
  input  logic [2:0]              wr_word,      // 0 BASE_LO, 1 BASE_HI, 2 SIZE, 3 SW_IDX
  input  logic [31:0]             wr_data,
  input  logic [31:0]             wr_biten,
  output logic [NUM_Q-1:0][63:0]  base,         // [3:0] always zero
  output logic [NUM_Q-1:0][3:0]   log2_entries,
  output logic [NUM_Q-1:0][15:0]  sw_idx
);
  initial begin
    if (NUM_Q < 1 || NUM_Q > 256) $fatal(1, "ring_regs: NUM_Q must be 1..256");
  end

  // The written register after the merge. Read in its own process so that the write below
  // only writes the registers, with constant indices (the loop unrolls): a simulator then
  // updates them in place instead of copying them every cycle.
  logic [31:0] wr_v;
  always_comb begin
    wr_v = '0;
    if (wr_en) begin
      wr_v = (ring_reg_word(base[wr_q][63:4], log2_entries[wr_q], sw_idx[wr_q], 16'd0, wr_word)
              & ~wr_biten) | (wr_data & wr_biten);
    end
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
            3'd0:    base[q][31:4]     <= wr_v[31:4];
            3'd1:    base[q][63:32]    <= wr_v;
            3'd2:    log2_entries[q]   <= wr_v[3:0];
            3'd3:    sw_idx[q]         <= wr_v[15:0];
            default: ;                 // HW_IDX and beyond: read-only or nothing
          endcase
        end
      end
    end
  end

endmodule
