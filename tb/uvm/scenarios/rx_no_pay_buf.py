from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_no_pay_buf",
    description="Post-parse drops (make regress only): RSS off (everything to queue 0, devmem); after the "
                "traffic the host stops posting payload buffers; once the posted ones are used each frame "
                "with payload bytes is RX_DROP_NO_PAY_BUF, a split frame without payload still goes "
                "through (it needs no payload buffer); then the buffers come back.",
    frames=60, rss=False, ip_options=0.2, vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.2,
    protocol_mix=EVERY_PROTOCOL,
    payload_sizes=((0, 0, 2), (1, 63, 3), (64, 511, 3), (512, 1400, 2)),
    rx_starve="pay_bufs", rx_starve_queues=(0,), rx_starve_frames=90, rx_idle=0.1, dma_stall=0.2,
    regress_only=True)
