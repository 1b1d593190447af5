// Properties of rtl/common/sync_fifo.sv: a first-word-fall-through FIFO of DEPTH entries.
//
// Bound into the design by sync_fifo_bind.sv (never written into rtl/): SymbiYosys proves
// them (tb/formal/sync_fifo.sby), and the same module compiles in Verilator as simulation
// assertions (tests/rtl/test_formal_props.py).
//
// What is proved, for every reachable state after a reset:
//   - count stays within 0..DEPTH, in_ready is "not full" and out_valid "not empty";
//   - count moves by exactly push - pop each cycle, and to 0 on reset or clear;
//   - order and data: any one entry, chosen freely by the solver when it is pushed, reaches
//     the head after exactly the entries that were ahead of it, with the data it was pushed
//     with (a symbolic tracked entry stands for every entry).
// Environment: none beyond a reset in the first cycle (both handshakes are free inputs).
/* verilator lint_off UNUSEDSIGNAL */  // ports some checks of a proof only read
module sync_fifo_props #(
  parameter int unsigned WIDTH = 8,
  parameter int unsigned DEPTH = 4,
  localparam int unsigned AW = $clog2(DEPTH)
) (
  input logic             clk,
  input logic             rst,
  input logic             clear,
  input logic             in_valid,
  input logic             in_ready,
  input logic [WIDTH-1:0] in_data,
  input logic             out_valid,
  input logic             out_ready,
  input logic [WIDTH-1:0] out_data,
  input logic [AW:0]      count,
  // design state, for the induction invariants
  input logic [WIDTH-1:0] mem_q [DEPTH],
  input logic [AW:0]      rd_ptr_q
);
  // ------------------------------------------------------------------ reset
  logic f_started;                 // a reset has been sampled: the state is defined
  initial f_started = 1'b0;
  always_ff @(posedge clk) if (rst) f_started <= 1'b1;
`ifdef FORMAL
  always_comb if (!f_started) assume (rst);
`endif

  logic f_push, f_pop, f_flush;
  assign f_push  = in_valid && in_ready;
  assign f_pop   = out_valid && out_ready;
  assign f_flush = rst || clear;

  // ------------------------------------------------------------------ the tracked entry
  // f_any_pick chooses the entry: free in a proof (the .sby script makes every f_any_* signal
  // a fresh value each cycle, $anyseq), a pseudo-random bit in simulation.
  logic f_any_pick;
`ifndef FORMAL
  logic [15:0] f_lfsr;
  initial f_lfsr = 16'hace1;
  always_ff @(posedge clk) f_lfsr <= {f_lfsr[14:0], f_lfsr[15] ^ f_lfsr[13] ^ f_lfsr[12] ^ f_lfsr[10]};
  assign f_any_pick = f_lfsr[0];
`endif
  logic             f_tracking;
  logic [WIDTH-1:0] f_data;
  logic [AW:0]      f_ahead;              // entries ahead of it
  initial f_tracking = 1'b0;

  always_ff @(posedge clk) begin
    if (f_flush) begin
      f_tracking <= 1'b0;
    end else if (f_tracking) begin
      if (f_pop) begin
        if (f_ahead == '0) f_tracking <= 1'b0;
        else               f_ahead    <= f_ahead - 1'b1;
      end
    end else if (f_push && f_any_pick && f_started) begin
      f_tracking <= 1'b1;
      f_data     <= in_data;
      f_ahead    <= count - (AW + 1)'(f_pop);
    end
  end

  // ------------------------------------------------------------------ the previous cycle
  logic        f_past;                    // the previous cycle had a defined state
  logic        f_was_flush, f_was_push, f_was_pop;
  logic [AW:0] f_was_count;
  initial f_past = 1'b0;
  always_ff @(posedge clk) begin
    f_past      <= f_started;
    f_was_flush <= f_flush;
    f_was_push  <= f_push;
    f_was_pop   <= f_pop;
    f_was_count <= count;
  end

  // ------------------------------------------------------------------ assertions
  always_comb begin
    if (f_started) begin
      a_count_le_depth: assert (count <= (AW + 1)'(DEPTH));
      a_in_ready_iff_not_full: assert (in_ready == (count != (AW + 1)'(DEPTH)));
      a_out_valid_iff_not_empty: assert (out_valid == (count != '0));
      if (f_tracking) begin
        a_tracked_inside: assert (f_ahead < count);
        a_tracked_stored: assert (mem_q[AW'(rd_ptr_q + f_ahead)] == f_data);
        if (f_ahead == '0) a_tracked_at_head: assert (out_valid && out_data == f_data);
      end
    end
    if (f_past) begin
      a_count_step: assert (count == (f_was_flush ? '0 : f_was_count + (AW + 1)'(f_was_push) - (AW + 1)'(f_was_pop)));
    end
  end

  // ------------------------------------------------------------------ covers (non-vacuity)
  always_comb begin
    if (f_started && !f_flush) begin
      c_full: cover (count == (AW + 1)'(DEPTH) && f_push == 1'b0 && in_valid);
      c_tracked_out_after_full: cover (f_tracking && f_ahead == '0 && f_pop && f_was_count == (AW + 1)'(DEPTH));
    end
  end
endmodule
