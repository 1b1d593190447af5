from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_queue_off",
    description="Post-parse drops (make regress only): after the traffic, queue 0 (RSS, devmem) and the last "
                "queue (steered flows, host payload buffers) are disabled and traffic of every protocol, "
                "mostly to them, goes on: each frame routed there is RX_DROP_QUEUE_OFF, the others are "
                "delivered (tb/uvm/starve.py).",
    frames=80, flows=16, steered_flows=4, host_payload_queues=(7,), ip_options=0.2,
    vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.2, bad_fcs_rate=0.03,
    protocol_mix=EVERY_PROTOCOL,
    rx_starve="queue_off", rx_starve_queues=(0, -1), rx_starve_frames=120, rx_idle=0.1, dma_stall=0.2,
    regress_only=True)
