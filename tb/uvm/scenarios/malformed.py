from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="malformed",
    description="A quarter of the frames mutated (byte flips, truncation, extension, length "
                "fields, L4 bytes) and some bad FCS, between good frames.",
    frames=200, malformed_rate=0.25, bad_fcs_rate=0.05, rx_idle=0.1, dma_stall=0.2,
    host_payload_queues=(2,))
