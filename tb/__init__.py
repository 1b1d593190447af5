"""cocotb/pyuvm verification components for devmem-nic.

`tb.sim` builds and runs RTL under Verilator for pytest (`run_rtl_test`); the other modules
hold bus agents, memory targets, scoreboards and coverage used by the tests in tests/.
"""
