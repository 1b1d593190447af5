from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_host_queues",
    description="Coverage closure (make regress only): flows of every IP protocol steered into a host-payload "
                "queue (the last), RSS into another host-payload queue (0), a hds_thresh so short frames are "
                "not split, long IPv4/IPv6/TCP option headers past the parse window, even VLAN/QinQ mix, "
                "mutated frames and frames over the length limit (RX_DROP_OVERSIZE); BUF_SIZE.pay_stride_log2 "
                "15 (past the buffer: clamped, no effect without multi-packet buffers).",
    frames=300, flows=24, steered_flows=8, host_payload_queues=(0, 7), hds_thresh=200, ip_options=0.3,
    vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.15,
    protocol_mix=EVERY_PROTOCOL,
    payload_sizes=((0, 0, 1), (1, 63, 3), (64, 511, 3), (512, 1400, 2), (1480, 1700, 1)),
    pay_stride_log2=15, rx_idle=0.1, dma_stall=0.2, regress_only=True)
