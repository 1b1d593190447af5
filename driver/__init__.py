"""The Python reference driver of the devmem NIC.

It talks to hardware only through `driver.hw.NicHw` (register access, host memory, time),
so the same code drives the golden model (`driver.backends.model`) and the RTL under
Verilator (the testbenches `tb.nic_tb.NicTb` and `tb.fast.fast_tb.FastNicTb` implement it;
`tb.scenario` runs the driver on either). `driver.regs` is generated from
rtl/csr/nic_csr.rdl.
"""
