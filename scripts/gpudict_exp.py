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
import re
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


def add_common_args(ap, out, repeat=1, seed=7, plots=True):
    """The options every experiment script takes: --gpudict, --backend,
    --repeat, --out; --seed (for the workloads a script generates), --no-plots.
    repeat=None, seed=None or plots=False leaves that option out (a script
    whose runs repeat once, whose workloads keep their own seeds, that draws
    nothing)."""
    ap.add_argument("--gpudict", default=default_binary(),
                    help="the gpudict binary (default: $GPUDICT_BINARY, else build/gpudict)")
    ap.add_argument("--backend", default="", help="gpu or cpu (default: gpudict's own choice; cpu: a smoke run)")
    if repeat is not None:
        ap.add_argument("--repeat", type=int, default=repeat,
                        help=f"repetitions per run, median reported (default {repeat})")
    if seed is not None:
        ap.add_argument("--seed", type=int, default=seed, help=f"seed of the generated workloads (default {seed})")
    ap.add_argument("--out", default=out, help=f"directory for workloads, raw JSON Lines, CSV, plots (default {out})")
    if plots:
        ap.add_argument("--no-plots", action="store_true", help="write the CSVs but draw nothing")


def int_list(text):
    """'16,18,20' -> [16, 18, 20] (list options such as --batch-logs)."""
    return [int(x) for x in str(text).split(",") if x.strip()]


def float_list(text):
    return [float(x) for x in str(text).split(",") if x.strip()]


def name_list(text):
    """'rmat,rgg' -> ['rmat', 'rgg'] (list options such as --structures)."""
    return [x.strip() for x in str(text).split(",") if x.strip()]


def parse_records(text):
    """The JSON records of gpudict's JSON Lines output (other lines, and a
    last line cut short by a stopped run, skipped)."""
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


class Run:
    """One gpudict run's records (JSON Lines) and, with batch_times, its
    per-batch CSV rows; `ok` False (with check=False) when it failed:
    `returncode` (None when it ran past its timeout, `timed_out`), `stderr`
    and `cmd` say how."""

    def __init__(self, records, batches=None, returncode=0, stderr="", cmd=(), timed_out=False):
        self.records = records
        self.steps = [r for r in records if r.get("record") == "step"]
        summaries = [r for r in records if r.get("record") == "summary"]
        self.summary = summaries[0] if summaries else {}
        runs = [r for r in records if r.get("record") == "run"]
        self.header = runs[0] if runs else {}
        self.batches = batches or []
        self.returncode = returncode
        self.stderr = stderr
        self.cmd = list(cmd)
        self.timed_out = timed_out
        self.ok = returncode == 0 and not timed_out

    @property
    def backend(self):
        """'gpu' or 'cpu', as the run record says ('gpu' when it says nothing)."""
        return self.header.get("backend", "gpu")

    def stat(self, name, default=float("nan")):
        """A figure of the structure's final_stats (as a number where it is one)."""
        v = self.summary.get("final_stats", {}).get(name, default)
        try:
            return float(v)
        except (TypeError, ValueError):
            return v

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

    def prefixed(self, prefix):
        """The phases whose names begin with `prefix` (e.g. 'insert-' of a growth in many phases)."""
        return [s for s in self.steps if s["kind"] == "phase" and s["name"].startswith(prefix)]


def run(args, structure, workload, extra=(), tag=None, batch_times=False, repeat=None, check=True,
        binary=None, verify=False, timeout=None):
    """Runs `gpudict STRUCTURE WORKLOAD --no-verify --format json` with the
    script's --backend and --repeat; keeps the JSON Lines in --out as
    TAG.jsonl. binary: another gpudict than --gpudict; verify: without
    --no-verify (the results checked); timeout: seconds, after which the run
    is stopped. A failed run ends the script with the command and its error;
    with check=False it returns the Run with ok False instead (its records,
    those it wrote)."""
    tag = tag or f"{os.path.splitext(os.path.basename(workload))[0]}.{structure}"
    out_json = os.path.join(args.out, f"{tag}.jsonl")
    cmd = [binary or args.gpudict, structure, workload] + ([] if verify else ["--no-verify"]) + \
        ["--format", "json", "--repeat", str(getattr(args, "repeat", 1) if repeat is None else repeat)] + list(extra)
    out_bt = None
    if batch_times:
        out_bt = os.path.join(args.out, f"{tag}.batches.csv")
        cmd += ["--batch-times", out_bt]
    if getattr(args, "backend", ""):
        cmd += ["--backend", args.backend]
    timed_out = False
    with open(out_json, "w") as f:
        try:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, timeout=timeout)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            timed_out, rc = True, None
            err = (e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or "") + \
                f"\n(stopped after {timeout} s)"
    with open(out_json) as f:
        records = parse_records(f.read())
    if rc != 0 or timed_out:
        if not check:
            return Run(records, None, rc, err, cmd, timed_out)
        why = f"ran past {timeout} s" if timed_out else f"failed ({rc})"
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(cmd)} {why}: {err.strip()}")
    batches = None
    if out_bt:
        with open(out_bt) as f:
            batches = list(csv.DictReader(f))
    return Run(records, batches, rc, err, cmd)


