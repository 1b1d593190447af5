from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="dma_errors",
    description="Payload buffers that answer SLVERR (the frame completes, counted in "
                "RX_DMA_WR_ERR), heavy DMA backpressure, RSS off (all to queue 0).",
    frames=120, dma_error_rate=0.08, dma_stall=0.5, rss=False)
