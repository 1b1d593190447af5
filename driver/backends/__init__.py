"""Implementations of the driver's hardware interface (`driver.hw.NicHw`).

- `driver.backends.model.ModelHw`: the golden model (models/nic_model.py), no simulator.
- `tb.nic_tb.NicTb`: the RTL under Verilator through cocotb.
"""
