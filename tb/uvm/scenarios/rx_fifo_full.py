from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_fifo_full",
    description="Frame FIFO overflow (make regress only): after random traffic over every protocol, every DMA "
                "channel stalls and frames of one length arrive until the frame FIFO is full; from the first "
                "that does not fit each is RX_DROP_FIFO (rx-rules.md section 1 rule 4); the kept ones must "
                "arrive byte-exact once the bus answers again, then traffic flows.",
    frames=40, protocol_mix=EVERY_PROTOCOL, rx_starve="fifo", rx_idle=0.1, dma_stall=0.2,
    regress_only=True)
