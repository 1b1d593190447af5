from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="tx_basic",
    description="TX only: TCP/UDP over IPv4/IPv6, 60..1514 bytes, checksum offload (some UDP sums "
                "computing to zero), 1..16 segments at any offset, payload in device and host memory, "
                "two queues interleaving, MAC backpressure and DMA stalls.",
    frames=0, tx_frames=160, tx_queues=(0, 1), tx_stall=0.3, dma_stall=0.2, tx_zero_csum_rate=0.2)
