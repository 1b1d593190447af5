from tb.uvm.profiles import Profile

PROFILE = Profile(
    name="tx_tso",
    description="TX TSO sends (tb/uvm/tso.py) between ordinary frames on two queues: TCP over IPv4 "
                "(with options) and IPv6, 0-2 VLAN tags, 1..45 segments of MSS 536..8948 (TX_FRAME_LIMIT "
                "9076), payload in device or host memory in up to 17 segments at any offset, and sends "
                "with a bad MSS, header description, length or segment; MAC backpressure, DMA stalls.",
    frames=0, tx_frames=120, tx_queues=(0, 1), tx_tso_rate=0.7, tx_tso_fault_rate=0.3, tx_frame_limit=9076,
    tx_host_payload=0.3, tx_stall=0.1, dma_stall=0.1)
