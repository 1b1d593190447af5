"""Print a SymbiYosys counterexample (or cover) trace cycle by cycle, as a table.

    .venv/bin/python -m tb.formal.trace TRACE.vcd [PATTERN ...] [--all]

One row per step (step 0 is the reset cycle), one column per signal whose name contains one of
the PATTERNs (default: the top module's ports and the property module's f_ / p_ model
registers); values in hex, '.' when unchanged since the previous row. `--all` takes every
signal, changed or not; by default columns that never change are listed once above the table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _value(v: object) -> str:
    if isinstance(v, int):
        return f"{v:x}"
    s = str(v)
    if s and set(s) <= {"0", "1"}:
        return f"{int(s, 2):x}"
    return s


def load(path: Path) -> tuple[int, dict[str, list[str]]]:
    """(number of steps, {signal name: value per step}) of a Yosys-SMTBMC VCD (step i at 10*i)."""
    import pywellen

    w = pywellen.Waveform(str(path))
    signals: dict[str, list[tuple[int, str]]] = {}
    last = 0
    for var in w.all_vars():
        name = var.full_name(w.hierarchy) if callable(getattr(var, "full_name", None)) else var.full_name
        if "_witness_" in name or name.endswith("smt_step") or name.endswith("smt_clock"):
            continue
        tv = [(int(t), _value(v)) for t, v in var.tv]
        if tv:
            last = max(last, tv[-1][0])
        signals[name] = tv
    steps = last // 10 + 1
    table: dict[str, list[str]] = {}
    for name, tv in signals.items():
        vals, i, cur = [], 0, "?"
        for s in range(steps):
            while i < len(tv) and tv[i][0] <= 10 * s:
                cur = tv[i][1]
                i += 1
            vals.append(cur)
        table[name] = vals
    return steps, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.formal.trace", description=__doc__.split("\n\n")[0])
    ap.add_argument("vcd", type=Path)
    ap.add_argument("patterns", nargs="*", help="substrings of signal names (default: ports and model registers)")
    ap.add_argument("--all", action="store_true", help="show constant columns in the table too")
    args = ap.parse_args(argv)
    if not args.vcd.is_file():
        print(f"trace: {args.vcd}: no such file", file=sys.stderr)
        return 2
    steps, table = load(args.vcd)
    names = sorted(table)
    if args.patterns:
        names = [n for n in names if any(p in n for p in args.patterns)]
    else:
        tops = {n.split(".")[0] for n in names}
        names = [n for n in names if n.count(".") == 1 and n.split(".")[0] in tops
                 or any(f".{m}" in n and "_props." in n for m in ("f_", "p_"))]
    if not names:
        print("trace: no signal matches", file=sys.stderr)
        return 2
    short = {n: n.split(".", 1)[-1] for n in names}
    const = [n for n in names if len(set(table[n])) == 1] if not args.all else []
    cols = [n for n in names if n not in const]
    if const:
        print("constant: " + ", ".join(f"{short[n]}={table[n][0]}" for n in const))
    if not cols:
        return 0
    width = {n: max(len(short[n]), *(len(v) for v in table[n])) for n in cols}
    print("step " + " ".join(short[n].rjust(width[n]) for n in cols))
    for s in range(steps):
        cells = []
        for n in cols:
            v = table[n][s]
            cells.append(("." if s and v == table[n][s - 1] else v).rjust(width[n]))
        print(f"{s:>4} " + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
