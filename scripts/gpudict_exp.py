"""What the experiment scripts share: finding and running gpudict, reading its
JSON Lines, and writing each table three ways: Markdown (printed and saved),
tidy CSV (one observation per row, for pandas or a spreadsheet) and, where a
table is a figure of a paper, a plot (PNG and SVG, with matplotlib).

The scripts run where the GPU is; the plots need matplotlib, which a GPU
machine may lack. Without it the CSVs are still written and
`python3 scripts/plot_csv.py DIR` draws every figure of DIR later, anywhere.
"""
import csv
import json
import math
import os
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def default_binary():
    """$GPUDICT_BINARY when set, else the build in ./build."""
    return os.environ.get("GPUDICT_BINARY") or os.path.join(REPO, "build", "gpudict")


def built_structures(binary):
    """The structures `gpudict info` lists as built."""
    r = subprocess.run([binary, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{binary} info failed ({r.returncode}): {r.stderr.strip()}")
    for line in r.stdout.splitlines():
        if line.startswith("structures:"):
            return [x.strip() for x in line.split(":", 1)[1].split(",") if x.strip() and "planned" not in x]
    sys.exit(f"'{binary} info' lists no structures")


def add_common_args(ap, out, repeat=1):
    """The options every experiment script takes."""
    ap.add_argument("--gpudict", default=default_binary(),
                    help="the gpudict binary (default: $GPUDICT_BINARY, else build/gpudict)")
    ap.add_argument("--backend", default="", help="gpu or cpu (default: gpudict's own choice)")
    ap.add_argument("--repeat", type=int, default=repeat, help=f"repetitions per run, median reported (default {repeat})")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=out, help=f"directory for workloads, raw JSON Lines, CSV, plots (default {out})")
    ap.add_argument("--no-plots", action="store_true", help="write the CSVs but draw nothing")


class Run:
    """One gpudict run's records (JSON Lines) and, with batch_times, its per-batch CSV rows."""

    def __init__(self, records, batches=None):
        self.records = records
        self.steps = [r for r in records if r.get("record") == "step"]
        summaries = [r for r in records if r.get("record") == "summary"]
        self.summary = summaries[0] if summaries else {}
        self.batches = batches or []

    def named(self, name):
        """The steps called `name` (a phase's name, or 'build', 'cleanup')."""
        return [s for s in self.steps if s["name"] == name]

    def step(self, name):
        found = self.named(name)
        if not found:
            sys.exit(f"no step named {name!r} in the run (steps: {[s['name'] for s in self.steps]})")
        return found[0]

    def of_kind(self, kind):
        return [s for s in self.steps if s["kind"] == kind]


def run(args, structure, workload, extra=(), tag=None, batch_times=False, repeat=None, check=True):
    """Runs `gpudict STRUCTURE WORKLOAD --no-verify --format json` with the
    script's --backend and --repeat; keeps the JSON Lines in --out as
    TAG.jsonl. A failed run ends the script with the command and its error
    (check=False: returns None instead)."""
    tag = tag or f"{os.path.splitext(os.path.basename(workload))[0]}.{structure}"
    out_json = os.path.join(args.out, f"{tag}.jsonl")
    cmd = [args.gpudict, structure, workload, "--no-verify", "--format", "json",
           "--repeat", str(args.repeat if repeat is None else repeat)] + list(extra)
    out_bt = None
    if batch_times:
        out_bt = os.path.join(args.out, f"{tag}.batches.csv")
        cmd += ["--batch-times", out_bt]
    if args.backend:
        cmd += ["--backend", args.backend]
    with open(out_json, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        if not check:
            return None
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    records = [json.loads(line) for line in open(out_json) if line.strip()]
    batches = None
    if out_bt:
        with open(out_bt) as f:
            batches = list(csv.DictReader(f))
    return Run(records, batches)


def write(args, name, text):
    """Writes `text` to --out/NAME and returns the path (workloads, tables)."""
    p = os.path.join(args.out, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def step_ms(st, cats=None):
    """Device ms of a step, over the categories `cats` (all when None)."""
    return sum(x["device_ms"] for x in st["rows"] if cats is None or x["op"] in cats)


def step_ops(st, cats=None):
    return sum(x["ops"] for x in st["rows"] if cats is None or x["op"] in cats)


def rate(st, cats=None):
    """G operations per second of device time of a step."""
    ms = step_ms(st, cats)
    return step_ops(st, cats) / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")


def pow2(v):
    """2^k for a power of two (Markdown cells of sizes), else the number."""
    v = int(v)
    return f"2^{v.bit_length() - 1}" if v > 0 and v & (v - 1) == 0 else str(v)


def harmonic_mean(xs):
    xs = [x for x in xs if x and not math.isnan(x)]
    return len(xs) / sum(1 / x for x in xs) if xs else float("nan")


def _cell(v, digits):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


class Table:
    """A table with named columns, rows added as dicts. `markdown()` for the
    report, `save()` for the tidy CSV, `plot()` for the figure."""

    def __init__(self, title, columns, digits=3, formats=None):
        self.title = title
        self.columns = list(columns)
        self.rows = []
        self.digits = digits
        self.formats = formats or {}  # column -> function of the value, for the Markdown only
        self.notes = []

    def add(self, **row):
        missing = [c for c in self.columns if c not in row]
        if missing:
            raise ValueError(f"row lacks {missing}")
        self.rows.append(row)
        return row

    def _fmt(self, c, v):
        return self.formats[c](v) if c in self.formats else _cell(v, self.digits)

    def markdown(self, pivot=None):
        """The rows as a Markdown table; pivot=(ROW_KEYS, COLUMN_KEY, VALUE_KEY)
        shows one line per distinct ROW_KEYS and one column per value of
        COLUMN_KEY (e.g. a column per structure), in order of appearance."""
        if pivot:
            keys, col, val = pivot
            heads, lines = [], {}
            for r in self.rows:
                if r[col] not in heads:
                    heads.append(r[col])
                lines.setdefault(tuple(r[k] for k in keys), {})[r[col]] = r[val]
            out = [self.title, "", "| " + " | ".join(list(keys) + [str(h) for h in heads]) + " |",
                   "|" + "---|" * (len(keys) + len(heads))]
            for k, cells in lines.items():
                out.append("| " + " | ".join([self._fmt(kc, kv) for kc, kv in zip(keys, k)] +
                                             [self._fmt(val, cells[h]) if h in cells else "-" for h in heads]) + " |")
        else:
            out = [self.title, "", "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
            for r in self.rows:
                out.append("| " + " | ".join(self._fmt(c, r[c]) for c in self.columns) + " |")
        if self.notes:
            out += [""] + self.notes
        return "\n".join(out)

    def save(self, args, stem):
        """--out/STEM.csv: the rows, every column as given (numbers unrounded)."""
        path = os.path.join(args.out, f"{stem}.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow(r)
        return path

    def plot(self, args, stem, x, y, series=None, logx=True, logy=False, ylabel="G operations/s", xlabel=None,
             panel=None):
        """Draws Y against X, one line per value of SERIES (or one line per
        column when Y is a list), one panel per value of PANEL; writes
        --out/STEM.png and .svg and a STEM.plot.json that plot_csv.py reads to
        draw it again from STEM.csv."""
        spec = {"csv": f"{stem}.csv", "title": self.title.split(":")[0], "x": x, "y": y, "series": series,
                "logx": logx, "logy": logy, "ylabel": ylabel, "xlabel": xlabel or x, "panel": panel}
        with open(os.path.join(args.out, f"{stem}.plot.json"), "w") as f:
            json.dump(spec, f, indent=1)
        if getattr(args, "no_plots", False) or not self.rows:
            return
        draw(spec, self.rows, os.path.join(args.out, stem))


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def draw(spec, rows, path_stem):
    """Draws one figure from rows (dicts) as `spec` says; prints a notice and
    returns False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(no figure {os.path.basename(path_stem)}.png: matplotlib is not installed; "
              f"`python3 scripts/plot_csv.py {os.path.dirname(path_stem) or '.'}` draws it later)", file=sys.stderr)
        return False
    panels = sorted({r[spec["panel"]] for r in rows}, key=str) if spec.get("panel") else [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, pv in zip(axes[0], panels):
        prow = [r for r in rows if pv is None or r[spec["panel"]] == pv]
        lines = []
        if isinstance(spec["y"], list):
            for col in spec["y"]:
                lines.append((col, [(_num(r[spec["x"]]), _num(r[col])) for r in prow]))
        elif spec.get("series"):
            for sv in sorted({r[spec["series"]] for r in prow}, key=str):
                lines.append((str(sv), [(_num(r[spec["x"]]), _num(r[spec["y"]])) for r in prow
                                        if r[spec["series"]] == sv]))
        else:
            lines.append((spec["y"], [(_num(r[spec["x"]]), _num(r[spec["y"]])) for r in prow]))
        drawn = 0
        for label, pts in lines:
            pts = sorted(p for p in pts if not math.isnan(p[0]) and not math.isnan(p[1]))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
                drawn += 1
        if spec.get("logx"):
            ax.set_xscale("log", base=2)
        if spec.get("logy"):
            ax.set_yscale("log")
        ax.set_xlabel(spec.get("xlabel") or spec["x"])
        ax.set_ylabel(spec.get("ylabel") or "")
        ax.set_title(spec["title"] + (f" ({spec['panel']} = {pv})" if pv is not None else ""))
        ax.grid(True, alpha=0.3)
        if drawn:
            ax.legend()
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{path_stem}.{ext}")
    plt.close(fig)
    return True
