"""The reference Toeplitz hash (models/toeplitz.py) against Microsoft's published verification
vectors (docs/rss.md cites the page) and against properties that follow from the definition.
"""
from __future__ import annotations

import ipaddress
import random

import pytest

from models.toeplitz import (KEY_BYTES, MAX_INPUT_BYTES, MS_VERIFICATION_KEY, hash_input,
                             toeplitz_hash)

# Microsoft, "Verifying the RSS hash calculation": (source, source port, destination,
# destination port, hash over addresses only, hash over addresses and TCP ports).
MS_IPV4 = [
    ('66.9.149.187', 2794, '161.142.100.80', 1766, 0x323E8FC2, 0x51CCC178),
    ('199.92.111.2', 14230, '65.69.140.83', 4739, 0xD718262A, 0xC626B0EA),
    ('24.19.198.95', 12898, '12.22.207.184', 38024, 0xD2D0A5DE, 0x5C2B394A),
    ('38.27.205.30', 48228, '209.142.163.6', 2217, 0x82989176, 0xAFC7327F),
    ('153.39.163.191', 44251, '202.188.127.2', 1303, 0x5D1809C5, 0x10E828A2),
]
MS_IPV6 = [
    ('3ffe:2501:200:1fff::7', 2794, '3ffe:2501:200:3::1', 1766, 0x2CC18CD5, 0x40207D3D),
    ('3ffe:501:8::260:97ff:fe40:efab', 14230, 'ff02::1', 4739, 0x0F0C461C, 0xDDE51BBF),
    ('3ffe:1900:4545:3:200:f8ff:fe21:67cf', 44251, 'fe80::200:f8ff:fe21:67cf', 38024,
     0x4B61E985, 0x02D1FEEF),
]


def _addr(text: str) -> bytes:
    return ipaddress.ip_address(text).packed


@pytest.mark.parametrize('src,sport,dst,dport,h2,h4', MS_IPV4 + MS_IPV6)
def test_microsoft_verification_vectors(src, sport, dst, dport, h2, h4):
    s, d = _addr(src), _addr(dst)
    assert toeplitz_hash(MS_VERIFICATION_KEY, hash_input(s, d)) == h2
    assert toeplitz_hash(MS_VERIFICATION_KEY, hash_input(s, d, sport, dport)) == h4


def test_input_layout():
    s, d = bytes([1, 2, 3, 4]), bytes([5, 6, 7, 8])
    assert hash_input(s, d) == bytes([1, 2, 3, 4, 5, 6, 7, 8])
    assert hash_input(s, d, 0x1234, 0xABCD) == bytes([1, 2, 3, 4, 5, 6, 7, 8, 0x12, 0x34, 0xAB, 0xCD])
    with pytest.raises(ValueError):
        hash_input(s, bytes(16))
    with pytest.raises(ValueError):
        hash_input(s, d, 1, None)


def _window(key: bytes, i: int) -> int:
    """Key bits i..i+31 as a number, bit i most significant (the definition's other form)."""
    k = int.from_bytes(key, 'big')
    n = len(key) * 8
    return (k >> (n - 32 - i)) & 0xFFFF_FFFF


def test_single_bit_inputs_select_key_windows():
    """An input with only bit i set hashes to the key window starting at bit i."""
    rng = random.Random(1)
    key = rng.randbytes(KEY_BYTES)
    for i in range(MAX_INPUT_BYTES * 8):
        data = (1 << (MAX_INPUT_BYTES * 8 - 1 - i)).to_bytes(MAX_INPUT_BYTES, 'big')
        assert toeplitz_hash(key, data) == _window(key, i), f'input bit {i}'


def test_linear_and_trailing_zeros():
    """XOR-linear in the input; trailing zero bytes add nothing (what the RTL relies on)."""
    rng = random.Random(2)
    for _ in range(50):
        key = rng.randbytes(KEY_BYTES)
        n = rng.choice([8, 12, 32, 36])
        a, b = rng.randbytes(n), rng.randbytes(n)
        ab = bytes(x ^ y for x, y in zip(a, b))
        assert toeplitz_hash(key, ab) == toeplitz_hash(key, a) ^ toeplitz_hash(key, b)
        assert toeplitz_hash(key, a + bytes(MAX_INPUT_BYTES - n)) == toeplitz_hash(key, a)


def test_key_too_short_refused():
    with pytest.raises(ValueError):
        toeplitz_hash(bytes(KEY_BYTES), bytes(MAX_INPUT_BYTES + 1))
    assert toeplitz_hash(bytes(KEY_BYTES), bytes(MAX_INPUT_BYTES)) == 0
