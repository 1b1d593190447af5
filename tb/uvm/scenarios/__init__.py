"""Traffic scenarios, one file each: `tb/uvm/scenarios/<name>.py` defining
`PROFILE = Profile(name="<name>", ...)`. Every module here is found by discovery; the
pytest function in tests/rtl/test_uvm.py runs each scenario on each parameter set.
"""
from __future__ import annotations

import importlib
import pkgutil

from tb.uvm.profiles import Profile


def discover() -> dict[str, Profile]:
    out: dict[str, Profile] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        prof = getattr(mod, "PROFILE", None)
        if not isinstance(prof, Profile):
            raise TypeError(f"tb/uvm/scenarios/{info.name}.py must define PROFILE = Profile(...)")
        if prof.name != info.name:
            raise ValueError(f"tb/uvm/scenarios/{info.name}.py: PROFILE.name is {prof.name!r}, expected {info.name!r}")
        out[info.name] = prof
    return out


def get(name: str) -> Profile:
    scenarios = discover()
    if name not in scenarios:
        raise KeyError(f"no scenario {name!r}; known: {', '.join(scenarios)}")
    return scenarios[name]
