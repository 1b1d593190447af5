from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="tx_desc_errors",
    description="Coverage closure (make regress only): descriptor ring blocks answering SLVERR (DESC_RD_ERR, "
                "each failed entry a frame) between frames of every fault and segment count on four queues, "
                "payload in host and device memory.",
    frames=0, tx_frames=240, tx_queues=(0, 1, 2, 3), tx_fault_rate=0.45, tx_desc_err_rate=0.12,
    tx_max_segs_rate=0.1, tx_host_payload=0.4, tx_sizes=(400, 1514), tx_stall=0.1, dma_stall=0.2,
    regress_only=True)
