"""Golden models of the devmem NIC, with no simulator.

- `models.formats`: descriptors and completions, byte for byte (docs/dma-formats.md).
- `models.host_memory`, `models.device_memory`: host RAM and GPU memory exported as a dma-buf.
- `models.bus`: the NIC's DMA address space, routing bus addresses to those memories.
- `models.rx_parser`, `models.nic_model`: the RX path of docs/rx-rules.md at transaction level.

Everything here is plain synchronous Python (no cocotb), so the same models serve the fast
pytest suite, the reference driver's model backend and the RTL scoreboards.
"""
