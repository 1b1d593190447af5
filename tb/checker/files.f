# The protocol checker (testbench code) in compile order; the bind last. Read by tb/sim.py
# (CHECKER_SOURCES, CHECKER_BIND) and the Makefile's lint.
tb/checker/nic_checker_pkg.sv
tb/checker/valid_hold_check.sv
tb/checker/axi4_checker.sv
tb/checker/axil_checker.sv
tb/checker/axis_checker.sv
tb/checker/nic_protocol_checker.sv
tb/checker/nic_checker_bind.sv
