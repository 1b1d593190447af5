from tb.uvm.profiles import EVERY_PROTOCOL, Profile

PROFILE = Profile(
    name="rx_no_hdr_buf",
    description="Post-parse drops (make regress only): after the traffic, the host stops posting header "
                "buffers to queue 0 (RSS, host payload buffers) and the last queue (steered, devmem); once "
                "their posted header buffers are used, each split frame there is RX_DROP_NO_HDR_BUF while "
                "unsplit ones (non-IP, header overflow) are still delivered; then the buffers come back.",
    frames=60, flows=16, steered_flows=4, host_payload_queues=(0,), ip_options=0.3,
    vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.2,
    protocol_mix=EVERY_PROTOCOL,
    rx_starve="hdr_bufs", rx_starve_queues=(0, -1), rx_starve_frames=160, rx_idle=0.1, dma_stall=0.2,
    regress_only=True)
