#!/usr/bin/env python3
"""Generate everything that derives from rtl/formats/dma_formats.toml, the DMA formats.

Outputs (all committed, so a reader can browse them without running anything):
  rtl/formats/generated/nic_dma_pkg.sv   SystemVerilog package nic_dma_pkg
  models/formats.py                      Python enums, constants, dataclasses, pack/unpack
  tb/fast/dma_formats.h                  C offsets and masks for the fast harness
  docs/*.md                              the tables between GENERATED markers

`--check` generates into memory and exits 1 if any committed file differs;
tests/model/test_format_source.py runs it, so a stale generated file fails the test suite.
The source's rules are in its header comment; how to change a format: docs/dma-formats.md.
"""
from __future__ import annotations

import argparse
import builtins
import keyword
import re
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "rtl/formats/dma_formats.toml"
SV_OUT = ROOT / "rtl/formats/generated/nic_dma_pkg.sv"
PY_OUT = ROOT / "models/formats.py"
C_OUT = ROOT / "tb/fast/dma_formats.h"
DOCS = ROOT / "docs"
SRC_REL = "rtl/formats/dma_formats.toml"
SV_PKG = "nic_dma_pkg"
# <!-- GENERATED ... : format rx_cpl --> ... <!-- END GENERATED -->
REGION = re.compile(r"(<!-- GENERATED [^>]*?: (format|enum) ([a-z0-9_]+) -->\n)(.*?)(<!-- END GENERATED -->)",
                    re.S)
_AT = re.compile(r"^(\d+)(?:-(\d+))?(?:\[(\d+)(?::(\d+))?\])?$")
_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
_CONST = re.compile(r"^[A-Z][A-Z0-9_]*$")
_STRUCT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}


class FormatError(Exception):
    """The source breaks a rule; the message names the place."""


# ----------------------------------------------------------------------------------- model
@dataclass
class EnumValue:
    name: str
    value: int
    doc: str
    extra: dict[str, str]


@dataclass
class Enum:
    key: str
    bits: int
    sv: str
    sv_prefix: str
    python: str | None
    python_in: str | None
    doc: str
    columns: list[str]
    values: list[EnumValue]
    inline: bool = True       # the docs list the codes in the field's row ("0 none, 1 IPv4")

    def codes(self) -> str:
        """`0 none, 1 IPv4, ...` for a docs table."""
        return ", ".join(f"{v.value} {v.doc}" for v in self.values)


@dataclass
class Constant:
    name: str
    value: int
    lang: list[str]
    doc: str


@dataclass
class Field:
    name: str
    at: str
    byte_lo: int
    byte_hi: int
    bit_lo: int | None        # None: the field is whole bytes
    bit_hi: int | None
    doc: str
    type: str = "uint"        # uint, bool, enum
    enum: Enum | None = None
    codes: Enum | None = None
    max: int | None = None
    required: bool = False
    const: str | None = None
    max_const: str | None = None
    label: str | None = None
    reserved: bool = False

    @property
    def nbytes(self) -> int:
        return self.byte_hi - self.byte_lo + 1

    @property
    def width(self) -> int:
        if self.bit_lo is None:
            return 8 * self.nbytes
        assert self.bit_hi is not None
        return self.bit_hi - self.bit_lo + 1

    @property
    def lsb(self) -> int:
        """Bit position in the whole format (little-endian: byte 0 is bits 7..0)."""
        return 8 * self.byte_lo + (self.bit_lo or 0)

    @property
    def in_group(self) -> bool:
        return self.bit_lo is not None

    @property
    def shift(self) -> int:
        return self.bit_lo or 0

    @property
    def mask(self) -> int:
        """Mask of the field inside its group word (in place)."""
        return ((1 << self.width) - 1) << self.shift

    @property
    def bytes_text(self) -> str:
        return str(self.byte_lo) if self.byte_lo == self.byte_hi else f"{self.byte_lo}-{self.byte_hi}"

    @property
    def bits_text(self) -> str:
        if self.bit_lo is None:
            return ""
        return f"[{self.bit_hi}]" if self.bit_hi == self.bit_lo else f"[{self.bit_hi}:{self.bit_lo}]"

    @property
    def largest(self) -> int:
        return self.max if self.max is not None else (1 << self.width) - 1


@dataclass
class Unit:
    """What one struct member of Python's struct module covers: a whole-byte field, a run
    of reserved bytes, or a bit group (the fields sharing one little-endian word)."""

    byte_lo: int
    byte_hi: int
    fields: list[Field]
    kind: str                 # "field", "reserved", "group"
    var: str = ""

    @property
    def nbytes(self) -> int:
        return self.byte_hi - self.byte_lo + 1

    @property
    def code(self) -> str:
        if self.kind == "reserved" or self.nbytes not in _STRUCT_CODES:
            return f"{self.nbytes}s"
        return _STRUCT_CODES[self.nbytes]

    @property
    def as_int(self) -> bool:
        """Unpacked by struct as an int (else as bytes, converted with int.from_bytes)."""
        return self.code[-1] != "s"

    @property
    def bytes_text(self) -> str:
        return str(self.byte_lo) if self.byte_lo == self.byte_hi else f"{self.byte_lo}-{self.byte_hi}"


