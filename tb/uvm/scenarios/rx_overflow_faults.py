"""Coverage closure (make regress only): header overflow meets every fault, and the rarer
fault x placement and fault x post-parse drop pairs (tb/uvm/coverage.py, nic_rx)."""
from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="rx_overflow_faults",
    description="Coverage closure (make regress only): 48-byte header buffers (BUF_SIZE.hdr_buf_bytes), so "
                "headers of every IP protocol overflow them (HDR_OVERFLOW: every IPv4/TCP and IPv6 header, IPv4 "
                "UDP/ICMP with a QinQ tag or options, not only past the 128-byte parse window) together with "
                "mutated frames and payload buffers answering SLVERR; a hds_thresh so short ICMP frames are not "
                "split; flows steered into a host-payload queue (the last); frames over the length limit "
                "mutated (unparsed); then queue 0 and the last queue disabled (RX_DROP_QUEUE_OFF) under "
                "mutated ARP and ICMP frames.",
    frames=700, flows=32, steered_flows=8, host_payload_queues=(0, 7), hds_thresh=160, hdr_buf_bytes=48,
    ip_options=0.4, vlan_mix=(0.34, 0.33, 0.33), malformed_rate=0.5, bad_fcs_rate=0.02, dma_error_rate=0.2,
    # TCP (every IPv4/TCP and IPv6 header overflows 48 bytes) is common elsewhere: the weight is on
    # the protocols whose overflow x fault bins are rare (IPv4 UDP/ICMP, IPv6 UDP) and on ARP; IPv4
    # UDP most: its header overflows 48 bytes only with QinQ or options, and a len_field mutation
    # leaves it parseable only at some offsets (TCI, ID, TTL, checksum: 15% in the model).
    # (ip_options 0.4: IPv6 extension headers long enough to hide the L4 header past the window make
    # the frame ipv6/other, and every IPv6 header overflows 48 bytes without them.)
    protocol_mix={"ipv4/tcp": 2, "ipv4/udp": 4, "ipv6/tcp": 2, "ipv6/udp": 3, "ipv4/other": 3,
                  "ipv6/other": 1, "non_ip": 2},
    payload_sizes=((0, 0, 1), (1, 63, 3), (64, 511, 3), (512, 1400, 1), (1480, 1700, 1)),
    rx_starve="queue_off", rx_starve_queues=(0, -1), rx_starve_frames=200,
    rx_idle=0.1, dma_stall=0.2, regress_only=True)
