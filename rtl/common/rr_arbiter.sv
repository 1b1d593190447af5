// Round-robin arbiter with grant hold: picks one of N requesters, the first at or after the
// one following the last winner, and keeps the grant while the winner's request waits for
// `accept` (valid must stay stable until accepted, as AXI requires).
// Reset: synchronous, active high.
module rr_arbiter #(
  parameter int unsigned N = 2,
  localparam int unsigned IW = (N > 1) ? $clog2(N) : 1
) (
  input  logic          clk,
  input  logic          rst,
  input  logic [N-1:0]  req,
  input  logic          accept,     // the granted request was taken this cycle
  output logic          gnt_valid,
  output logic [IW-1:0] gnt_idx
);
  initial begin
    if (N < 1) $fatal(1, "rr_arbiter: N must be at least 1");
  end

  logic [IW-1:0] last_q, held_idx_q, pick;
  logic          held_q, found;

  always_comb begin
    pick  = '0;
    found = 1'b0;
    if (req != '0) begin          // (no search in a cycle without a request)
      for (int k = 1; k <= N; k++) begin
        if (!found && req[(32'(last_q) + k) % N]) begin
          pick  = IW'((32'(last_q) + k) % N);
          found = 1'b1;
        end
      end
    end
  end

  assign gnt_idx   = held_q ? held_idx_q : pick;
  assign gnt_valid = held_q || found;

  always_ff @(posedge clk) begin
    if (rst) begin
      last_q     <= IW'(N - 1);
      held_q     <= 1'b0;
      held_idx_q <= '0;
    end else if (gnt_valid) begin
      if (accept) begin
        last_q <= gnt_idx;
        held_q <= 1'b0;
      end else begin
        held_q     <= 1'b1;
        held_idx_q <= gnt_idx;
      end
    end
  end
endmodule
