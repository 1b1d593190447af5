"""`nicsim waves`: named signal groups of an FST waveform, rendered to PNG or SVG.

The FST is read with pywellen. Groups (signal names are looked up by full hierarchical name,
so they work on any nic_top waveform, whatever the test):

  rx      the MAC RX stream handshake (s_axis_rx_*)
  dma     DMA writes and descriptor reads (m_axi_aw*/w*/b*, ar*/r*, the IDs), and two rows
          of decoded bursts (nicsim/dma.py): every write and read drawn from its address
          handshake to its last beat or response, labelled with what it is (descriptor
          read, header, payload, completion, TX descriptor/segment/completion), the queue,
          host or device memory and its bytes
  csr     the register bus (s_axil_*)
  queues  per-queue state: completion ring producer (NIC) and consumer (driver) indices of
          every queue that moved in the file, and the RX_FRAMES counter

The clock is the first row of every picture. The window is --start/--end in ns, or --window
ns around the Nth frame on the RX stream (--frame N: the Nth frame accepted in the whole
file, which may hold several tests; without --window, from just before its first beat to
600 ns after its last, which shows its DMA writes), or by default 800 ns from the first
frame. A window that starts past the end of the file is refused; one that ends past it is
cut at the end. 1-bit signals are drawn as steps; buses as labelled segments with their
value in hex.

`--transactions` lists every AXI transaction of the DMA master instead (text, or CSV when
the output file ends in .csv): time, end, direction, kind, queue, ID, memory, address, bytes,
beats, response.

`--gtkw FILE.gtkw` writes a GTKWave save file instead: the same groups (default: every group,
queues that moved only), named as GTKWave names this file's signals, so one layout command
serves any waveform, nic_top's or the fast harness's (`make waves` opens GTKWave with it).
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # nicsim.dma imports this module
    from matplotlib.axes import Axes

    from nicsim.dma import Txn


class WaveError(Exception):
    pass


GROUPS: dict[str, list[str]] = {
    "rx": ["s_axis_rx_tvalid", "s_axis_rx_tready", "s_axis_rx_tlast", "s_axis_rx_tuser",
           "s_axis_rx_tkeep", "s_axis_rx_tdata"],
    "dma": ["m_axi_awvalid", "m_axi_awready", "m_axi_awid", "m_axi_awaddr", "m_axi_awlen",
            "m_axi_wvalid", "m_axi_wready", "m_axi_wlast", "m_axi_bvalid", "m_axi_bid",
            "m_axi_arvalid", "m_axi_arid", "m_axi_araddr", "m_axi_rvalid", "m_axi_rid",
            "m_axi_rlast"],
    "csr": ["s_axil_awvalid", "s_axil_awaddr", "s_axil_wdata", "s_axil_arvalid",
            "s_axil_araddr", "s_axil_rvalid", "s_axil_rdata"],
    "tx": ["m_axis_tx_tvalid", "m_axis_tx_tready", "m_axis_tx_tlast", "m_axis_tx_tkeep",
           "m_axis_tx_tdata"],
    # nic_top's completion-ring indices: the NIC's producer index and the driver's SW_IDX of
    # every RX queue, then of every TX queue, and the RX_FRAMES counter
    "queues": [*(n for q in range(8) for n in (f"cq_hw_idx.[{q}]", f"cq_sw_idx.[{q}]")),
               *(n for t in range(8) for n in (f"tx_cq_hw_idx.[{t}]", f"txq_cq_sw_idx.[{t}]")),
               "field_storage.RX_FRAMES.count.value"],
}
DEFAULT_GROUPS = ["rx", "dma", "csr"]
COLORS = {"rx": "#1f77b4", "dma": "#2ca02c", "csr": "#9467bd", "tx": "#ff7f0e", "queues": "#d62728",
          "extra": "#8c564b", "clock": "#555555", "bursts": "#2ca02c"}
# Decoded bursts by kind (nicsim/dma.py): RX buffers in greens, descriptors grey, completions
# orange, TX blue.
KIND_COLORS = {"header": "#98df8a", "payload": "#2ca02c", "completion": "#ff7f0e", "hdr-desc": "#bbbbbb",
               "pay-desc": "#999999", "tx-desc": "#aec7e8", "tx-segment": "#1f77b4",
               "tx-completion": "#ffbb78", "rx-write": "#dbdb8d", "unknown": "#dddddd"}


@dataclass
class Trace:
    name: str
    width: int
    times: list[int]      # ps
    values: list[object]
    full: str = ""        # the full name in the file (pywellen's)

    def at(self, t: int) -> object:
        i = bisect.bisect_right(self.times, t) - 1
        return self.values[i] if i >= 0 else None


class Wave:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            import pywellen
        except ImportError as e:  # pragma: no cover
            raise WaveError("pywellen is not installed (run make setup)") from e
        if not Path(path).is_file():
            raise WaveError(f"{path}: no such file")
        try:
            self.w = pywellen.Waveform(str(path))
        except Exception as e:
            raise WaveError(f"{path}: cannot read it as FST/VCD ({e})") from None
        self.vars = {v.full_name: v for v in self.w.all_vars()}
        ts = self.w.timescale
        self.ps_per_unit: float = 1   # Verilator FST here: 1ps; a coarser timescale is scaled below
        unit = str(getattr(ts, "unit", "ps")).lower()
        factor = int(getattr(ts, "factor", 1) or 1)
        for suffix, scale in (("fs", 0.001), ("ps", 1), ("ns", 1000), ("us", 1_000_000)):
            if unit.endswith(suffix) or unit == suffix:
                self.ps_per_unit = scale * factor
        self.end_ps = 0

    def find(self, pattern: str) -> str | None:
        """The full name ending in `pattern` (top-level ports first, then the shortest)."""
        for pref in ("$rootio.", "nic_top."):
            if pref + pattern in self.vars:
                return pref + pattern
        hits = [n for n in self.vars if n.endswith("." + pattern) or n.endswith(pattern)]
        return min(hits, key=len) if hits else None

    def trace(self, full: str) -> Trace:
        v = self.vars[full]
        times, values = [], []
        for t, val in v.tv:
            times.append(int(t * self.ps_per_unit))
            values.append(val)
        if times:
            self.end_ps = max(self.end_ps, times[-1])
        return Trace(full.replace("$rootio.", ""), v.bitwidth or 1, times, values, full)

    def last_time_ps(self) -> int:
        """The end of the simulation the file recorded: the clock's last edge (else the last
        change of any signal read so far)."""
        clk = self.find("clk")
        if clk:
            self.trace(clk)
        return self.end_ps


def as_int(v: object) -> int | None:
    """A waveform value (an int, or a bit string; None for x/z) as an int."""
    if isinstance(v, int):
        return v
    try:
        return int(str(v), 2)
    except (TypeError, ValueError):
        return None


def frame_starts(wave: Wave) -> list[int]:
    """Times (ps) of the first accepted beat of every frame on the RX stream."""
    return [s for s, _ in frame_spans(wave)]


def frame_spans(wave: Wave) -> list[tuple[int, int]]:
    """(first beat, last beat) times (ps) of every frame accepted on the RX stream."""
    found = [wave.find(n) for n in ("clk", "s_axis_rx_tvalid", "s_axis_rx_tready", "s_axis_rx_tlast")]
    names = [n for n in found if n is not None]
    if len(names) < len(found):
        return []
    clk, valid, ready, last = (wave.trace(n) for n in names)
    spans: list[tuple[int, int]] = []
    in_frame, first = False, 0
    for i, t in enumerate(clk.times):
        if as_int(clk.values[i]) != 1:
            continue
        tt = t - 1
        if as_int(valid.at(tt)) == 1 and as_int(ready.at(tt)) == 1:
            if not in_frame:
                first = t
            in_frame = as_int(last.at(tt)) != 1
            if not in_frame:
                spans.append((first, t))
    return spans


def _group_names(groups: list[str] | None, default: list[str]) -> list[str]:
    names = [g for spec in (groups or default) for g in spec.split(",") if g]
    if "all" in names:
        names = list(GROUPS)
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        raise WaveError(f"unknown group(s) {unknown}; known: {', '.join(GROUPS)}, all")
    return names


def _rows(wave: Wave, path: str | Path, groups: list[str],
          extra: list[str] | None) -> list[tuple[str, Trace]]:
    """(group, trace) of every group signal this waveform has, then the extra signals; queue
    indices that never moved are left out."""
    rows: list[tuple[str, Trace]] = []
    for g in groups:
        for pat in GROUPS[g]:
            full = wave.find(pat)
            if full:
                rows.append((g, wave.trace(full)))
    for pat in extra or []:
        full = wave.find(pat)
        if not full:
            raise WaveError(f"no signal named like {pat!r} in {path}")
        rows.append(("extra", wave.trace(full)))
    if not rows:
        raise WaveError(f"{path}: none of the signals of groups {groups} is in this waveform")
    return [(g, tr) for g, tr in rows if g != "queues" or len(set(map(str, tr.values))) > 1
            or "RX_FRAMES" in tr.name]


def gtkw_name(full: str, width: int) -> str:
    """GTKWave's name for the signal pywellen calls `full` in a Verilator FST: the same scopes
    (top-level ports under `$rootio`), an array element `a.[3]` as `a.a[3]`, and a bus with
    its bit range, `x[63:0]` (checked against GTKWave 3.3's facility list of both harnesses'
    waveforms)."""
    scope, _, leaf = full.rpartition(".")
    if leaf.startswith("[") and scope:
        parent = scope.rpartition(".")[2]
        full = f"{scope}.{parent}{leaf}"
    return f"{full}[{width - 1}:0]" if width > 1 else full


def write_gtkw(path: str | Path, output: str | Path | None = None, *,
               groups: list[str] | None = None, extra: list[str] | None = None) -> Path:
    """A GTKWave save file showing `groups` (default: all) of the waveform at `path`."""
    wave = Wave(path)
    names = _group_names(groups, list(GROUPS))
    rows = _rows(wave, path, names, extra)
    lines = [f"[*] GTKWave layout for {Path(path).name}, written by nicsim waves --gtkw",
             f'[dumpfile] "{Path(path).resolve()}"', "[timestart] 0"]
    shown, fmt = None, None
    for g, tr in rows:
        if g != shown:
            lines += ["@200", f"-{g}"]         # a group label
            shown, fmt = g, "@200"
        want = "@28" if tr.width == 1 else "@22"  # GTKWave flags: binary trace, hex bus
        if want != fmt:
            lines.append(want)
            fmt = want
        lines.append(gtkw_name(tr.full, tr.width))
    out = Path(output) if output else Path(path).with_suffix(".gtkw")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out


def _short(name: str) -> str:
    """A row label: the signal's name inside the NIC (nic_top's or the fast harness's)."""
    for prefix in ("nic_fast_top.u_nic.", "nic_fast_top.", "nic_top."):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _window(wave: Wave, start: float | None, end: float | None, frame: int | None,
            window: float | None) -> tuple[float, float, str]:
    """(start, end) in ns of the picture, and a note when it was cut at the file's end."""
    if frame is not None and frame < 0:
        raise WaveError(f"--frame {frame}: frames count from 0")
    if window is not None and window <= 0:
        raise WaveError(f"--window {window:g}: a width in ns, above 0")
    if start is None or end is None:
        spans = frame_spans(wave) if (frame is not None or start is None) else []
        starts = [a for a, _ in spans]
        if frame is not None:
            if frame >= len(spans):
                raise WaveError(f"--frame {frame}: the waveform has {len(spans)} frames on the RX stream")
            first, last = spans[frame][0] / 1000, spans[frame][1] / 1000
            if window:   # a fixed width, a sixth of it before the frame
                start, end = first - window / 6, first + window * 5 / 6
            else:        # the whole frame and the DMA writes after it
                start, end = first - 100, last + 600
        else:
            t0 = starts[0] / 1000 - 50 if starts else 0.0
            start = t0 if start is None else start
            end = start + (window or 800) if end is None else end
    if end <= start:
        raise WaveError(f"empty window {start:g}..{end:g} ns (--end must be after --start)")
    last_ns = wave.last_time_ps() / 1000
    if start >= last_ns:
        raise WaveError(f"the window starts at {start:g} ns, past the end of {Path(wave.path).name} "
                        f"({last_ns:g} ns)")
    note = ""
    if end > last_ns:
        end, note = last_ns, f"cut at the end of the file, {last_ns:g} ns"
    return max(start, 0.0), end, note


