"""The DMA formats' one source (rtl/formats/dma_formats.toml) and its generator
(scripts/gen_formats.py): the committed outputs are current, the generator refuses a source
that breaks its rules with a message naming the place, and what it generates for a new
field packs to the bytes the rules say (expected bytes built by hand, not by the generator).
"""
from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from models.rss import RssType

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = REPO_ROOT / "rtl/formats/dma_formats.toml"


@functools.cache
def _gen() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_formats", REPO_ROOT / "scripts/gen_formats.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_formats"] = mod          # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod


def test_generated_files_up_to_date() -> None:
    res = subprocess.run([sys.executable, str(REPO_ROOT / "scripts/gen_formats.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr + "\nrun `make formats` and commit the result"


def test_rss_type_follows_the_source() -> None:
    # models.rss.RssType is hand-written (the RSS model adds its rules to it); the codes are
    # the completion format's.
    enum = tomllib.loads(SOURCE.read_text())["enum"]["rss_type"]
    assert enum["python_in"] == "models.rss.RssType"
    assert [(v["name"], v["value"]) for v in enum["values"]] == [(t.name, int(t)) for t in RssType]


def _load(tmp_path: Path, text: str):
    p = tmp_path / "f.toml"
    p.write_text(text)
    return _gen().load(p)


HEAD = '''
[enum.kind]
bits = 2
sv = "kind_e"
sv_prefix = "K_"
python = "Kind"
values = [{ name = "A", value = 0 }, { name = "B", value = 1 }, { name = "C", value = 2 }]
'''


@pytest.mark.parametrize("fields, message", [
    ('{ name = "a", at = "0-1" }, { name = "b", at = "3" }', "bytes 2-2 belong to no field"),
    ('{ name = "a", at = "0-1" }, { name = "b", at = "1-3" }', "overlap"),
    ('{ name = "a", at = "0-3" }, { name = "b", at = "4" }', "past the format's 4 bytes"),
    ('{ name = "a", at = "0-2" }, { name = "b", at = "3[3:0]" }', "bits [4, 5, 6, 7] belong to no field"),
    ('{ name = "a", at = "0-2" }, { name = "b", at = "3[4:0]" }, { name = "c", at = "3[7:4]" }',
     "bit 4 of bytes 3-3 is taken twice"),
    ('{ name = "a", at = "0-2" }, { name = "b", at = "3[7:0]", type = "bool" }', "a bool is one bit"),
    ('{ name = "a", at = "0-2" }, { name = "b", at = "3[7:0]", type = "enum", enum = "kind" }',
     "enum kind is 2 bits, the field 8"),
    ('{ name = "a", at = "0-3", colour = "red" }', "unknown key(s) colour"),
    ('{ name = "a", at = "0-3" }, { name = "b", at = "0-3" }', "bytes 0-3 are given to a, b"),
    ('{ name = "a", at = "0-1" }, { name = "b", at = "1-3" }, { name = "c", at = "0" }', "overlap"),
    ('{ name = "a", at = "0-1" }, { name = "b", at = "2-3", required = true }', "required fields come before"),
    ('{ name = "Bad", at = "0-3" }', "lower_snake_case"),
    ('{ name = "a", at = "3-0" }', "bytes run low to high"),
    ('{ name = "a", at = "0-2" }, { name = "reserved", at = "3" }', "reserved = true"),
])
def test_source_rules(tmp_path: Path, fields: str, message: str) -> None:
    gen = _gen()
    text = HEAD + f'[format.t]\ntitle = "T"\nbytes = 4\npython = "T"\nsv = "t_t"\nfields = [{fields}]\n'
    with pytest.raises(gen.FormatError, match=re.escape(message)):
        _load(tmp_path, text)


NEW_FORMAT = HEAD + '''
[format.coal_cpl]
title = "coalesced completion"
bytes = 12
python = "CoalCpl"
sv = "coal_cpl_t"
groups = { 6 = "ctl" }
fields = [
  { name = "base", at = "0-2", required = true, doc = "24-bit number" },
  { name = "count", at = "3-4", doc = "16-bit" },
  { name = "reserved", at = "5", reserved = true },
  { name = "mss", at = "6-7[13:0]", doc = "a field across two bytes" },
  { name = "kind", at = "6-7[15:14]", type = "enum", enum = "kind" },
  { name = "flag", at = "8[0]", type = "bool", const = "COAL_FLAG" },
  { name = "level", at = "8[3:1]", max = 5 },
  { name = "reserved", at = "8[7:4]", reserved = true },
  { name = "tail", at = "9-11" },
]
'''


def test_a_new_format_packs_as_its_table_says(tmp_path: Path) -> None:
    gen = _gen()
    src = _load(tmp_path, NEW_FORMAT)
    mod = types.ModuleType("coal_formats")
    sys.modules[mod.__name__] = mod           # dataclasses look their module up by name
    exec(compile(gen.gen_python(src), "coal_formats.py", "exec"), mod.__dict__)
    c = mod.CoalCpl(base=0xABCDEF, count=0x1234, mss=0x2DAD, kind=mod.Kind.C, flag=True, level=5,
                    tail=0x010203)
    # bytes 0-2 base LE, 3-4 count LE, 5 reserved, 6-7 word = kind << 14 | mss, 8 = level << 1 | flag
    word = (2 << 14) | 0x2DAD
    expected = bytes([0xEF, 0xCD, 0xAB, 0x34, 0x12, 0, word & 0xFF, word >> 8, (5 << 1) | 1,
                      0x03, 0x02, 0x01])
    assert c.pack() == expected
    assert mod.CoalCpl.unpack(expected, strict=True) == c
    assert c.ctl == word and mod.COAL_FLAG == 0x01
    assert mod.COAL_CPL_MSS_SHIFT == 0 and mod.COAL_CPL_MSS_MASK == 0x3FFF
    with pytest.raises(ValueError, match="level"):
        mod.CoalCpl(base=0, level=6).pack()
    with pytest.raises(ValueError, match="kind=3 is undefined"):
        mod.CoalCpl.unpack(expected[:7] + bytes([expected[7] | 0xC0]) + expected[8:])
    bad = bytearray(expected)
    bad[8] |= 0x10
    assert mod.CoalCpl.unpack(bytes(bad)) == c
    with pytest.raises(ValueError, match="reserved bits \\[7:4\\]"):
        mod.CoalCpl.unpack(bytes(bad), strict=True)
    bad = bytearray(expected)
    bad[8] = (7 << 1) | 1
    with pytest.raises(ValueError, match="level=7"):
        mod.CoalCpl.unpack(bytes(bad), strict=True)
    sv = gen.gen_sv(src)
    assert "logic [13:0] mss;" in sv and "kind_e       kind;" in sv and "} coal_cpl_t;" in sv
    table = gen.gen_format_table(src.formats[0])
    assert "| 6-7 | [13:0] | `mss` | a field across two bytes |" in table
