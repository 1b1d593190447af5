"""The traffic profile: every knob of the constrained-random RX traffic in one dataclass.
A scenario (tb/uvm/scenarios/<name>.py) is a module-level `PROFILE = Profile(...)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field


# Every protocol class of the RX stimulus, TCP and UDP twice as often as the rest: the mix of
# the scenarios that exercise queue and buffer rules rather than one protocol.
EVERY_PROTOCOL: dict[str, float] = {"ipv4/tcp": 2, "ipv4/udp": 2, "ipv6/tcp": 2, "ipv6/udp": 2,
                                  "ipv4/other": 1, "ipv6/other": 1, "non_ip": 1}


@dataclass(frozen=True)
class Profile:
    name: str = "default"
    description: str = ""
    frames: int = 200                       # frames per run (scaled by UVM_FRAMES_SCALE)
    # protocol mix: relative weights
    protocol_mix: dict[str, float] = field(default_factory=lambda: {
        "ipv4/tcp": 4, "ipv4/udp": 2, "ipv6/tcp": 3, "ipv6/udp": 2, "ipv4/other": 0.5,
        "ipv6/other": 0.5, "non_ip": 0.5})
    payload_sizes: tuple[tuple[int, int, float], ...] = (   # (min, max, weight) payload bytes
        (0, 0, 1), (1, 63, 3), (64, 511, 3), (512, 1400, 2))
    flows: int = 16                         # distinct 5-tuples
    vlan_mix: tuple[float, float, float] = (0.6, 0.25, 0.15)   # untagged, 802.1Q, QinQ
    ip_options: float = 0.05                # IPv4 options / IPv6 extension header probability
    malformed_rate: float = 0.0             # mutated frames (tb/corpus.mutate)
    bad_fcs_rate: float = 0.0               # frames flagged with a bad FCS by the MAC
    rx_idle: float = 0.0                    # MAC stream gaps: idle probability per beat
    dma_stall: float = 0.0                  # DMA backpressure: not-ready probability per cycle
    awready: str = ""                       # DMA write slave: TrafficProfile.awready ("" = its default)
    dma_error_rate: float = 0.0             # posted payload buffers that answer SLVERR
    rss: bool = True                        # RSS over all queues (else everything to queue 0)
    steered_flows: int = 0                  # flows pinned by n-tuple rules to the last queue
    host_payload_queues: tuple[int, ...] = ()   # queues whose payload buffers are host memory
    tcp_data_split: bool = True
    hds_thresh: int = 0
    pay_buf_log2: int | None = None         # BUF_SIZE.pay_buf_log2 of every queue (None: the driver's default)
    pay_stride_log2: int | None = None      # BUF_SIZE.pay_stride_log2 (no effect without multi-packet buffers)
    hdr_buf_bytes: int | None = None        # BUF_SIZE.hdr_buf_bytes of every queue (None: the driver's 256)
    max_frame_len: int = 1518
    jumbo_rate: float = 0.0                 # payloads of 1500..8900 bytes (frame limit 9022)
    # Post-parse drops (tb/uvm/starve.py): after the traffic, a phase that holds queues back
    rx_starve: str = ""                     # "" (none), queue_off, hdr_bufs, pay_bufs, cq or fifo (the bus stalls)
    rx_starve_queues: tuple[int, ...] = (0,)   # the queues held (negative: from the last)
    rx_starve_frames: int = 0               # frames sent while they are held (scaled), then as many after
    rx_cq_log2: int | None = None           # RX completion ring size (None: 64 entries)
    # TX (tb/uvm/tx_agent.py); no TX traffic when tx_frames is 0
    tx_frames: int = 0                      # TX frames per run (scaled by UVM_FRAMES_SCALE)
    tx_queues: tuple[int, ...] = (0,)       # TX queues the frames are spread over
    tx_sizes: tuple[int, int] = (60, 1514)  # frame sizes (bytes, without FCS)
    tx_csum_rate: float = 0.8               # frames with checksum offload
    tx_zero_csum_rate: float = 0.1          # UDP frames built so the checksum computes to 0
    tx_fault_rate: float = 0.0              # frames with one fault: crossing, zero_len, short, bad_csum, dma_rd_err, long
    tx_one_seg_rate: float = 0.0            # frames in one descriptor (header and payload together)
    tx_desc_err_rate: float = 0.0           # items whose 8-entry aligned ring block answers SLVERR (DESC_RD_ERR)
    regress_only: bool = False              # run by make regress (and a plain pytest), not make test
    tx_host_payload: float = 0.2            # payload segments in host memory (else device memory)
    tx_max_segs_rate: float = 0.05          # frames of TX_MAX_SEGS (16) descriptors
    tx_stall: float = 0.0                   # MAC TX backpressure: not-ready probability per cycle
    tx_tso_rate: float = 0.0                # TX items that are TSO sends (tb/uvm/tso.py)
    tx_tso_fault_rate: float = 0.0          # TSO sends with one fault: bad MSS, header, length, segment
    tx_frame_limit: int = 1522              # TX_FRAME_LIMIT (its reset value; 9076 for MSS 8948)
