// One VALID/READY channel's handshake rule (testbench code, tb/checker/): once VALID is high
// it stays high until READY, and the payload does not change meanwhile (AXI IHI 0022 A3.2.1,
// AXI-Stream IHI 0051 2.2.1). Flags only; the channel's checker reports with field names.
//   drop:   VALID fell in a cycle after a cycle with VALID high and READY low;
//   change: VALID is still high, the payload differs from `held` (the waiting payload).
// Reset (`rst`, synchronous): nothing is waiting.
module valid_hold_check #(
  parameter int unsigned W = 8
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         valid,
  input  logic         ready,
  input  logic [W-1:0] payload,
  output logic         drop,
  output logic         change,
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

  assign drop   = wait_q && !valid;
  assign change = wait_q && valid && payload != held;
endmodule
