// Puts the protocol checker (tb/checker/nic_protocol_checker.sv) into every nic_top of the
// simulation: nic_top stays untouched, and the checker's ports, named like nic_top's, connect
// by name. tb/sim.py compiles this file into every build that contains rtl/top/nic_top.sv
// (the cocotb tests, pyuvm, the fast harness, nicsim, the benchmarks) and tb/fast/standalone.py
// into the Verilator-only build. `+define+NO_AXI_CHECKER` leaves the checker out: for speed
// measurements of its cost only (bench/sim_speed.py), never for a test.
`ifndef NO_AXI_CHECKER
bind nic_top nic_protocol_checker #(
  .DATA_W(DATA_W), .DMA_DATA_W(DMA_DATA_W), .ADDR_W(ADDR_W), .ID_W(ID_W), .MAX_BURST(MAX_BURST),
  .TX_FIFO_BYTES(TX_FIFO_BYTES), .NUM_TXQ(NUM_TXQ), .TX_DESC_ID(TX_DESC_ID)
) u_protocol_checker (.*);
`endif