def run_selected(args, chosen, experiments, md_name="figures.md"):
    """Runs the experiments `chosen` names ('all': every one), in order:
    `experiments` is a list of (names, fn), names a string or a tuple of the
    names that select fn, fn(args) returning its Markdown. Prints each as it
    ends and writes them all to --out/MD_NAME."""
    parts = []
    for names, fn in experiments:
        names = (names,) if isinstance(names, str) else tuple(names)
        if chosen == "all" or chosen in names:
            parts.append(fn(args))
            print(parts[-1] + "\n", flush=True)
    write(args, md_name, "\n\n".join(parts) + "\n")


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


def rate_of(steps, cats=None):
    """G operations per second of device time of several steps together
    (their operations over their summed time: a growth in many phases)."""
    ms = sum(step_ms(st, cats) for st in steps)
    return sum(step_ops(st, cats) for st in steps) / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")


def sample_rates(row):
    """M operations per second of each repetition of a step's row (its
    device_ms_samples; the median's alone when it has none), sorted."""
    ms = row.get("device_ms_samples") or [row["device_ms"]]
    return sorted(row["ops"] / m / 1e3 for m in ms if m > 0)


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
        self.stem = stem
        path = os.path.join(args.out, f"{stem}.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            w.writeheader()
            for r in self.rows:
                w.writerow(r)
        return path

    def plot(self, args, stem, x, y, series=None, logx=True, logy=False, ylabel="G operations/s", xlabel=None,
             panel=None, where=None, title=None, dashed=None):
        """Draws Y against X, one line per value of SERIES (or one line per
        column when Y is a list), one panel per value of PANEL; where: only
        the rows whose columns have these values ({column: value}); dashed:
        series drawn dashed (a paper's numbers beside the measured ones);
        writes --out/STEM.png and .svg and a STEM.plot.json that plot_csv.py
        reads to draw it again from the table's CSV."""
        spec = {"csv": f"{getattr(self, 'stem', None) or stem}.csv", "title": title or self.title.split(":")[0],
                "x": x, "y": y, "series": series, "logx": logx, "logy": logy, "ylabel": ylabel,
                "xlabel": xlabel or x, "panel": panel, "where": where or {}, "dashed": list(dashed or [])}
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


def _natural(v):
    """Sort key: numbers within labels in numeric order ('L = 8' before 'L = 32')."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", str(v))]


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
    where = spec.get("where") or {}
    rows = [r for r in rows if all(str(r[k]) == str(v) for k, v in where.items())]
    dashed = set(spec.get("dashed") or [])
    panels = sorted({r[spec["panel"]] for r in rows}, key=_natural) if spec.get("panel") else [None]
    cols = len(panels) if len(panels) <= 3 else math.ceil(math.sqrt(len(panels)))  # 4 panels: 2 x 2
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.5 * cols, 4 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, pv in zip(axes.flat, panels):
        prow = [r for r in rows if pv is None or r[spec["panel"]] == pv]
        lines = []
        if isinstance(spec["y"], list):
            for col in spec["y"]:
                lines.append((col, [(_num(r[spec["x"]]), _num(r[col])) for r in prow]))
        elif spec.get("series"):
            for sv in sorted({r[spec["series"]] for r in prow}, key=lambda v: (str(v) in dashed, _natural(v))):
                lines.append((str(sv), [(_num(r[spec["x"]]), _num(r[spec["y"]])) for r in prow
                                        if r[spec["series"]] == sv]))
        else:
            lines.append((spec["y"], [(_num(r[spec["x"]]), _num(r[spec["y"]])) for r in prow]))
        drawn = 0
        for label, pts in lines:
            pts = sorted(p for p in pts if math.isfinite(p[0]) and math.isfinite(p[1]))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label,
                        linestyle="--" if label in dashed else "-")
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
            ax.legend(fontsize="small")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{path_stem}.{ext}")
    plt.close(fig)
    return True
