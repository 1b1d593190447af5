from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="rx_tx_mixed",
    description="RX and TX at the same time: RSS over every queue with a steered devmem flow and RX "
                "DMA write errors, while three TX queues send checksummed frames with a few faults; "
                "the two paths share the DMA write channel (RX data and TX completions).",
    frames=160, steered_flows=1, dma_error_rate=0.05, rx_idle=0.1, dma_stall=0.3,
    tx_frames=120, tx_queues=(0, 1, 3), tx_fault_rate=0.1, tx_stall=0.2)
