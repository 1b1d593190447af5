"""Benchmarks: cycle-exact measurements of the NIC, run with `make bench` (never pass/fail)."""
