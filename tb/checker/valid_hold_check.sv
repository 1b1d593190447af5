// One VALID/READY channel's handshake state (testbench code, tb/checker/): once VALID is high
// it stays high until READY, and the payload does not change meanwhile (AXI IHI 0022 A3.2.1,
// AXI-Stream IHI 0051 2.2.1). The channel's checker reports, with field names:
//   waiting: the previous cycle had VALID high and READY low; `held` is its payload, which
//            the checker compares with this cycle's (only in such a cycle: in Verilator a
//            wide comparison outside that branch would cost every cycle);
//   drop:    waiting, and VALID fell.
// Reset (`rst`, synchronous): nothing is waiting.
module valid_hold_check #(
  parameter int unsigned W = 8
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         valid,
  input  logic         ready,
  input  logic [W-1:0] payload,
  output logic         waiting,
  output logic         drop,
  output logic [W-1:0] held
);
  /* verilator tracing_off */
  /* verilator coverage_off */
  logic wait_q;

  always_ff @(posedge clk) begin
    if (rst) wait_q <= 1'b0;
    else     wait_q <= valid && !ready;
    if (valid && !ready) held <= payload;        // (the copy only in a waiting cycle)
  end

  assign waiting = wait_q;
  assign drop    = wait_q && !valid;
endmodule
