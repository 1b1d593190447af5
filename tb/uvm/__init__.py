"""pyuvm environment for nic_top's RX path (docs/verification.md).

Components, one module each: `mac_rx_agent` (MAC RX stream driver + monitor), `csr_agent`
(AXI4-Lite register agent that the driver's ethtool code runs through), `dma_agent` (DMA
memory monitor, backpressure and error injection), `scoreboard` (the golden-model check of
tb/rx_scoreboard.py / tb/rx_env.py, per queue), `coverage` (functional coverage), `env`,
`sequences`, `seq_items`, `profiles` (the traffic profile dataclass) and `scenarios/` (one
file per traffic scenario, found by discovery). The pyuvm tests are in tests/rtl/test_uvm.py.
"""
