from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_devmem_faults",
    description="Coverage closure (make regress only): faults into devmem queues: flows of every protocol "
                "steered to the last (devmem) queue, RSS into devmem queues and a host-payload queue (0), "
                "mutated frames, bad FCS, payload buffers answering SLVERR, a hds_thresh.",
    frames=300, flows=24, steered_flows=8, host_payload_queues=(0,), hds_thresh=200, ip_options=0.3,
    malformed_rate=0.25, bad_fcs_rate=0.05, dma_error_rate=0.1, vlan_mix=(0.34, 0.33, 0.33),
    protocol_mix=EVERY_PROTOCOL,
    payload_sizes=((0, 0, 1), (1, 63, 3), (64, 511, 3), (512, 1400, 2)),
    pay_stride_log2=0, rx_idle=0.1, dma_stall=0.2, regress_only=True)
