from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="devmem_steered",
    description="Devmem TCP: most flows steered by n-tuple rules to the last queue, large "
                "payloads, some jumbo frames over several buffers, a hds_thresh.",
    frames=160, flows=8, steered_flows=4, jumbo_rate=0.1, max_frame_len=9022, hds_thresh=128,
    protocol_mix={"ipv4/tcp": 5, "ipv6/tcp": 3, "ipv4/udp": 1},
    payload_sizes=((0, 0, 1), (64, 511, 2), (512, 1400, 5)), host_payload_queues=(0,), rx_idle=0.05)
