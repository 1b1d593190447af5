from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_cq_full",
    description="Post-parse drops (make regress only): RSS off (everything to queue 0, host payload "
                "buffers), a 16-entry completion ring; after the traffic the host stops polling it, so "
                "once 16 completions are written each frame is RX_DROP_CQ_FULL; then polling resumes.",
    frames=60, rss=False, host_payload_queues=(0,), rx_cq_log2=4, ip_options=0.2,
    vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.2,
    protocol_mix=EVERY_PROTOCOL,
    rx_starve="cq", rx_starve_queues=(0,), rx_starve_frames=60, rx_idle=0.1, dma_stall=0.2,
    regress_only=True)
