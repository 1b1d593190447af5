from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="tx_one_seg",
    description="Coverage closure (make regress only): TX frames in one descriptor, 16-descriptor frames "
                "starting anywhere in a page, every fault (also frames over TX_FRAME_LIMIT) on four queues "
                "whose completion rings wrap, under a DMA write slave that waits for WLAST.",
    frames=0, tx_frames=320, tx_queues=(0, 1, 2, 3), tx_one_seg_rate=0.35, tx_fault_rate=0.35,
    tx_max_segs_rate=0.15, tx_host_payload=0.4, tx_stall=0.1, dma_stall=0.2, awready="after-wlast",
    regress_only=True)
