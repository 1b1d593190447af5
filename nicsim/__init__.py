"""`nicsim`: the NIC's command line (demo, pcap replay, waveform pictures). See docs/nicsim.md."""
