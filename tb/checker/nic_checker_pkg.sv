// How the protocol checkers of tb/checker/ report (testbench code: never part of rtl/).
//
// A violation prints one line naming the rule, who broke it (master or slave side, NIC or
// testbench), the cycle and the simulation time, the instance and the IDs, addresses and
// beats involved, then a ready `nicsim waves` command for a window around it; it appends the
// same as one JSON line to the report file and asks for the simulation to stop:
// nic_protocol_checker ends it with $fatal STOP_DELAY cycles later (so that a waveform being
// written holds the cycles after the violation too), or at the end of the run if that comes
// first; cocotb then fails the running test, and tb/sim.py puts the line into the pytest failure.
//
// Plusargs (tb/sim.py passes them; all optional):
//   +nic_checker_report=FILE  JSON lines: every violation, and a summary at the end of the run
//   +nic_checker_fst=FILE     the FST of this run (or the one a rerun with WAVES=1 writes)
//   +nic_checker_tracing      FILE is being written by this run
//   +nic_checker_nonfatal     report and count violations but do not stop (the checker's own
//                             tests only: they provoke one violation after another)
// " NAME 0xOLD -> 0xNEW" when a field changed, else "" (the stability rules' messages). A
// macro, not a function: Verilator inlines functions into the calling process and zeroes their
// locals on every run of it, which for wide arguments would cost every cycle; this expands to
// code that runs only where a violation is reported. (Defined here, the checker's first file.)
`define NIC_DIFF(NAME, WAS, NOW) nic_checker_pkg::pick((WAS) == (NOW), "", $sformatf(" %s 0x%0h -> 0x%0h", NAME, WAS, NOW))

package nic_checker_pkg;
  /* verilator tracing_off */
  /* verilator coverage_off */

  // The waveform window printed with a violation: from this long before the first cycle
  // involved to this long after the violation.
  localparam longint unsigned WIN_BEFORE_NS = 200;
  localparam longint unsigned WIN_AFTER_NS  = 100;

  localparam int unsigned STOP_DELAY = 4;   // cycles from the first violation to $fatal

  int unsigned violations = 0;     // reported so far
  bit          stop_pending = 0;   // a violation was reported (not in non-fatal mode)
  string       first_violation;    // its line

  // The simulation time in ns (the messages and waveform windows use it): every build here has
  // the time unit 1 ns (tb/sim.py TIMESCALE, --timescale 1ns/1ps).
  function automatic longint unsigned now_ns();
    return longint'($time);
  endfunction

  // `c ? a : b` for strings (a ternary of two string literals pads the shorter one).
  function automatic string pick(input bit c, input string a, input string b);
    return c ? a : b;
  endfunction


  // `window_start_ns` is the time of the first cycle that matters (the beat that broke the rule
  // may be older than the cycle the rule could be decided in).
  task automatic violation(input string rule, input string who, input string where,
                           input string detail, input longint unsigned cycle,
                           input longint unsigned t_ns, input longint unsigned window_start_ns,
                           input string group);
    string fst, report, cmd, line, hint;
    int fd;
    longint unsigned start;
    if (!$value$plusargs("nic_checker_fst=%s", fst)) fst = "FILE.fst";
    start = (window_start_ns > WIN_BEFORE_NS) ? window_start_ns - WIN_BEFORE_NS : 0;
    cmd = $sformatf("nicsim waves %s --group %s --start %0d --end %0d", fst, group, start,
                    t_ns + WIN_AFTER_NS);
    hint = pick($test$plusargs("nic_checker_tracing") != 0, "",
                " (no FST is written by this run: rerun it with WAVES=1 first)");
    line = $sformatf("%s broken by the %s at cycle %0d (%0d ns) in %s: %s", rule, who, cycle,
                     t_ns, where, detail);
    violations++;
    $display("nic_checker: VIOLATION %s", line);
    $display("nic_checker: waves: %s%s", cmd, hint);
    if ($value$plusargs("nic_checker_report=%s", report)) begin
      fd = $fopen(report, "a");
      if (fd != 0) begin
        $fdisplay(fd, "{\"violation\": {\"rule\": \"%s\", \"who\": \"%s\", \"cycle\": %0d, \"ns\": %0d, \"instance\": \"%s\", \"detail\": \"%s\", \"waves\": \"%s\", \"tracing\": %0d}}",
                  rule, who, cycle, t_ns, where, detail, cmd, $test$plusargs("nic_checker_tracing"));
        $fclose(fd);
      end
    end
    if (!$test$plusargs("nic_checker_nonfatal") && !stop_pending) begin
      stop_pending    = 1;
      first_violation = line;
    end
  endtask
endpackage