def transactions(path: str | Path, output: str | Path | None = None, *, start: float | None = None,
                 end: float | None = None) -> tuple[str, Path | None]:
    """Every AXI transaction of the DMA master (nicsim/dma.py), those that start in
    [start, end] ns when given: a text table, or CSV when `output` ends in .csv. Returns the
    text and the file written (None: the caller prints the text)."""
    from nicsim import dma
    wave = Wave(path)
    if start is not None or end is not None:
        last_ns = wave.last_time_ps() / 1000
        if start is not None and start >= last_ns:
            raise WaveError(f"--start {start:g} ns is past the end of {Path(path).name} ({last_ns:g} ns)")
        if start is not None and end is not None and end <= start:
            raise WaveError(f"empty window {start:g}..{end:g} ns (--end must be after --start)")
    txns = [x for x in dma.decode(wave)
            if (start is None or x.time_ns >= start) and (end is None or x.time_ns <= end)]
    out = Path(output) if output else None
    text = dma.csv_text(txns) if out is not None and out.suffix.lower() == ".csv" else dma.text_table(txns)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return text, out


def frame_dma_window(path: str | Path, queue: int, memory: str = "device",
                     margin_ns: float = 40) -> tuple[float, float, list[Txn]]:
    """The DMA of the first frame of RX queue `queue` whose payload went to `memory`: its
    header write, its payload writes and its completions (nicsim/dma.py). Returns the window
    around those bursts (ns) and the bursts; raises WaveError when there is no such frame."""
    from nicsim import dma
    txns = [x for x in dma.decode(Wave(path)) if x.dir == "write" and x.queue == queue
            and x.kind in dma.RX_WRITE_KINDS]
    first = next((i for i, x in enumerate(txns) if x.kind == "payload" and x.memory == memory), None)
    if first is None:
        raise WaveError(f"{path}: no payload write of RX queue {queue} into {memory} memory")
    i = first
    while i > 0 and txns[i - 1].kind != "completion":    # back to the frame's header write
        i -= 1
    j = first
    while j + 1 < len(txns) and txns[j + 1].kind != "header":   # on to its last completion
        j += 1
    bursts = txns[i:j + 1]
    t0 = min(x.time_ns for x in bursts)
    t1 = max(x.end_ns if x.end_ns is not None else x.time_ns for x in bursts)
    return t0 - margin_ns, t1 + margin_ns, bursts


