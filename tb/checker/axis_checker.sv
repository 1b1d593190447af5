// AXI-Stream checker for one packet stream (testbench code, tb/checker/): passive, reports the
// first broken rule through nic_checker_pkg::violation. PREFIX names the stream's rules
// ("AXIS_RX", "AXIS_TX"):
//
//   <PREFIX>_STABLE       (source) TVALID held until TREADY; TDATA, TKEEP, TLAST, TUSER stable
//                         meanwhile (IHI 0051 2.2.1)
//   <PREFIX>_RESET_VALID  (source) TVALID low in reset and in the first cycle after it
//   <PREFIX>_X            no X/Z on TVALID/TREADY out of reset (4-state simulators only)
//   <PREFIX>_KEEP         (source) the NIC's packet contract, stricter than AXI-Stream (which
//                         allows null and position bytes): TKEEP all ones on every beat but the
//                         last; on the TLAST beat contiguous from lane 0 and not empty
//   <PREFIX>_FRAME_LEN    (source) a packet (the beats up to TLAST) is at most MAX_FRAME_BYTES
//                         long (0: no limit)
// Reset (`rst`, synchronous): no beat waiting, no packet in progress.
module axis_checker
  import nic_checker_pkg::*;
#(
  parameter int unsigned DATA_W          = 64,
  parameter int unsigned USER_W          = 1,
  parameter int unsigned MAX_FRAME_BYTES = 0,
  parameter string       PREFIX          = "AXIS",
  parameter string       SOURCE          = "source",
  parameter string       GROUP           = "rx",
  localparam int unsigned DB             = DATA_W / 8
) (
  input  logic                  clk,
  input  logic                  rst,
  input  logic                  after_rst,
  input  longint unsigned       cycle,
  input  longint unsigned       period_ns,
  input  logic [DATA_W-1:0]     tdata,
  input  logic [DB-1:0]         tkeep,
  input  logic                  tlast,
  input  logic [USER_W-1:0]     tuser,
  input  logic                  tvalid,
  input  logic                  tready,
  output longint unsigned       n_beats,
  output longint unsigned       n_frames
);
  /* verilator tracing_off */
  /* verilator coverage_off */
  localparam int unsigned PW = DATA_W + DB + 1 + USER_W;
  logic          drop, waiting;
  logic [PW-1:0] held;
  valid_hold_check #(.W(PW)) u_t (.clk, .rst, .valid(tvalid), .ready(tready), .payload({tdata, tkeep, tlast, tuser}),
                                  .waiting, .drop, .held);

  logic [31:0]     bytes_q;            // bytes of the packet in progress before this beat
  longint unsigned c_beats, c_frames;
  initial begin
    c_beats = 0; c_frames = 0;
  end
  assign n_beats  = c_beats;
  assign n_frames = c_frames;

  string where;
  initial where = $sformatf("%m");

  always_ff @(posedge clk) begin
    if (after_rst && tvalid)
      violation({PREFIX, "_RESET_VALID"}, SOURCE, where, pick(rst, "TVALID high in reset", "TVALID high in the first cycle after reset"),
                cycle, now_ns(), now_ns(), GROUP);
    if (rst) begin
      bytes_q <= '0;
    end else begin
      if (drop) violation({PREFIX, "_STABLE"}, SOURCE, where, $sformatf("TVALID fell before TREADY (TKEEP 0x%0h TLAST %0d)",
                          held[DB+USER_W:1+USER_W], held[USER_W]), cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (waiting) if (tvalid && {tdata, tkeep, tlast, tuser} != held) violation({PREFIX, "_STABLE"}, SOURCE, where, {"the beat changed while TVALID waited for TREADY:",
                            `NIC_DIFF("TDATA", (held[PW-1:DB+1+USER_W]), (tdata)),
                            `NIC_DIFF("TKEEP", (held[DB+USER_W:1+USER_W]), (tkeep)),
                            `NIC_DIFF("TLAST", (held[USER_W]), (tlast)),
                            `NIC_DIFF("TUSER", (held[USER_W-1:0]), (tuser))}, cycle, now_ns(), now_ns() - period_ns, GROUP);
      if (tvalid && tready) begin
        automatic logic [31:0] beat_bytes = tlast ? $countones(tkeep) : DB;
        if (!tlast && tkeep != '1)
          violation({PREFIX, "_KEEP"}, SOURCE, where, $sformatf("TKEEP 0x%0h on a beat without TLAST (byte %0d of the packet): all lanes must be kept",
                    tkeep, bytes_q), cycle, now_ns(), now_ns(), GROUP);
        if (tlast && (tkeep == '0 || (tkeep & (tkeep + 1'b1)) != '0))
          violation({PREFIX, "_KEEP"}, SOURCE, where, $sformatf("TKEEP 0x%0h on the TLAST beat (byte %0d of the packet): must be lanes 0..n, at least one",
                    tkeep, bytes_q), cycle, now_ns(), now_ns(), GROUP);
        if (MAX_FRAME_BYTES != 0 && bytes_q + beat_bytes > MAX_FRAME_BYTES)
          violation({PREFIX, "_FRAME_LEN"}, SOURCE, where, $sformatf("the packet reaches %0d bytes %s, more than %0d",
                    bytes_q + beat_bytes, pick(tlast, "at TLAST", "without TLAST"), MAX_FRAME_BYTES), cycle, now_ns(), now_ns(), GROUP);
        bytes_q  <= tlast ? 32'd0 : bytes_q + beat_bytes;
        c_beats  <= c_beats + 1;
        c_frames <= c_frames + 64'(tlast);
      end
    end
  end

`ifndef VERILATOR
  always_ff @(posedge clk) begin
    if (!rst && $isunknown({tvalid, tready}))
      violation({PREFIX, "_X"}, "source or sink", where, "X or Z on TVALID/TREADY", cycle, now_ns(), now_ns(), GROUP);
  end
`endif
endmodule
