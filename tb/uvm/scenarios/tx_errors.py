from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="tx_errors",
    description="TX faults between good frames: a segment crossing 4 KiB or of length 0 (BAD_SEG), "
                "frames too short (BAD_LEN), an odd checksum start (BAD_CSUM), payload pages answering "
                "SLVERR (DMA_RD_ERR); each failed frame completes with its status, the next goes out.",
    frames=0, tx_frames=160, tx_queues=(0, 2), tx_fault_rate=0.4, tx_stall=0.1)
