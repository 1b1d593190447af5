from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_rss_off",
    description="Coverage closure (make regress only): RSS off (every frame to queue 0, the default queue) "
                "with host payload buffers, every protocol and VLAN depth, mutated frames, bad FCS, "
                "payload buffers answering SLVERR.",
    frames=240, rss=False, host_payload_queues=(0,), ip_options=0.2, vlan_mix=(0.34, 0.33, 0.33),
    malformed_rate=0.2, bad_fcs_rate=0.05, dma_error_rate=0.1,
    protocol_mix=EVERY_PROTOCOL,
    dma_stall=0.2, regress_only=True)