def render(path: str | Path, output: str | Path | None = None, *, groups: list[str] | None = None,
           start: float | None = None, end: float | None = None, frame: int | None = None,
           window: float | None = None, extra: list[str] | None = None,
           caption: str | None = None) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.fonttype"] = "none"     # SVG text stays text (searchable)
    wave = Wave(path)
    groups = _group_names(groups, DEFAULT_GROUPS)
    rows = _rows(wave, path, groups, extra)
    clk = wave.find("clk")
    if clk:
        rows.insert(0, ("clock", wave.trace(clk)))
    start, end, note = _window(wave, start, end, frame, window)
    s_ps, e_ps = int(start * 1000), int(end * 1000)
    bursts: dict[str, list] = {}
    if "dma" in groups:
        from nicsim import dma
        try:
            txns = dma.decode(wave)
        except WaveError:
            txns = []
        for d in ("write", "read"):
            bursts[d] = [x for x in txns if x.dir == d and x.time_ps <= e_ps
                         and (x.end_ps if x.end_ps is not None else x.time_ps) >= s_ps]
    # the decoded rows are twice as tall as a signal row (overlapping bursts share them in lanes)
    nrows = len(rows) + 2 * len(bursts)

    fig_h = 0.42 * nrows + 1.2
    fig, ax = plt.subplots(figsize=(16, fig_h))
    ax.set_xlim(start, end)
    ax.set_ylim(-0.5, nrows - 0.3)
    ticks = [2 * k + 0.5 for k in range(len(bursts))] + [2 * len(bursts) + k for k in range(len(rows))]
    ax.set_yticks(ticks)
    labels = [f"DMA {d}s (decoded)" for d in reversed(list(bursts))]
    labels += [_short(tr.name) for _, tr in reversed(rows)]
    ax.set_yticklabels(labels, fontsize=8)
    row_groups = ["bursts"] * len(bursts) + [g for g, _ in reversed(rows)]
    for lbl, g in zip(ax.get_yticklabels(), row_groups):
        lbl.set_color(COLORS.get(g, "black"))
    span_ns = end - start
    for k, d in enumerate(reversed(list(bursts))):
        _draw_bursts(ax, 2 * k + 0.5, bursts[d], start, end, span_ns)
    base = 2 * len(bursts)
    for k, (g, tr) in enumerate(reversed(rows)):
        y = base + k
        col = COLORS.get(g, "black")
        # change points inside the window, plus the value at its start
        i0 = max(bisect.bisect_right(tr.times, s_ps) - 1, 0)
        i1 = bisect.bisect_right(tr.times, e_ps)
        pts = [(max(tr.times[i], s_ps) / 1000, tr.values[i]) for i in range(i0, i1)] if tr.times else []
        if not pts:
            continue
        if g == "clock" and len(pts) > 800:     # too many edges to draw: say what it is
            period = (tr.times[-1] - tr.times[0]) / max(len(tr.times) - 1, 1) * 2 / 1000
            ax.text(start + span_ns / 2, y, f"clock, {period:g} ns period ({len(pts) // 2} cycles in the window)",
                    ha="center", va="center", fontsize=7, color=col)
            continue
        pts.append((end, pts[-1][1]))
        if tr.width == 1:
            xs, ys = [], []
            for (t, v), (tn, _) in zip(pts, pts[1:]):
                iv = as_int(v)
                lvl = y - 0.25 + 0.5 * (iv if iv in (0, 1) else 0.5)
                xs += [t, tn]
                ys += [lvl, lvl]
                if iv == 1 and g != "clock":
                    ax.fill_between([t, tn], y - 0.25, y + 0.25, color=col, alpha=0.15, lw=0)
            ax.plot(xs, ys, color=col, lw=0.8 if g == "clock" else 1.2)
        else:
            for (t, v), (tn, _) in zip(pts, pts[1:]):
                if tn <= t:
                    continue
                dd = min(span_ns * 0.002, (tn - t) / 3)
                ax.fill([t, t + dd, tn - dd, tn, tn - dd, t + dd], [y, y + 0.3, y + 0.3, y, y - 0.3, y - 0.3],
                        facecolor=col, alpha=0.12, edgecolor=col, lw=0.8)
                iv = as_int(v)
                text = (f"{iv:x}" if iv is not None else str(v))
                room = (tn - t) / span_ns * 16 * 72 / 5.5    # characters that fit at 7 pt
                if room >= 3:
                    if len(text) > room - 1:
                        text = text[:max(int(room) - 2, 1)] + "…"
                    ax.text((t + tn) / 2, y, text, ha="center", va="center", fontsize=7, family="monospace")
    ax.set_xlabel("time (ns)")
    ax.grid(axis="x", color="#dddddd", lw=0.6)
    kinds = sorted({x.kind for lst in bursts.values() for x in lst}, key=list(KIND_COLORS).index)
    if kinds:
        from matplotlib.patches import Patch
        fig.legend(handles=[Patch(facecolor=KIND_COLORS[k], edgecolor="#333333", label=k) for k in kinds],
                   loc="lower center", ncol=len(kinds), fontsize=7, frameon=False,
                   title="decoded DMA bursts (box: data beats; line: address handshake to response)",
                   title_fontsize=7)
    title = f"{Path(path).name}: {', '.join(groups)}  [{start:.0f} .. {end:.0f} ns]" + (f" ({note})" if note else "")
    if caption:
        title = f"{caption}\n{title}"
    ax.set_title(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.75 / fig_h if kinds else 0, 1, 1))
    out = Path(output) if output else Path(path).with_suffix(".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _draw_bursts(ax: Axes, y: float, txns: list[Txn], start: float, end: float, span_ns: float) -> None:
    """One row of decoded bursts: a box over the burst's data beats (first to last W or R
    beat) with a thin line from its address handshake and on to its write response,
    coloured by kind and labelled when the label fits. Bursts that overlap in time share the
    row in lanes."""
    spans = []
    for x in txns:
        a0 = x.time_ns
        b0 = x.first_beat_ps / 1000 if x.first_beat_ps is not None else a0
        b1 = x.last_beat_ps / 1000 + 4 if x.last_beat_ps is not None else b0 + 4
        z = x.end_ns if x.end_ns is not None else b1
        spans.append((x, a0, b0, b1, max(z, b1)))
    lanes: list[float] = []
    where = []
    for x, a0, b0, b1, z in spans:
        lane = next((i for i, e in enumerate(lanes) if e <= a0), None)
        if lane is None:
            lane = len(lanes)
            lanes.append(z)
        lanes[lane] = z
        where.append(lane)
    n = max(len(lanes), 1)
    h = 1.5 / n
    for (x, a0, b0, b1, z), lane in zip(spans, where):
        yc = y + 0.75 - h * (lane + 0.5)
        col = KIND_COLORS.get(x.kind, "#dddddd")
        ax.plot([max(a0, start), min(z, end)], [yc, yc], color="#555555", lw=0.6)
        t0, t1 = max(b0, start), min(b1, end)
        if t1 <= t0:
            continue
        ax.fill([t0, t1, t1, t0], [yc - h * 0.45, yc - h * 0.45, yc + h * 0.45, yc + h * 0.45],
                facecolor=col, alpha=0.8, edgecolor="#333333", lw=0.5)
        room = (t1 - t0) / span_ns * 16 * 72 / 5.0
        text = x.label
        if room < len(text):
            text = f"{x.kind} {x.nbytes}B"
        if room < len(text):
            text = x.kind
        if room >= len(text):
            ax.text((t0 + t1) / 2, yc, text, ha="center", va="center", fontsize=7 if n <= 3 else 6)
