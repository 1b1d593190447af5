"""Compare two benchmark JSON documents value by value: did a change move a cycle-exact number?

    python -m bench.compare BEFORE.json AFTER.json [--ignore REGEX]

Both documents are flattened to leaves (`configs[0].results[3].frames_per_cycle`); a leaf
present in one only, or with another value, is listed. Leaves whose name matches `--ignore`
(default: wall-clock and machine figures: a name with a `wall`, `load`, `date` or `host`
part, ending in `cpu_s`, or `time`, `timestamp`, `rev`, `git_rev`) are counted but not compared, since they are not cycle-exact. Prints a
one-line summary per document pair and every difference; exit status 0 when every compared
value is equal, 1 when some differ (as diff does), 2 for a bad command line or an unreadable file.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

DEFAULT_IGNORE = r"(^|_)(wall|load|loadavg|date|host)(_|$)|(^|_)cpu_s$|^(time|timestamp|git_rev|rev)$"


def leaves(doc: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every leaf of a JSON document, in document order."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from leaves(value, f"{path}.{key}" if path else str(key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from leaves(value, f"{path}[{i}]")
    else:
        yield path, doc


@dataclass
class Comparison:
    compared: int = 0
    ignored: int = 0
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(path, before, after); a missing side is the string '<absent>'."""


def compare(before: Any, after: Any, ignore: str = DEFAULT_IGNORE) -> Comparison:
    """Every leaf of `before` and `after`; those whose last name matches `ignore` are skipped."""
    skip = re.compile(ignore) if ignore else None
    a, b = dict(leaves(before)), dict(leaves(after))
    out = Comparison()
    for path in list(a) + [p for p in b if p not in a]:
        name = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if skip is not None and skip.search(name):
            out.ignored += 1
            continue
        out.compared += 1
        va, vb = a.get(path, "<absent>"), b.get(path, "<absent>")
        if va != vb:
            out.differences.append((path, va, vb))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--ignore", default=DEFAULT_IGNORE,
                    help=f"regex on a leaf's name: not compared (default {DEFAULT_IGNORE!r}; '' compares all)")
    args = ap.parse_args(argv)
    docs = []
    for name in (args.before, args.after):
        try:
            with open(name) as fh:
                docs.append(json.load(fh))
        except (OSError, ValueError) as exc:
            print(f"bench.compare: {name}: {exc}", file=sys.stderr)
            return 2
    try:
        res = compare(docs[0], docs[1], ignore=args.ignore)
    except re.error as exc:
        print(f"bench.compare: --ignore {args.ignore!r}: {exc}", file=sys.stderr)
        return 2
    print(f"{args.before} -> {args.after}: {res.compared} values compared, "
          f"{len(res.differences)} differ; {res.ignored} not compared (--ignore)")
    for path, va, vb in res.differences:
        print(f"  {path}: {va} -> {vb}")
    return 1 if res.differences else 0


if __name__ == "__main__":
    sys.exit(main())
