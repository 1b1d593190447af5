#!/usr/bin/env bash
# Idempotent developer/CI set-up for devmem-nic. Safe to run any number of times; when
# nothing changed it only checks and prints "setup: up to date" (well under a second).
#
#   scripts/setup.sh            install what is missing:
#                                 1. Debian packages Verilator builds need (dpkg -s decides)
#                                 2. .venv in the repo root (python3 -m venv, Python >= 3.11)
#                                 3. requirements.lock into .venv, only when pyproject.toml or
#                                    requirements.lock changed since the last install
#   scripts/setup.sh --force    reinstall the Python packages even if the stamp matches
#   scripts/setup.sh --relock   resolve pyproject.toml's dependencies in a scratch venv,
#                               rewrite requirements.lock from it, then install as above
#
# Environment: PYTHON=/path/to/python3.x picks the interpreter for a new .venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
LOCK="$ROOT/requirements.lock"
STAMP="$VENV/.setup-stamp"
START=$SECONDS

say() { echo "setup: $*"; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

FORCE=0
RELOCK=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        --relock) RELOCK=1 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$arg' (try --help)" ;;
    esac
done

# Commands that need root: plain when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root for: $* (run as root or install sudo)"
    fi
}

# A Python >= 3.11 for creating the venv: $PYTHON, else the first that fits on PATH.
pick_python() {
    local c
    for c in "${PYTHON:-}" python3 python3.11 python3.12 python3.13 /usr/bin/python3; do
        [ -n "$c" ] || continue
        command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

venv_ok() { [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c '' 2>/dev/null; }

# ---------------------------------------------------------------------------------------------
# 1. Debian packages. make/g++/perl run Verilator's build (its `verilator` is a perl script);
#    liblz4-dev and zlib1g-dev are needed for FST waveforms (--trace-fst); ccache makes every
#    simulator build after the first reuse the compiled Verilator runtime (~8 s -> <1 s);
#    lcov gives `genhtml` for the coverage report of `make regress`; iproute2 gives `ip`, which
#    the live co-simulation uses to configure its TAP device; clang compiles the Verilator
#    models (tb/sim.py sim_cxx: its code simulates this design ~20% faster than g++'s and
#    builds in about half the time; g++ still builds the rest and is the fallback); llvm
#    (llvm-profdata) and libclang-rt-dev (clang's profile runtime) give the benchmark's
#    profile-guided builds (bench/pgo.py).
# ---------------------------------------------------------------------------------------------
APT_PKGS=(make g++ clang llvm libclang-rt-dev perl patch liblz4-dev zlib1g-dev ccache lcov iproute2)

PY=""
if ! venv_ok; then
    if PY="$(pick_python)"; then
        # Debian's own interpreter keeps ensurepip in python3-venv and the shared library
        # cocotb embeds in libpython3.X; other interpreters (pyenv, python.org) bring both.
        case "$(readlink -f "$PY")" in
            /usr/bin/*)
                APT_PKGS+=(python3-venv "libpython$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')")
                ;;
        esac
    else
        APT_PKGS+=(python3 python3-venv libpython3-dev)   # Debian 12: Python 3.11
    fi
fi

MISSING=()
if ! dpkg -s "${APT_PKGS[@]}" >/dev/null 2>&1; then
    for p in "${APT_PKGS[@]}"; do
        dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || MISSING+=("$p")
    done
fi
if [ ${#MISSING[@]} -gt 0 ]; then
    say "apt: installing ${MISSING[*]} (apt-get update first)"
    APT_LOG="$(mktemp)"
    if ! { as_root apt-get update -qq &&
           as_root env DEBIAN_FRONTEND=noninteractive \
               apt-get install -y -qq --no-install-recommends "${MISSING[@]}"; } >"$APT_LOG" 2>&1; then
        tail -n 30 "$APT_LOG" >&2
        die "apt-get failed (full log: $APT_LOG)"
    fi
    rm -f "$APT_LOG"
    CHANGED=1
fi

# ---------------------------------------------------------------------------------------------
# 2. The virtual environment.
# ---------------------------------------------------------------------------------------------
if ! venv_ok; then
    [ -n "$PY" ] || PY="$(pick_python)" || die "no Python >= 3.11 found (set PYTHON=...)"
    [ -e "$VENV" ] && { say "venv: $VENV is broken, recreating"; rm -rf "$VENV"; }
    say "venv: creating .venv with $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
    "$PY" -m venv "$VENV" || die "python -m venv failed"
    CHANGED=1
fi

# ---------------------------------------------------------------------------------------------
# 3. Python packages.
# ---------------------------------------------------------------------------------------------
if [ "$RELOCK" -eq 1 ]; then
    say "relock: resolving pyproject.toml dependencies in a scratch venv"
    SCRATCH="$(mktemp -d)"
    trap 'rm -rf "$SCRATCH"' EXIT
    "$VENV/bin/python" -m venv "$SCRATCH/venv"
    mapfile -t DEPS < <("$VENV/bin/python" -c '
import tomllib
for d in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    print(d)')
    if ! "$SCRATCH/venv/bin/python" -m pip install --disable-pip-version-check "${DEPS[@]}" \
            >"$SCRATCH/pip.log" 2>&1; then
        tail -n 30 "$SCRATCH/pip.log" >&2
        die "resolving the dependencies failed"
    fi
    {
        echo "# Full pinned dependency set of devmem-nic, generated by 'scripts/setup.sh --relock'"
        echo "# from pyproject.toml's [project].dependencies on $(date -u +%Y-%m-%d)" \
             "with Python $("$SCRATCH/venv/bin/python" -c 'import sys; print(sys.version.split()[0])')."
        echo "# Do not edit by hand: edit pyproject.toml and relock."
        "$SCRATCH/venv/bin/python" -m pip freeze --disable-pip-version-check
    } >"$LOCK"
    say "relock: wrote requirements.lock ($(grep -vc '^#' "$LOCK") packages)"
fi

[ -f "$LOCK" ] || die "requirements.lock is missing (run scripts/setup.sh --relock)"
WANT="$(cat pyproject.toml "$LOCK" | sha256sum | cut -d' ' -f1)"
HAVE="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$FORCE" -eq 1 ] || [ "$WANT" != "$HAVE" ]; then
    N="$(grep -cv '^\s*\(#\|$\)' "$LOCK")"
    say "python: installing $N pinned packages from requirements.lock (about 30 s the first time)"
    rm -f "$STAMP"
    PIP_LOG="$VENV/pip-install.log"
    if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -r "$LOCK" >"$PIP_LOG" 2>&1; then
        tail -n 30 "$PIP_LOG" >&2
        die "pip install failed (full log: $PIP_LOG)"
    fi
    echo "$WANT" >"$STAMP"
    CHANGED=1
fi

# ---------------------------------------------------------------------------------------------
# 4. The `nicsim` command: a launcher in .venv/bin that runs `python -m nicsim` with the repo
#    root on sys.path (the repo's packages are not pip-installed). Rewritten only if it differs.
# ---------------------------------------------------------------------------------------------
LAUNCHER="$VENV/bin/nicsim"
WANT_LAUNCHER="#!$VENV/bin/python
# nicsim launcher written by scripts/setup.sh: the repo's packages are not installed.
import sys
sys.path.insert(0, '$ROOT')
from nicsim.cli import main
sys.exit(main())"
if [ "$(cat "$LAUNCHER" 2>/dev/null || true)" != "$WANT_LAUNCHER" ]; then
    printf '%s\n' "$WANT_LAUNCHER" >"$LAUNCHER"
    chmod +x "$LAUNCHER"
    say "nicsim: wrote $LAUNCHER"
    CHANGED=1
fi

if [ "${CHANGED:-0}" -eq 1 ]; then
    say "done in $((SECONDS - START)) s ($("$VENV/bin/python" -c 'import sys; print("Python " + sys.version.split()[0])'), .venv ready)"
else
    say "up to date"
fi
