from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="mixed",
    description="All protocols, VLAN/QinQ, IP options, RSS over every queue, two steered devmem "
                "flows, one queue with host payload buffers, stream gaps and DMA backpressure.",
    frames=240, steered_flows=2, host_payload_queues=(1,), ip_options=0.15,
    rx_idle=0.2, dma_stall=0.3)