@dataclass
class Format:
    key: str
    title: str
    nbytes: int
    python: str
    sv: str
    size_const: str
    doc: str
    groups: dict[int, str]
    fields: list[Field]
    units: list[Unit] = field(default_factory=list)

    @property
    def upper(self) -> str:
        return self.key.upper()

    @property
    def data_fields(self) -> list[Field]:
        return [f for f in self.fields if not f.reserved]


@dataclass
class Source:
    enums: dict[str, Enum]
    constants: list[Constant]
    formats: list[Format]


# ----------------------------------------------------------------------------------- load
def _need(table: dict, key: str, where: str, kind: type) -> object:
    if key not in table:
        raise FormatError(f"{where}: missing `{key}`")
    value = table[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise FormatError(f"{where}: `{key}` must be an integer, got {value!r}")
    if kind is not int and not isinstance(value, kind):
        raise FormatError(f"{where}: `{key}` must be a {kind.__name__}, got {value!r}")
    return value


def _unknown(table: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise FormatError(f"{where}: unknown key(s) {', '.join(extra)} (allowed: {', '.join(sorted(allowed))})")


def _load_enum(key: str, t: dict) -> Enum:
    where = f"enum.{key}"
    _unknown(t, {"bits", "sv", "sv_prefix", "python", "python_in", "doc", "columns", "values", "inline"}, where)
    columns = list(t.get("columns", []))
    values = []
    for i, v in enumerate(_need(t, "values", where, list)):   # type: ignore[union-attr]
        vw = f"{where}.values[{i}]"
        _unknown(v, {"name", "value", "doc", *columns}, vw)
        name = str(_need(v, "name", vw, str))
        if not _CONST.match(name):
            raise FormatError(f"{vw}: name {name!r} must be UPPER_CASE")
        extra = {c: str(v.get(c, "")) for c in columns}
        values.append(EnumValue(name, int(_need(v, "value", vw, int)), str(v.get("doc", "")), extra))  # type: ignore[arg-type]
    bits = int(_need(t, "bits", where, int))  # type: ignore[arg-type]
    seen: set[int] = set()
    for v in values:
        if not 0 <= v.value < (1 << bits):
            raise FormatError(f"{where}: {v.name} = {v.value} does not fit {bits} bits")
        if v.value in seen:
            raise FormatError(f"{where}: value {v.value} given twice")
        seen.add(v.value)
    if 0 not in seen:
        raise FormatError(f"{where}: needs a value 0 (the default of a zeroed entry)")
    return Enum(key, bits, str(_need(t, "sv", where, str)), str(_need(t, "sv_prefix", where, str)),
                t.get("python"), t.get("python_in"), str(t.get("doc", "")), columns, values,
                bool(t.get("inline", True)))


def _parse_at(at: str, where: str) -> tuple[int, int, int | None, int | None]:
    m = _AT.match(at.replace(" ", ""))
    if not m:
        raise FormatError(f"{where}: at = {at!r}: write bytes as \"0-7\" or \"12\", bits as \"13[1:0]\" or \"13[4]\"")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) is not None else lo
    if hi < lo:
        raise FormatError(f"{where}: at = {at!r}: bytes run low to high (\"{hi}-{lo}\")")
    if m.group(3) is None:
        return lo, hi, None, None
    bhi = int(m.group(3))
    blo = int(m.group(4)) if m.group(4) is not None else bhi
    if blo > bhi:
        raise FormatError(f"{where}: at = {at!r}: bits run high to low (\"[{blo}:{bhi}]\")")
    if bhi >= 8 * (hi - lo + 1):
        raise FormatError(f"{where}: at = {at!r}: bit {bhi} is outside bytes {lo}-{hi}")
    return lo, hi, blo, bhi


def _load_field(fmt_key: str, i: int, t: dict, enums: dict[str, Enum]) -> Field:
    where = f"format.{fmt_key}.fields[{i}]"
    _unknown(t, {"name", "at", "doc", "type", "enum", "codes", "max", "required", "const",
                 "max_const", "label", "reserved"}, where)
    name = str(_need(t, "name", where, str))
    where = f"format.{fmt_key}.{name}"
    if not _IDENT.match(name):
        raise FormatError(f"{where}: name must be lower_snake_case")
    lo, hi, blo, bhi = _parse_at(str(_need(t, "at", where, str)), where)
    f = Field(name, str(t["at"]), lo, hi, blo, bhi, str(t.get("doc", "")),
              type=str(t.get("type", "uint")), max=t.get("max"), required=bool(t.get("required", False)),
              const=t.get("const"), max_const=t.get("max_const"), label=t.get("label"),
              reserved=bool(t.get("reserved", False)))
    if f.reserved != (name == "reserved"):
        raise FormatError(f"{where}: a reserved field is named \"reserved\" and has reserved = true")
    if f.type not in ("uint", "bool", "enum"):
        raise FormatError(f"{where}: type {f.type!r}: use uint, bool or enum")
    if f.type == "bool" and f.width != 1:
        raise FormatError(f"{where}: a bool is one bit, this is {f.width}")
    if f.type == "enum":
        ekey = t.get("enum")
        if ekey not in enums:
            raise FormatError(f"{where}: type enum needs enum = one of {', '.join(enums)}")
        f.enum = enums[ekey]
        if f.enum.bits != f.width:
            raise FormatError(f"{where}: enum {ekey} is {f.enum.bits} bits, the field {f.width}")
        if f.enum.python is None:
            raise FormatError(f"{where}: enum {ekey} has no `python` class to type the field with")
    elif "enum" in t:
        raise FormatError(f"{where}: `enum` needs type = \"enum\"")
    if "codes" in t:
        if t["codes"] not in enums:
            raise FormatError(f"{where}: codes = {t['codes']!r} is not an enum")
        f.codes = enums[t["codes"]]
    if f.max is not None and not 0 <= f.max < (1 << f.width) - 1:
        raise FormatError(f"{where}: max = {f.max} must be below the field's all-ones ({(1 << f.width) - 1})")
    if f.max is not None and f.type != "uint":
        raise FormatError(f"{where}: max applies to uint fields")
    for key in ("const", "max_const"):
        v = getattr(f, key)
        if v is not None and not _CONST.match(v):
            raise FormatError(f"{where}: {key} {v!r} must be UPPER_CASE")
    if f.const is not None and not f.in_group:
        raise FormatError(f"{where}: const names a bit-group field's mask; this field is whole bytes")
    return f


def _units(fmt: Format) -> list[Unit]:
    """Check that the fields tile the format and cut it into struct members."""
    where = f"format.{fmt.key}"
    by_bytes: dict[tuple[int, int], list[Field]] = {}
    for f in fmt.fields:
        if f.byte_hi >= fmt.nbytes:
            raise FormatError(f"{where}.{f.name}: at = {f.at!r} is past the format's {fmt.nbytes} bytes")
        by_bytes.setdefault((f.byte_lo, f.byte_hi), []).append(f)
    units = []
    for (lo, hi), fields in sorted(by_bytes.items()):
        if any(f.in_group for f in fields):
            if not all(f.in_group for f in fields):
                raise FormatError(f"{where}: bytes {lo}-{hi} hold a whole-byte field and bit fields")
            bits = [0] * (8 * (hi - lo + 1))
            for f in fields:
                for b in range(f.shift, f.shift + f.width):
                    if bits[b]:
                        raise FormatError(f"{where}.{f.name}: bit {b} of bytes {lo}-{hi} is taken twice")
                    bits[b] = 1
            if not all(bits):
                free = [b for b, used in enumerate(bits) if not used]
                raise FormatError(f"{where}: bytes {lo}-{hi}: bits {free} belong to no field "
                                  f"(add a reserved field)")
            units.append(Unit(lo, hi, sorted(fields, key=lambda f: f.shift), "group"))
        else:
            if len(fields) > 1:
                raise FormatError(f"{where}: bytes {lo}-{hi} are given to {', '.join(f.name for f in fields)}")
            f = fields[0]
            units.append(Unit(lo, hi, fields, "reserved" if f.reserved else "field"))
    pos = 0
    for u in units:
        if u.byte_lo < pos:
            raise FormatError(f"{where}: bytes {u.byte_lo}-{u.byte_hi} overlap the field before them")
        if u.byte_lo > pos:
            raise FormatError(f"{where}: bytes {pos}-{u.byte_lo - 1} belong to no field (add a reserved field)")
        pos = u.byte_hi + 1
    if pos != fmt.nbytes:
        raise FormatError(f"{where}: bytes {pos}-{fmt.nbytes - 1} belong to no field (add a reserved field)")
    for u in units:
        if u.kind == "group":
            u.var = f"g{u.byte_lo}"
        elif u.kind == "reserved":
            u.var = f"rsvd{u.byte_lo}"
        else:
            u.var = _local(u.fields[0].name)
    for lo in fmt.groups:
        if not any(u.kind == "group" and u.byte_lo == lo for u in units):
            raise FormatError(f"{where}: groups names byte {lo}, which holds no bit fields")
    return units


def _local(name: str) -> str:
    """A Python local for field `name` that does not hide a builtin (`len` -> `len_`)."""
    return name + "_" if hasattr(builtins, name) or keyword.iskeyword(name) else name


def load(path: Path = SOURCE) -> Source:
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(f"{path}: {exc}") from None
    _unknown(raw, {"enum", "constant", "format"}, str(path))
    enums = {k: _load_enum(k, v) for k, v in raw.get("enum", {}).items()}
    constants = []
    for name, t in raw.get("constant", {}).items():
        where = f"constant.{name}"
        _unknown(t, {"value", "lang", "doc"}, where)
        if not _CONST.match(name):
            raise FormatError(f"{where}: name must be UPPER_CASE")
        lang = list(t.get("lang", ["sv", "py"]))
        if not set(lang) <= {"sv", "py"}:
            raise FormatError(f"{where}: lang lists \"sv\" and/or \"py\"")
        constants.append(Constant(name, int(_need(t, "value", where, int)), lang, str(t.get("doc", ""))))  # type: ignore[arg-type]
    formats = []
    for key, t in raw.get("format", {}).items():
        where = f"format.{key}"
        _unknown(t, {"title", "bytes", "python", "sv", "size_const", "doc", "groups", "fields"}, where)
        fields = [_load_field(key, i, ft, enums) for i, ft in enumerate(_need(t, "fields", where, list))]  # type: ignore[arg-type]
        groups = {int(k): str(v) for k, v in t.get("groups", {}).items()}
        fmt = Format(key, str(_need(t, "title", where, str)), int(_need(t, "bytes", where, int)),  # type: ignore[arg-type]
                     str(_need(t, "python", where, str)), str(_need(t, "sv", where, str)),
                     str(t.get("size_const", f"{key.upper()}_BYTES")), str(t.get("doc", "")), groups, fields)
        names = [f.name for f in fmt.data_fields]
        if len(set(names)) != len(names):
            raise FormatError(f"{where}: a field name is used twice")
        required_seen_default = False
        for f in fmt.data_fields:
            if not f.required:
                required_seen_default = True
            elif required_seen_default:
                raise FormatError(f"{where}.{f.name}: required fields come before the others "
                                  f"(a Python dataclass needs them first)")
        fmt.units = _units(fmt)
        formats.append(fmt)
    return Source(enums, constants, formats)


# ------------------------------------------------------------------------------ text helpers
def _plain(doc: str) -> str:
    """Markdown to comment text: links become their text, emphasis marks go."""
    doc = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", doc)
    return doc.replace("**", "")


def _comment(prefix: str, text: str, width: int = 100) -> list[str]:
    return textwrap.wrap(_plain(text), width=width, initial_indent=prefix, subsequent_indent=prefix,
                         break_long_words=False, break_on_hyphens=False) or [prefix.rstrip()]


def _where(f: Field) -> str:
    b = f"byte {f.byte_lo}" if f.byte_lo == f.byte_hi else f"bytes {f.bytes_text}"
    return b + (f" {f.bits_text}" if f.in_group else "")


def _meaning(f: Field) -> str:
    e = f.enum or f.codes
    if e is None or not e.inline:
        return f.doc
    return f"{f.doc}: {e.codes()}" if f.doc else e.codes()


# ----------------------------------------------------------------------------- SystemVerilog
def gen_sv(src: Source) -> str:
    out = [
        f"// GENERATED by scripts/gen_formats.py from {SRC_REL}: do not edit.",
        "// Change the source and run `make formats` (docs/dma-formats.md, \"Changing a format\").",
        "//",
        "// The DMA formats of docs/dma-formats.md and docs/tx.md: the enums of their fields, one",
        "// packed struct per format (little-endian in memory: byte 0 is bits [7:0], so a struct",
        "// is the ring entry as the DMA data bus carries it) and the constants of their rules.",
        f"package {SV_PKG};",
        "",
    ]
    for e in src.enums.values():
        out += _comment("  // ", e.doc)
        out.append(f"  typedef enum logic [{e.bits - 1}:0] {{")
        width = max(len(e.sv_prefix + v.name) for v in e.values)
        for i, v in enumerate(e.values):
            sep = "," if i < len(e.values) - 1 else ""
            line = f"    {(e.sv_prefix + v.name).ljust(width)} = {e.bits}'d{v.value}{sep}"
            if v.doc and e.inline:
                line = f"{line:{len(e.sv_prefix) + width + 14}}// {_plain(v.doc)}"
            out.append(line)
        out.append(f"  }} {e.sv};")
        out.append("")
    consts = [c for c in src.constants if "sv" in c.lang]
    if consts:
        width = max(len(c.name) for c in consts)
        for c in consts:
            out += _comment("  // ", c.doc)
            out.append(f"  localparam int unsigned {c.name.ljust(width)} = {c.value};")
        out.append("")
    for fmt in src.formats:
        out.append(f"  // ---------------------------------------------------------------- {fmt.title} ({fmt.nbytes} bytes)")
        out.append(f"  localparam int unsigned {fmt.upper}_BYTES = {fmt.nbytes};")
        out.append("")
        out.append("  typedef struct packed {")
        decls = []
        for f in sorted(fmt.fields, key=lambda f: -f.lsb):
            if f.reserved:
                name = f"rsvd_{f.byte_lo}" + (f"_{f.bit_lo}" if f.in_group else "")
            else:
                name = f.name
            if f.enum is not None:
                typ = f.enum.sv
            elif f.width == 1:
                typ = "logic"
            else:
                typ = f"logic [{f.width - 1}:0]"
            where = _where(f)
            what = "reserved, zero" if f.reserved else f.doc
            if f.codes is not None:
                what += f" (codes: {f.codes.sv})"
            if f.label and f.label != f.name:
                what = f"{f.label}: {what}"
            decls.append((typ, name, f"{where}: {what}"))
        tw = max(len(t) for t, _, _ in decls)
        for typ, name, text in decls:
            out += _comment("    // ", text)
            out.append(f"    {typ.ljust(tw)} {name};")
        out.append(f"  }} {fmt.sv};")
        out.append("")
    out.append("endpackage")
    out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------------------------ Python
def _py_enum_tuple(e: Enum) -> str:
    return f"_{e.key.upper()}_VALUES"


def _enum_range(e: Enum) -> str:
    if _contiguous(e):
        return f"0..{len(e.values) - 1}"
    return ", ".join(f"{v.value} {v.name}" for v in e.values)


def _contiguous(e: Enum) -> bool:
    return sorted(v.value for v in e.values) == list(range(len(e.values)))


def _py_group_parts(u: Unit) -> list[str]:
    parts = []
    for f in u.fields:
        if f.reserved:
            continue
        if f.type == "bool":
            parts.append(f"(0x{f.mask:X} if self.{f.name} else 0)")
        else:
            v = f"int(self.{f.name})" if f.type == "enum" else f"self.{f.name}"
            parts.append(f"({v} << {f.shift})" if f.shift else v)
    return parts or ["0"]


def _py_or(head: str, parts: list[str], tail: str = "", width: int = 100) -> list[str]:
    """`head` + parts joined by ` | ` + `tail`; over several lines inside parentheses, each
    continuation line starting with `| ` under the first part."""
    one = head + " | ".join(parts) + tail
    if len(one) <= width:
        return [one]
    lines = [head + "(" + parts[0]]
    pad = " " * len(head)
    for p in parts[1:]:
        if len(lines[-1]) + 3 + len(p) <= width - 1:
            lines[-1] += " | " + p
        else:
            lines.append(pad + " | " + p)
    lines[-1] += ")" + tail
    return lines


def _py_group_prop(fmt: Format, u: Unit) -> str:
    return fmt.groups.get(u.byte_lo, "")


def gen_python(src: Source) -> str:
    o: list[str] = []
    o += [
        f'"""In-memory formats of the RX and TX rings: descriptors and completions.',
        "",
        f"GENERATED by scripts/gen_formats.py from {SRC_REL}: do not edit. Change the",
        "source and run `make formats` (docs/dma-formats.md, \"Changing a format\").",
        "",
        "The formats are docs/dma-formats.md (RX) and docs/tx.md (TX). All multi-byte fields are",
        "little-endian. `pack()` validates every field's range and raises `ValueError` naming the",
        "field; `unpack()` decodes the bytes and, with `strict=True`, also rejects non-zero reserved",
        "bits and values above a field's maximum (the NIC must not write them). An enum field",
        "whose value is undefined is always refused.",
        '"""',
        "from __future__ import annotations",
        "",
        "import struct",
        "from dataclasses import dataclass",
        "from enum import IntEnum",
        "",
    ]
    for c in src.constants:
        if "py" in c.lang:
            o.append(f"{c.name} = {c.value}")
            if c.doc:
                o.append(f'"""{c.doc}"""')
    o.append("")
    # enums
    for e in src.enums.values():
        if not e.python:
            continue
        o += ["", f"class {e.python}(IntEnum):"]
        o += _docstring(e.doc, "    ")
        o.append("")
        for v in e.values:
            o.append(f"    {v.name} = {v.value}")
        o.append("")
    o.append("")
    for e in src.enums.values():
        if e.python and _contiguous(e):
            o.append(f"{_py_enum_tuple(e)} = tuple(sorted({e.python}))")
            o.append(f'"""{e.python} by value: a tuple index is cheaper than the enum\'s lookup."""')
    o += [
        "",
        "",
        "def _check_uint(name: str, value: int, bits: int) -> None:",
        "    if type(value) is int and 0 <= value < (1 << bits):    # the common case, checked first",
        "        return",
        "    if isinstance(value, bool) or not isinstance(value, int):",
        "        raise ValueError(f'{name} must be an int, got {type(value).__name__} {value!r}')",
        "    if not 0 <= value < (1 << bits):",
        "        raise ValueError(f'{name}={value} out of range 0..{(1 << bits) - 1} ({bits} bits)')",
        "",
        "",
        "def _check_bool(name: str, value: object) -> None:",
        "    if value is True or value is False:",
        "        return",
        "    if not isinstance(value, int) or value not in (0, 1):",
        "        raise ValueError(f'{name} must be a bool, got {value!r}')",
        "",
        "",
        "def _check_len(what: str, data: bytes, n: int) -> None:",
        "    if len(data) != n:",
        "        raise ValueError(f'{what} is {n} bytes, got {len(data)}')",
    ]
    for fmt in src.formats:
        o += _py_format(fmt)
    while o and o[-1] == "":
        o.pop()
    return "\n".join(o) + "\n"


def _py_format(fmt: Format) -> list[str]:
    cls = fmt.python
    s = f"_{fmt.upper}_STRUCT"
    o = ["", "", f"# {'=' * 94}", f"# {fmt.title} ({fmt.nbytes} bytes)", f"# {'=' * 94}", ""]
    o.append(f"{fmt.size_const} = {fmt.nbytes}")
    o.append(f'"""Size of one {fmt.title}."""')
    for u in fmt.units:
        if u.kind != "group":
            continue
        o.append("")
        o.append(f"# --- bytes {u.bytes_text}: {', '.join(f.name for f in u.fields if not f.reserved)}"
                 if u.nbytes > 1 else
                 f"# --- byte {u.byte_lo}: {', '.join(f.name for f in u.fields if not f.reserved)}")
        for f in u.fields:
            name = f.const or f"{fmt.upper}_{f.name.upper()}"
            if f.width == 1 or f.reserved:
                o.append(f"{name} = 0x{f.mask:0{2 * u.nbytes}X}")
            else:
                o.append(f"{name}_SHIFT = {f.shift}")
                o.append(f"{name}_MASK = 0x{f.mask:0{2 * u.nbytes}X}")
    for f in fmt.data_fields:
        if f.max_const:
            o.append(f"{f.max_const} = {f.largest}")
    o.append("")
    o.append(f"{s} = struct.Struct('<{''.join(u.code for u in fmt.units)}')")
    o.append(f"assert {s}.size == {fmt.size_const}")
    o += ["", "", "@dataclass", f"class {cls}:"]
    o += _docstring(fmt.doc, "    ")
    o.append("")
    for f in fmt.data_fields:
        typ = {"uint": "int", "bool": "bool"}.get(f.type) or f.enum.python  # type: ignore[union-attr]
        if f.required:
            o.append(f"    {f.name}: {typ}")
        elif f.type == "bool":
            o.append(f"    {f.name}: {typ} = False")
        elif f.type == "enum":
            zero = next(v for v in f.enum.values if v.value == 0)  # type: ignore[union-attr]
            o.append(f"    {f.name}: {typ} = {typ}.{zero.name}")
        else:
            o.append(f"    {f.name}: {typ} = 0")
    # group properties
    for u in fmt.units:
        prop = _py_group_prop(fmt, u)
        if u.kind == "group" and prop:
            names = ", ".join(f.name for f in u.fields if not f.reserved)
            o += ["", "    @property", f"    def {prop}(self) -> int:",
                  f'        """Byte{"s" if u.nbytes > 1 else ""} {u.bytes_text}: {names}."""']
            o += _py_or("        return ", _py_group_parts(u))
    # validate
    o += ["", "    def validate(self) -> None:",
          '        """Raise `ValueError` naming the first field that does not fit its bits."""']
    for f in fmt.data_fields:
        q = f"'{cls}.{f.name}'"
        if f.type == "uint":
            o.append(f"        _check_uint({q}, self.{f.name}, {f.width})")
            if f.max is not None:
                o.append(f"        if self.{f.name} > {f.max}:")
                o.append(f"            raise ValueError(f'{cls}.{f.name}={{self.{f.name}}} out of range 0..{f.max}')")
        elif f.type == "bool":
            o.append(f"        _check_bool({q}, self.{f.name})")
        else:
            e = f.enum
            assert e is not None
            o += [
                "        try:",
                f"            {e.python}(self.{f.name})",
                "        except ValueError:",
                f"            raise ValueError(f'{cls}.{f.name}={{self.{f.name}!r}} is not a valid {e.python} '",
                f"                             '({_enum_range(e)})') from None",
            ]
    # pack
    args = []
    for u in fmt.units:
        if u.kind == "reserved":
            args.append(f"bytes({u.nbytes})")
        elif u.kind == "group":
            prop = _py_group_prop(fmt, u)
            expr = f"self.{prop}" if prop else "(" + " | ".join(_py_group_parts(u)) + ")"
            args.append(expr if u.as_int else f"({expr}).to_bytes({u.nbytes}, 'little')")
        else:
            f = u.fields[0]
            v = f"int(self.{f.name})" if f.type == "enum" else f"self.{f.name}"
            args.append(v if u.as_int else f"{v}.to_bytes({u.nbytes}, 'little')")
    o += ["", "    def pack(self) -> bytes:", f'        """The {fmt.nbytes} bytes of the ring entry."""',
          "        self.validate()"]
    o += _wrap_call(f"        return {s}.pack(", args, ")")
    # unpack
    o += ["", "    @classmethod", f"    def unpack(cls, data: bytes, strict: bool = False) -> {cls}:",
          f'        """Decode {fmt.nbytes} bytes. Reserved bits are ignored, as the NIC ignores them, unless',
          '        `strict`; an undefined enum value always raises `ValueError`."""',
          f"        _check_len('{cls}', data, {fmt.size_const})"]
    o += _wrap_call("        (", [u.var for u in fmt.units], f") = {s}.unpack(bytes(data))".replace(" ", "\xa0"))
    o[-1] = o[-1].replace("\xa0", " ")
    for u in fmt.units:
        if u.kind in ("group", "field") and not u.as_int:
            o.append(f"        {u.var} = int.from_bytes({u.var}, 'little')")
    values: dict[str, str] = {}
    checks: list[str] = []
    strict: list[str] = []
    for u in fmt.units:
        if u.kind == "reserved":
            strict += [f"            if any({u.var}):",
                       f"                raise ValueError(f'{cls} reserved byte{'s' if u.nbytes > 1 else ''} {u.bytes_text} "
                       f"not zero: {{{u.var}.hex()}}')"]
            continue
        for f in u.fields:
            # lv: the local holding the field's value (the unpacked member for whole bytes)
            lv = u.var if u.kind == "field" else _local(f.name)
            m = (1 << f.width) - 1
            raw = lv if u.kind == "field" else (f"({u.var} >> {f.shift}) & 0x{m:X}" if f.shift else f"{u.var} & 0x{m:X}")
            s_ = "s" if u.nbytes > 1 else ""
            where = (f"(byte{s_} {u.bytes_text} = 0x{{{u.var}:0{2 * u.nbytes}x}})" if u.kind == "group"
                     else f"(byte{s_} {u.bytes_text})")
            if f.reserved:
                bits = f.bits_text if f.width > 1 else f.bits_text.strip("[]")
                strict += [f"            if {u.var} & 0x{f.mask:X}:",
                           f"                raise ValueError(f'{cls} byte{s_} {u.bytes_text} reserved "
                           f"bit{'s' if f.width > 1 else ''} {bits} set: 0x{{{u.var}:0{2 * u.nbytes}x}}')"]
                continue
            if f.type == "bool":
                values[f.name] = f"bool({u.var} & 0x{f.mask:X})"
                continue
            if f.type == "uint" and f.max is None:
                values[f.name] = raw
                continue
            if u.kind == "group":
                checks.append(f"        {lv} = {raw}")
            values[f.name] = lv
            if f.type == "uint":
                strict += [f"            if {lv} > {f.max}:",
                           f"                raise ValueError(f'{cls} {f.name}={{{lv}}} (max {f.max})')"]
                continue
            e = f.enum
            assert e is not None and e.python is not None
            undefined = f"            raise ValueError(f'{cls} {f.name}={{{lv}}} is undefined {where}')"
            if _contiguous(e):
                if len(e.values) < 1 << f.width:
                    checks += [f"        if {lv} >= {len(e.values)}:", undefined]
                values[f.name] = f"{_py_enum_tuple(e)}[{lv}]"
            else:
                checks += [f"        if {lv} not in {e.python}._value2member_map_:", undefined]
                values[f.name] = f"{e.python}({lv})"
    o += checks
    if strict:
        o.append("        if strict:")
        o += strict
    o.append("        return cls(")
    for f in fmt.data_fields:
        o.append(f"            {f.name}={values[f.name]},")
    o.append("        )")
    return o


def _wrap_call(head: str, args: list[str], tail: str, width: int = 100) -> list[str]:
    """`head` + comma-separated `args` + `tail`, continuation lines under the first argument."""
    lines = textwrap.wrap(", ".join(args) + tail, width=width - len(head), break_long_words=False,
                          break_on_hyphens=False)
    return [head + lines[0]] + [" " * len(head) + ln for ln in lines[1:]]


def _docstring(text: str, indent: str, width: int = 96) -> list[str]:
    lines = textwrap.wrap(text, width=width - len(indent) - 3, break_long_words=False,
                          break_on_hyphens=False) or [""]
    out = [f'{indent}"""{lines[0]}'] + [f"{indent}{ln}" for ln in lines[1:]]
    out[-1] += '"""'
    return out


# ----------------------------------------------------------------------------------------- C
def gen_c(src: Source) -> str:
    o = [
        f"/* GENERATED by scripts/gen_formats.py from {SRC_REL}: do not edit.",
        " * The DMA formats for C code (tb/fast/fastmem.cpp). For a field: <FORMAT>_<FIELD>_OFF",
        " * its first byte and _LEN its bytes; a field inside a bit group also has _SHIFT and _MASK",
        " * (in place) within the little-endian word of _LEN bytes at _OFF. */",
        "#ifndef DMA_FORMATS_H",
        "#define DMA_FORMATS_H",
        "",
    ]
    for e in src.enums.values():
        for v in e.values:
            o.append(f"#define {e.sv_prefix}{v.name} {v.value}")
        o.append("")
    for fmt in src.formats:
        o.append(f"/* {fmt.title} */")
        o.append(f"#define {fmt.upper}_BYTES {fmt.nbytes}")
        for u in fmt.units:
            for f in u.fields:
                if f.reserved:
                    continue
                n = f"{fmt.upper}_{f.name.upper()}"
                o.append(f"#define {n}_OFF {u.byte_lo}")
                o.append(f"#define {n}_LEN {u.nbytes}")
                if u.kind == "group":
                    o.append(f"#define {n}_SHIFT {f.shift}")
                    o.append(f"#define {n}_MASK 0x{f.mask:X}u")
        o.append("")
    o.append("#endif /* DMA_FORMATS_H */")
    o.append("")
    return "\n".join(o)


# -------------------------------------------------------------------------------------- docs
def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_row(cells: list[str]) -> str:
    return "|" + "|".join(f" {_md_cell(c)} " if c else " " for c in cells) + "|"


def gen_format_table(fmt: Format) -> str:
    rows = ["| bytes | bits | field | meaning |", "|---|---|---|---|"]
    for f in fmt.fields:
        name = "reserved" if f.reserved else f"`{f.label or f.name}`"
        rows.append(_md_row([f.bytes_text, f.bits_text, name, _meaning(f)]))
    return "\n".join(rows) + "\n"


def gen_enum_table(e: Enum) -> str:
    head = ["value", "name", *e.columns, "meaning"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for v in e.values:
        cells = [str(v.value), f"`{v.name}`", *(v.extra[c] for c in e.columns), v.doc]
        rows.append(_md_row(cells))
    return "\n".join(rows) + "\n"


def gen_docs(src: Source, pages: dict[Path, str]) -> dict[Path, str]:
    """The pages with every GENERATED region rewritten; every format needs a table somewhere."""
    formats = {f.key: f for f in src.formats}
    shown: set[str] = set()
    out = {}
    for path, text in pages.items():
        def repl(m: re.Match[str]) -> str:
            kind, key = m.group(2), m.group(3)
            if kind == "format":
                if key not in formats:
                    raise FormatError(f"{path.relative_to(ROOT)}: GENERATED region names format {key!r}, "
                                      f"not in {SRC_REL}")
                shown.add(key)
                body = gen_format_table(formats[key])
            else:
                if key not in src.enums:
                    raise FormatError(f"{path.relative_to(ROOT)}: GENERATED region names enum {key!r}, "
                                      f"not in {SRC_REL}")
                body = gen_enum_table(src.enums[key])
            return m.group(1) + body + m.group(5)
        out[path] = REGION.sub(repl, text)
    missing = sorted(set(formats) - shown)
    if missing:
        raise FormatError(f"no docs page shows format(s) {', '.join(missing)}: add "
                          f"`<!-- GENERATED from {SRC_REL}: format NAME -->` and "
                          f"`<!-- END GENERATED -->` where the table belongs (docs/dma-formats.md)")
    return out


# -------------------------------------------------------------------------------------- main
def outputs(src: Source) -> dict[Path, str]:
    pages = {p: p.read_text() for p in sorted(DOCS.glob("*.md"))}
    files = {SV_OUT: gen_sv(src), PY_OUT: gen_python(src), C_OUT: gen_c(src)}
    for path, text in gen_docs(src, pages).items():
        if text != pages[path]:
            files[path] = text
        else:
            files.setdefault(path, text)
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare against the committed files, write nothing")
    args = ap.parse_args()
    try:
        files = outputs(load())
    except FormatError as exc:
        print(f"{SRC_REL}: {exc}", file=sys.stderr)
        return 1
    if args.check:
        stale = [str(p.relative_to(ROOT)) for p, text in files.items()
                 if not p.is_file() or p.read_text() != text]
        if stale:
            print("out of date (run `make formats`): " + ", ".join(stale), file=sys.stderr)
            return 1
        print("generated format files are up to date")
        return 0
    written = []
    for p, text in files.items():
        if not p.is_file() or p.read_text() != text:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            written.append(str(p.relative_to(ROOT)))
    print("generated " + (", ".join(written) if written else "nothing: every file is up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
