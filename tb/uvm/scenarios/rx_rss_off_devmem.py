from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_rss_off_devmem",
    description="Coverage closure (make regress only): RSS off (every frame to queue 0, the default queue) "
                "with devmem payload buffers, every protocol, a hds_thresh so short frames are not split, "
                "long TCP option headers, mutated frames, bad FCS, payload buffers answering SLVERR.",
    frames=240, rss=False, hds_thresh=200, ip_options=0.3, vlan_mix=(0.34, 0.33, 0.33),
    malformed_rate=0.25, bad_fcs_rate=0.05, dma_error_rate=0.1,
    protocol_mix=EVERY_PROTOCOL,
    payload_sizes=((0, 0, 1), (1, 63, 3), (64, 511, 3), (512, 1400, 2)),
    pay_buf_log2=13, pay_stride_log2=4, dma_stall=0.2, regress_only=True)
