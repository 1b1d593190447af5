"""Reference Toeplitz hash of Microsoft RSS, written from docs/rss.md section 2.

The function is deliberately the plain bit-serial algorithm: the key is a bit string, and
for every input bit that is 1 the leftmost 32 bits of the (shifted) key are XORed into the
result, the key moving one bit left per input bit. No tables, no word tricks: it is the
independent reference the RTL is compared with.

`hash_input(...)` builds the input byte string of each RSS hash type (addresses, then ports,
in network byte order), and `MS_VERIFICATION_KEY` is the key of Microsoft's published
verification suite (see docs/rss.md for the source).
"""
from __future__ import annotations

KEY_BYTES = 40
"""RSS secret key length."""
MAX_INPUT_BYTES = KEY_BYTES - 4
"""Longest input a 40-byte key can hash: the window of the last input bit must fit."""

MS_VERIFICATION_KEY = bytes.fromhex(
    '6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c'
    '6a42b73bbeac01fa')
"""The key used by Microsoft's "Verifying the RSS hash calculation" page."""


def toeplitz_hash(key: bytes, data: bytes) -> int:
    """The 32-bit Toeplitz hash of `data` under `key` (bit serial, docs/rss.md section 2)."""
    key = bytes(key)
    data = bytes(data)
    if len(key) * 8 < len(data) * 8 + 31:
        raise ValueError(f'a {len(key)}-byte key cannot hash {len(data)} input bytes')
    nbits = len(key) * 8
    k = int.from_bytes(key, 'big')          # key bit 0 (MSB of byte 0) is bit nbits-1 of k
    result = 0
    for byte in data:
        for bit in range(7, -1, -1):        # most significant input bit first
            if (byte >> bit) & 1:
                result ^= (k >> (nbits - 32)) & 0xFFFF_FFFF   # leftmost 32 key bits
            k = (k << 1) & ((1 << nbits) - 1)                   # shift the key left by one
    return result


def hash_input(src_addr: bytes, dst_addr: bytes, sport: int | None = None,
               dport: int | None = None) -> bytes:
    """Input bytes of an RSS hash: addresses, then (for 4-tuple types) ports, big-endian."""
    if len(src_addr) != len(dst_addr) or len(src_addr) not in (4, 16):
        raise ValueError('addresses must both be 4 (IPv4) or 16 (IPv6) bytes')
    out = bytes(src_addr) + bytes(dst_addr)
    if (sport is None) != (dport is None):
        raise ValueError('give both ports or neither')
    if sport is not None and dport is not None:
        out += sport.to_bytes(2, 'big') + dport.to_bytes(2, 'big')
    return out
