"""evalconv against a hand-written script and pandas, in one run, on the same machine (issue 8).

    python bench/run.py                 # N = 10k, 100k and 1M (about 15 minutes on 2 idle cores)
    python bench/run.py --quick         # N = 20k, for trying things
    python bench/run.py --sizes 100000 --evalconv "python -c 'from evalconv.cli import main; main()'"
    python bench/run.py --sizes 20000,100000 --writers --no-pandas --repeat 2   # every writer against JSONL -> CSV

Every route runs as its own process, so its wall time includes interpreter start-up and its
peak memory is that process's max RSS (from wait4); the whole process tree's (parent and worker
processes) is sampled from /proc every 20 ms, as summed RSS and as PSS (pages the forked workers
share with the parent counted once). JSONL -> vendor routes also get their time as a multiple of
JSONL -> CSV in the same run; with --writers, each writer variant runs in turn with JSONL -> CSV
(CSV, writer, CSV, writer...) and its ratio is read against those paired CSV runs. Results go to bench/out/results.json and
bench/out/results.md; the table is printed as well. Generated data is cached in bench/out/data.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Callable
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

import generate  # noqa: E402  (beside this script: Python puts a script's folder first on sys.path)

CANONICAL = ("csv", "json", "jsonl")
DIR_FILES = 100  # files in the directory-conversion benchmark
REPEAT_UNDER_S = 10.0  # repeat a route only while its runs are shorter than this


@dataclass
class Result:
    size: int
    route: str
    tool: str
    seconds: float | None               # best wall time
    peak_rss_mb: float | None
    ok: bool = True
    note: str = ""
    cpu_seconds: float | None = None    # user + system time of the best run
    rows_per_s: float | None = None
    vs_script: float | None = None      # this tool's wall time / the script's, same route
    cpu_vs_script: float | None = None  # the same with CPU time (robust to a busy machine)
    pandas_vs: float | None = None      # pandas wall time / this tool's (how many times faster)
    load: float | None = None           # 1-minute load average before the best run
    runs: list[float] = field(default_factory=list)
    tree_rss_mb: float | None = None    # peak of the whole process tree (parent + workers), RSS summed
    tree_pss_mb: float | None = None    # the same in PSS: pages forked workers share counted once
    vs_csv: float | None = None         # evalconv JSONL -> vendor: wall time / evalconv JSONL -> CSV, same run
    cpu_vs_csv: float | None = None     # the same with CPU time (JSONL -> CSV's includes its two workers)


@dataclass
class Measured:
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    returncode: int
    stderr: str
    load: float
    timed_out: bool = False
    tree_rss_mb: float | None = None  # the process and its workers: the largest sum of RSS seen
    tree_pss_mb: float | None = None  # the same in PSS (pages a forked worker shares are split)


class TreeMemory(threading.Thread):
    """Samples a process and its descendants (the worker processes) every `interval` seconds from
    /proc: the highest sum of their RSS, and of their PSS, which counts a page that forked
    workers share with the parent once. Sampling can miss a peak shorter than the interval;
    the parent's own peak comes exactly from wait4."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.rss_kb = self.pss_kb = 0
        self.seen = os.path.exists(f"/proc/{pid}/smaps_rollup")
        self._done = threading.Event()

    def run(self) -> None:
        while self.seen and not self._done.is_set():
            rss = pss = 0
            for pid in self._tree():
                fields = _rollup(pid)
                rss += fields.get("Rss", 0)
                pss += fields.get("Pss", 0)
            self.rss_kb, self.pss_kb = max(self.rss_kb, rss), max(self.pss_kb, pss)
            self._done.wait(self.interval)

    def _tree(self) -> list[int]:
        found, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            try:
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as f:
                        todo += [int(c) for c in f.read().split()]
            except OSError:
                continue
        return found

    def stop(self) -> tuple[float | None, float | None]:
        self._done.set()
        self.join()
        if not self.seen or not self.rss_kb:
            return None, None
        return self.rss_kb / 1024, self.pss_kb / 1024


def _rollup(pid: int) -> dict[str, int]:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return {}
    return {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in lines) if k in ("Rss", "Pss")}


PYCACHE = BENCH / "out" / "pycache"


def bytecode_cache() -> str:
    """Let every child write and read its bytecode in bench/out/pycache, whatever
    PYTHONDONTWRITEBYTECODE says (this machine sets it): an installed package imports from
    bytecode pip compiled at install, so a process that compiles evalconv's modules at each start
    (0.1-0.2 CPU seconds, before any work) is not what a user runs. Each source file's bytecode is
    kept under its own path, so two installs side by side do not share it."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    sys.pycache_prefix = str(PYCACHE)
    return str(PYCACHE)


def installed_bytecode() -> str:
    """`bytecode_cache`, with the evalconv this interpreter imports compiled into it now."""
    import compileall
    import importlib.util

    prefix = bytecode_cache()
    for package in ("evalconv", "evalconv.canonical", "evalconv.vendors"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.origin is not None
        compileall.compile_dir(os.path.dirname(spec.origin), quiet=1)
    return prefix


def run_process(cmd: list[str], timeout: float) -> Measured:
    """Run `cmd`, wait for it with wait4 and return its wall and CPU time (workers included), its
    own max RSS, and the whole process tree's peak memory, sampled."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        tree = TreeMemory(proc.pid)
        tree.start()
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # interrupted: leave no process behind
            proc.kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
            tree_rss, tree_pss = tree.stop()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace")
    # wait4's usage counts the workers the process reaped (CPU summed; max RSS is the largest one's)
    return Measured(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode,
                    tail, load, timed_out=seconds >= timeout, tree_rss_mb=tree_rss, tree_pss_mb=tree_pss)


def measure(size: int, route: str, tool: str, cmd: list[str], repeat: int, timeout: float,
            check_lines: Path | None = None) -> Result:
    """Up to `repeat` runs (fewer when a run is long); the best wall time, the highest peak RSS."""
    runs: list[Measured] = []
    for _ in range(repeat):
        m = run_process(cmd, timeout)
        if m.returncode != 0:
            return failed(size, route, tool, m, timeout)
        runs.append(m)
        if m.seconds > REPEAT_UNDER_S:
            break
    result = summary(size, route, tool, runs)
    if check_lines is not None:
        with open(check_lines, "rb") as f:
            lines = sum(1 for _ in f)
        if lines != size:
            result.ok, result.note = False, f"wrote {lines} lines, expected {size}"
    report(result, runs)
    return result


def measure_paired(size: int, route: str, cmd: list[str], base_route: str, base_cmd: list[str], repeat: int,
                   timeout: float) -> tuple[Result, Result | None]:
    """`base_cmd` and `cmd` run in turn, `repeat` times (base, cmd, base, cmd...), so that each
    route's best run and its base's were taken under the same load; (route, base) results, the
    route's `vs_csv` read against this base."""
    runs: list[Measured] = []
    base_runs: list[Measured] = []
    for _ in range(repeat):
        b = run_process(base_cmd, timeout)
        if b.returncode != 0:
            return failed(size, route, "evalconv", b, timeout, f"its base {base_route} failed: "), None
        base_runs.append(b)
        m = run_process(cmd, timeout)
        if m.returncode != 0:
            return failed(size, route, "evalconv", m, timeout), None
        runs.append(m)
    base = summary(size, f"{base_route} (paired with {route})", "evalconv", base_runs)
    result = summary(size, route, "evalconv", runs)
    if base.seconds and result.seconds:
        result.vs_csv = result.seconds / base.seconds
        result.cpu_vs_csv = result.cpu_seconds / base.cpu_seconds if result.cpu_seconds and base.cpu_seconds else None
    result.note = (f"paired: {base_route} {base.seconds:.2f} s, {base.cpu_seconds:.2f} CPU-s, "
                   f"tree {fmt(base.tree_rss_mb, '.0f', '-')} MB RSS") if base.seconds and base.cpu_seconds else ""
    report(base, base_runs)
    report(result, runs)
    return result, base


def failed(size: int, route: str, tool: str, m: Measured, timeout: float, prefix: str = "") -> Result:
    last = m.stderr.strip().splitlines()[-1:] or ["(no output)"]
    why = prefix + (f"killed after {timeout:.0f} s" if m.timed_out else f"exit {m.returncode}: {last[0][:160]}")
    print(f"  ! {route:<22} {tool:<9} {why}", flush=True)
    return Result(size, route, tool, None, m.peak_rss_mb, ok=False, note=why)


def summary(size: int, route: str, tool: str, runs: list[Measured]) -> Result:
    """The best run's wall and CPU time; the highest peak RSS, of the process and of its tree."""
    best = min(runs, key=lambda m: m.seconds)
    rss = max(m.peak_rss_mb for m in runs)
    tree_rss = max(m.tree_rss_mb or 0 for m in runs)
    tree_pss = max(m.tree_pss_mb or 0 for m in runs)
    return Result(size, route, tool, best.seconds, rss, cpu_seconds=best.cpu_seconds,
                  rows_per_s=size / best.seconds, load=best.load, runs=[round(m.seconds, 3) for m in runs],
                  tree_rss_mb=max(tree_rss, rss) if tree_rss else None, tree_pss_mb=tree_pss or None)


def report(result: Result, runs: list[Measured]) -> None:
    best = min(runs, key=lambda m: m.seconds)
    print(f"  {result.route:<22} {result.tool:<9} {best.seconds:7.2f} s {best.cpu_seconds:7.2f} cpu-s "
          f"{result.rows_per_s:>9,.0f} rows/s {result.peak_rss_mb:7.0f} MB (tree "
          f"{fmt(result.tree_rss_mb, '.0f', '-')} RSS, {fmt(result.tree_pss_mb, '.0f', '-')} PSS)  "
          f"load {best.load:.1f} {result.note}", flush=True)


def skipped(size: int, route: str, tool: str, why: str) -> Result:
    print(f"  {route:<22} {tool:<9} skipped: {why}", flush=True)
    return Result(size, route, tool, None, None, ok=True, note=f"skipped: {why}")


def dataset(size: int, seed: int) -> Path:
    path = BENCH / "out" / "data" / f"rows-{size}-seed{seed}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"generating {size:,} rows -> {path.relative_to(ROOT)}", flush=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as out:
            generate.generate(size, out, seed)
        tmp.replace(path)
    return path


def formats(evalconv: list[str]) -> list[dict]:
    done = subprocess.run([*evalconv, "formats", "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"`evalconv formats` failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def has_jobs_option(evalconv: list[str]) -> bool:
    done = subprocess.run([*evalconv, "convert", "--help"], capture_output=True, text=True, cwd=ROOT)
    return done.returncode == 0 and any(tok.startswith(("-j", "--jobs")) for tok in done.stdout.split())


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.evalconv = shlex.split(args.evalconv)
        self.repeat_small = args.repeat
        self.seed = args.seed
        self.pandas = not args.no_pandas
        self.max_mb = args.max_gb * 1024
        self.max_seconds = args.max_route_seconds
        self.vendors = args.vendors
        self.writers_only = args.writers
        self.results: list[Result] = []
        (BENCH / "out").mkdir(exist_ok=True)
        self.work = Path(tempfile.mkdtemp(prefix="evalconv-bench-", dir=BENCH / "out"))
        self.formats = formats(self.evalconv)
        self.machine = machine()  # the code as it was when the run started

    def repeat(self, size: int) -> int:
        return self.repeat_small if size <= 100_000 else 1

    def out(self, name: str) -> Path:
        return self.work / name

    def timed(self, size: int, route: str, tool: str, cmd: list[str], check: Path | None = None) -> Result:
        """Measure, unless a smaller run of the same route says this one would take too long or
        too much memory (whole-document routes grow with the set)."""
        why = self._too_big(size, route, tool)
        result = skipped(size, route, tool, why) if why else measure(
            size, route, tool, cmd, self.repeat(size), timeout=2 * self.max_seconds, check_lines=check)
        self.results.append(result)
        return result

    def _too_big(self, size: int, route: str, tool: str) -> str | None:
        before = [r for r in self.results if (r.route, r.tool) == (route, tool) and r.size < size
                  and (r.peak_rss_mb or r.note.startswith("skipped"))]
        if not before:
            return None
        last = max(before, key=lambda r: r.size)
        if last.note.startswith("skipped"):
            return last.note[len("skipped: "):]
        scale = size / last.size
        if last.peak_rss_mb and last.peak_rss_mb * scale > self.max_mb:
            return f"projected peak {last.peak_rss_mb * scale / 1024:.1f} GB > --max-gb {self.max_mb / 1024:g}"
        if last.seconds is None:
            return f"failed at {last.size:,} rows"
        if last.seconds * scale > self.max_seconds:
            return f"projected {last.seconds * scale:.0f} s > --max-route-seconds {self.max_seconds:g}"
        return None

    def ec(self, size: int, route: str, args: list[str], check: Path | None = None) -> Result:
        return self.timed(size, route, "evalconv", [*self.evalconv, *args], check)

    def script(self, size: int, route: str, mode: str, src: Path, dst: Path) -> Result:
        cmd = [sys.executable, str(BENCH / "baseline_script.py"), mode, str(src), str(dst)]
        return self.timed(size, route, "script", cmd)

    def pandas_route(self, size: int, route: str, mode: str, src: Path, dst: Path) -> None:
        if self.pandas:
            cmd = [sys.executable, str(BENCH / "baseline_pandas.py"), mode, str(src), str(dst)]
            self.timed(size, route, "pandas", cmd)

    def size(self, size: int) -> None:
        src = dataset(size, self.seed)
        print(f"\n== {size:,} rows ({src.stat().st_size / 1e6:,.0f} MB of JSONL)", flush=True)
        csv_out, jsonl_back, json_out = self.out("set.csv"), self.out("back.jsonl"), self.out("set.json")

        self.ec(size, "JSONL -> CSV", [str(src), "--from", "jsonl", "--to", "csv", "-o", str(csv_out)])
        if self.writers_only:
            for fmt in self._vendor_formats():
                for ext in self._written_extensions(fmt):
                    self.vendor(size, src, fmt, ext)
            self._clean("set.csv")
            return
        self.script(size, "JSONL -> CSV", "jsonl2csv", src, self.out("script.csv"))
        self.pandas_route(size, "JSONL -> CSV", "jsonl2csv", src, self.out("pandas.csv"))

        self.ec(size, "CSV -> JSONL", [str(csv_out), "--from", "csv", "--to", "jsonl", "-o", str(jsonl_back)],
                check=jsonl_back)
        self.script(size, "CSV -> JSONL", "csv2jsonl", csv_out, self.out("script.jsonl"))
        self.pandas_route(size, "CSV -> JSONL", "csv2jsonl", csv_out, self.out("pandas.jsonl"))
        self._clean("script.csv", "pandas.csv", "script.jsonl", "pandas.jsonl", "back.jsonl")

        self.ec(size, "validate JSONL", ["validate", "--from", "jsonl", str(src)])
        self.ec(size, "validate CSV", ["validate", "--from", "csv", str(csv_out)])
        self.ec(size, "JSONL -> JSON", [str(src), "--from", "jsonl", "--to", "json", "-o", str(json_out)])
        self.ec(size, "JSON -> JSONL", [str(json_out), "--from", "json", "--to", "jsonl", "-o", str(jsonl_back)],
                check=jsonl_back)
        self._clean("set.json", "back.jsonl")
        for fmt in self._vendor_formats():
            self.vendor(size, src, fmt)
        self.directory(size, src)
        self._clean("set.csv")

    def _vendor_formats(self) -> list[dict]:
        found = [f for f in self.formats if f["name"] not in CANONICAL and f["write"]]
        if self.vendors is not None:
            found = [f for f in found if f["name"] in self.vendors]
        return found

    def _written_extensions(self, fmt: dict) -> list[str | None]:
        """One file name per variant the writer writes (promptfoo's YAML, JSON, JSONL and CSV...):
        the most specific extension of each kind of name (`.x.jsonl` and `.jsonl` are one kind for
        the format x), kept when a one-row write takes it."""
        if not fmt["extensions"]:
            return [None]
        found: dict[str, str] = {}
        for ext in fmt["extensions"]:  # `.openai-evals.jsonl` and `.jsonl` alike, `.registry.jsonl` apart
            kind = ext.removeprefix(f".{fmt['name']}").replace(".yml", ".yaml")
            found.setdefault(kind if kind.startswith(".") else ext, ext)
        one_row = self.out("one-row.jsonl")
        with open(dataset(10_000, self.seed), encoding="utf-8") as f:
            one_row.write_text(f.readline(), encoding="utf-8")
        kept = []
        for ext in found.values():
            dst = self.out(f"probe{ext}")
            done = subprocess.run([*self.evalconv, str(one_row), "--from", "jsonl", "--to", fmt["name"], "-o", str(dst)],
                                  capture_output=True, cwd=ROOT)
            dst.unlink(missing_ok=True)
            if done.returncode == 0:
                kept.append(ext)
        self._clean("one-row.jsonl")
        return kept

    def vendor(self, size: int, src: Path, fmt: dict, ext: str | None = None) -> None:
        name = fmt["name"]
        first = ext is None or ext == fmt["extensions"][0]
        ext = ext or (fmt["extensions"][0] if fmt["extensions"] else ".out")
        dst = self.out(f"set{ext}" if ext.startswith(".") else f"set.{ext}")
        route = f"JSONL -> {name}" if first else f"JSONL -> {name} ({ext})"
        args = [str(src), "--from", "jsonl", "--to", name, "-o", str(dst)]
        written = self.paired(size, route, args, src) if self.writers_only else self.ec(size, route, args)
        if name == "parquet" and not self.writers_only:  # pandas' one-liner for the same job (docs/pandas.md)
            self.pandas_route(size, "JSONL -> parquet", "jsonl2parquet", src, self.out("pandas.parquet"))
        if fmt["read"] and written.ok and dst.exists() and not self.writers_only:
            back = self.out("vendor-back.jsonl")
            read = self.ec(size, f"{name} -> JSONL", [str(dst), "--from", name, "--to", "jsonl", "-o", str(back)])
            if name == "parquet":
                self.pandas_route(size, "parquet -> JSONL", "parquet2jsonl", dst, self.out("pandas.jsonl"))
                self._clean("pandas.parquet", "pandas.jsonl")
            if not fmt.get("streaming"):
                read.note = (read.note + " (not a streaming format: read whole)").strip()
        shutil.rmtree(dst, ignore_errors=True) if dst.is_dir() else dst.unlink(missing_ok=True)
        self._clean("vendor-back.jsonl")

    def paired(self, size: int, route: str, args: list[str], src: Path) -> Result:
        """`route` timed in turn with JSONL -> CSV (`measure_paired`): its ratio to the canonical
        CSV route is read from runs taken under the same load."""
        why = self._too_big(size, route, "evalconv")
        if why:
            result = skipped(size, route, "evalconv", why)
            self.results.append(result)
            return result
        base_args = [str(src), "--from", "jsonl", "--to", "csv", "-o", str(self.out("paired.csv"))]
        result, base = measure_paired(size, route, [*self.evalconv, *args], "JSONL -> CSV",
                                      [*self.evalconv, *base_args], self.repeat(size), timeout=2 * self.max_seconds)
        self.results += [result] if base is None else [base, result]
        self._clean("paired.csv")
        return result

    def directory(self, size: int, src: Path) -> None:
        route = f"dir of {DIR_FILES} JSONL -> CSV"
        if not has_jobs_option(self.evalconv):
            self.results.append(skipped(size, route, "evalconv", "`evalconv DIR --to FORMAT -o OUTDIR -j N` "
                                                                "is not there yet"))
            return
        folder = self.out("dir-in")
        folder.mkdir()
        per_file = -(-size // DIR_FILES)
        with open(src, encoding="utf-8") as f:
            for i in range(DIR_FILES):
                with open(folder / f"part-{i:03d}.jsonl", "w", encoding="utf-8") as part:
                    for _ in range(per_file):
                        line = f.readline()
                        if not line:
                            break
                        part.write(line)
        for jobs in (1, 2):
            outdir = self.out(f"dir-out-{jobs}")
            self.timed(size, f"{route} -j {jobs}", "evalconv",
                       [*self.evalconv, str(folder), "--to", "csv", "-o", str(outdir), "-j", str(jobs)])
            shutil.rmtree(outdir, ignore_errors=True)
        shutil.rmtree(folder, ignore_errors=True)

    def _clean(self, *names: str) -> None:
        for name in names:
            self.out(name).unlink(missing_ok=True)

    def run(self, sizes: list[int]) -> None:
        self.sizes = sizes
        try:
            for size in sizes:
                self.size(size)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
        compute_ratios(self.results)


def compute_ratios(results: list[Result]) -> None:
    def find(size: int, route: str, tool: str) -> Result | None:
        return next((r for r in results if (r.size, r.route, r.tool) == (size, route, tool)
                     and r.ok and r.seconds), None)

    for r in results:
        if not (r.ok and r.seconds) or r.tool == "script":
            continue
        # Routes with no script of their own compare with the script's JSONL -> CSV flatten.
        script = find(r.size, r.route, "script") or find(r.size, "JSONL -> CSV", "script")
        if script:
            r.vs_script = r.seconds / script.seconds
            r.cpu_vs_script = r.cpu_seconds / script.cpu_seconds if script.cpu_seconds else None
        pandas = find(r.size, r.route, "pandas")
        if pandas and r.tool != "pandas":
            r.pandas_vs = pandas.seconds / r.seconds
        csv = find(r.size, "JSONL -> CSV", "evalconv")
        paired = r.vs_csv is not None or "(paired with" in r.route  # read against its own base already
        if csv and r.tool == "evalconv" and r.route.startswith("JSONL -> ") and r.route != "JSONL -> CSV" \
                and not paired:
            r.vs_csv = r.seconds / csv.seconds
            r.cpu_vs_csv = r.cpu_seconds / csv.cpu_seconds if r.cpu_seconds and csv.cpu_seconds else None


def machine() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "converters", "canonical", "vendors"],
                           capture_output=True, text=True, cwd=ROOT)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo", encoding="utf-8")
                if line.startswith("model name")), platform.processor()) if os.path.exists("/proc/cpuinfo") else ""
    return {"cpus": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "platform": platform.platform(), "commit": commit.stdout.strip(),
            "core_modified": bool(dirty.stdout.strip()), "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def fmt(value: float | None, pattern: str, missing: str = "") -> str:
    return missing if value is None else format(value, pattern)


def table(results: list[Result]) -> str:
    head = ("| rows | route | tool | wall s | rows/s | CPU s | x script (wall) | x script (CPU) "
            "| pandas / this | x JSONL->CSV (wall) | x JSONL->CSV (CPU) | peak RSS MB | tree RSS MB | tree PSS MB | note |\n"
            "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
    lines = []
    for r in results:
        lines.append(f"| {r.size:,} | {r.route} | {r.tool} | {fmt(r.seconds, '.2f', '-')} "
                     f"| {fmt(r.rows_per_s, ',.0f', '-')} | {fmt(r.cpu_seconds, '.2f', '-')} "
                     f"| {fmt(r.vs_script, '.2f')} | {fmt(r.cpu_vs_script, '.2f')} "
                     f"| {fmt(r.pandas_vs, '.1f')} | {fmt(r.vs_csv, '.2f')} | {fmt(r.cpu_vs_csv, '.2f')} "
                     f"| {fmt(r.peak_rss_mb, ',.0f', '-')} "
                     f"| {fmt(r.tree_rss_mb, ',.0f', '-')} | {fmt(r.tree_pss_mb, ',.0f', '-')} | {r.note} |")
    return head + "\n".join(lines) + "\n"


STREAMING_ROUTES = ("JSONL -> CSV", "CSV -> JSONL", "validate JSONL", "validate CSV", "JSONL -> JSON")


Add = Callable[[str, str, "bool | None"], None]  # (target, what was measured, does it hold)


def targets(results: list[Result], streaming_vendors: list[str]) -> list[dict]:
    """Issue 8's targets, checked against this run's figures."""
    out = []

    def add(target: str, measured: str, holds: bool | None) -> None:
        out.append({"target": target, "measured": measured, "holds": holds})

    _speed_targets(results, add)
    biggest = max((r.size for r in results), default=0)
    if biggest < 1_000_000:
        add("peak memory under 150 MB at 1M rows (streaming routes)", "not run at 1M rows", None)
        biggest = -1  # no route matches
    _memory_targets(results, streaming_vendors, biggest, add)
    _vendor_targets(results, add)
    _tree_and_folder_targets(results, biggest, add)
    return out


def _speed_targets(results: list[Result], add: Add) -> None:
    ours = {(r.size, r.route): r for r in results if r.tool == "evalconv" and r.ok and r.seconds}
    for (size, route), r in sorted(ours.items()):
        if size < 100_000:  # the issue's targets are for 100k and 1M rows; below, start-up dominates
            continue
        if route == "JSONL -> CSV" and r.vs_script:
            add(f"JSONL -> CSV at most 1.2x the script's time ({size:,} rows)",
                f"{r.vs_script:.2f}x wall, {r.cpu_vs_script or 0:.2f}x CPU", r.vs_script <= 1.2)
        if route == "JSONL -> CSV" and r.pandas_vs:
            add(f"JSONL -> CSV at least 5x faster than pandas ({size:,} rows)", f"{r.pandas_vs:.1f}x",
                r.pandas_vs >= 5)
        if route in ("JSONL -> parquet", "parquet -> JSONL") and r.vs_script:
            add(f"{route} at least as fast as the script's JSONL -> CSV ({size:,} rows)",
                f"{r.vs_script:.2f}x wall, {r.cpu_vs_script or 0:.2f}x CPU", r.vs_script <= 1.0)
        if route == "validate JSONL" and r.rows_per_s is not None:
            add(f"validate-only at least 150k rows/s ({size:,} rows)", f"{r.rows_per_s:,.0f} rows/s",
                r.rows_per_s >= 150_000)


def _memory_targets(results: list[Result], streaming_vendors: list[str], biggest: int, add: Add) -> None:
    vendor_routes = [f"JSONL -> {v}" for v in streaming_vendors] + [f"{v} -> JSONL" for v in streaming_vendors]
    for route in (*STREAMING_ROUTES, *vendor_routes):
        r = next((r for r in results if (r.size, r.route, r.tool) == (biggest, route, "evalconv")), None)
        if r is None:
            continue
        if r.peak_rss_mb is None:
            add(f"{route}: peak memory under 150 MB at {biggest:,} rows", r.note or "not measured", None)
        else:
            add(f"{route}: peak memory under 150 MB at {biggest:,} rows", f"{r.peak_rss_mb:,.0f} MB",
                r.peak_rss_mb < 150)


def _vendor_targets(results: list[Result], add: Add) -> None:
    for r in results:
        if r.vs_csv is not None and r.size >= 50_000:  # below, start-up dominates both
            # Wall time is what a user waits for (read it on an idle machine); CPU time is what a
            # shared machine measures steadily (JSONL -> CSV's counts its two workers, and so
            # does a vendor writer's that writes on two cores)
            add(f"{r.route} within 2x of JSONL -> CSV's wall time ({r.size:,} rows)",
                f"{r.vs_csv:.2f}x wall", r.vs_csv <= 2)
            if r.cpu_vs_csv is not None:
                add(f"{r.route} within 2x of JSONL -> CSV's CPU time ({r.size:,} rows)",
                    f"{r.cpu_vs_csv:.2f}x CPU", r.cpu_vs_csv <= 2)


def _tree_and_folder_targets(results: list[Result], biggest: int, add: Add) -> None:
    for route in ("JSONL -> CSV", "validate JSONL"):
        r = next((r for r in results if (r.size, r.route, r.tool) == (biggest, route, "evalconv")), None)
        if r is not None and r.tree_pss_mb is not None:
            add(f"{route}: the process tree (parent + workers) under 150 MB at {biggest:,} rows",
                f"{r.tree_pss_mb:,.0f} MB PSS ({r.tree_rss_mb:,.0f} MB RSS summed)", r.tree_pss_mb < 150)
    for size in sorted({r.size for r in results if r.size >= 100_000}):
        one = next((r for r in results if r.size == size and r.route.endswith("-j 1") and r.ok and r.seconds), None)
        two = next((r for r in results if r.size == size and r.route.endswith("-j 2") and r.ok and r.seconds), None)
        if one and one.seconds and two and two.seconds:
            add(f"directory conversion: -j 2 close to 2x faster than -j 1 ({size:,} rows in {DIR_FILES} files)",
                f"{one.seconds / two.seconds:.2f}x", one.seconds / two.seconds >= 1.8)


def targets_table(rows: list[dict]) -> str:
    mark = {True: "holds", False: "**does not hold**", None: "not measured"}
    return ("| target | measured | status |\n|---|---|---|\n"
            + "".join(f"| {t['target']} | {t['measured']} | {mark[t['holds']]} |\n" for t in rows))


def write_results(info: dict) -> Path:
    out = BENCH / "out"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    results = [Result(**r) for r in info["results"]]
    m = info["machine"]
    changed = f", {m['commit_at_end']} at the end" if m.get("commit_at_end") else ""
    md = (f"Measured from {m['date']} on {m['cpus']} x {m['cpu']}, Python {m['python']}, commit {m['commit']}"
          f"{' (core files modified)' if m['core_modified'] else ''}{changed}; `{info['command']}`.\n\n"
          + table(results) + "\n" + targets_table(info["targets"]))
    (out / "results.md").write_text(md, encoding="utf-8")
    return out / "results.md"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="evalconv vs a hand-written script vs pandas")
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="comma-separated row counts; each size projects the next one's time and memory")
    parser.add_argument("--quick", action="store_true", help="one small size (20k rows)")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="runs per route up to 100k rows (best is kept)")
    parser.add_argument("--evalconv", default="evalconv", help="the evalconv command (default: the installed CLI)")
    parser.add_argument("--vendors", type=lambda s: s.split(","), help="only these vendor formats")
    parser.add_argument("--no-pandas", action="store_true")
    parser.add_argument("--writers", action="store_true",
                        help="only JSONL -> CSV and JSONL -> each vendor, each timed in turn with JSONL -> CSV: "
                             "the vendor writers' ratios")
    parser.add_argument("--max-gb", type=float, default=6.0,
                        help="skip a run whose peak memory, projected from a smaller size, is above this")
    parser.add_argument("--max-route-seconds", type=float, default=240.0,
                        help="skip a run projected to take longer; kill one that takes twice this")
    parser.add_argument("--render", metavar="RESULTS_JSON",
                        help="only re-render results.md (and the targets) from a results.json")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="leave PYTHONDONTWRITEBYTECODE as it is (each process compiles evalconv's modules again)")
    args = parser.parse_args(argv)
    if not args.no_bytecode:
        bytecode_cache()  # the first run of a route compiles; the best of --repeat is kept
    if args.render:
        info = json.loads(Path(args.render).read_text(encoding="utf-8"))
        results = [Result(**r) for r in info["results"]]
        if "streaming_vendors" not in info:
            info["streaming_vendors"] = [f["name"] for f in formats(shlex.split(args.evalconv))
                                         if f["name"] not in CANONICAL and f["write"] and f.get("streaming")]
        if not info["command"].startswith("python bench/"):
            info["command"] = "python bench/" + info["command"]
        info["targets"] = targets(results, info["streaming_vendors"])
        print(write_results(info).read_text(encoding="utf-8"))
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so a killed run cleans up after itself
    sizes = [20_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    bench = Bench(args)
    bench.run(sizes)
    streaming_vendors = [f["name"] for f in bench._vendor_formats() if f.get("streaming")]
    end = machine()
    if (end["commit"], end["core_modified"]) != (bench.machine["commit"], bench.machine["core_modified"]):
        bench.machine["commit_at_end"] = end["commit"]  # the code changed during the run
    info = {"machine": bench.machine, "command": " ".join(["python bench/run.py", *sys.argv[1:]]),
            "evalconv": args.evalconv, "seed": args.seed, "streaming_vendors": streaming_vendors,
            "results": [asdict(r) for r in bench.results],
            "targets": targets(bench.results, streaming_vendors)}
    path = write_results(info)
    print("\n" + table(bench.results) + "\n" + targets_table(info["targets"]))
    print(f"written to {path.relative_to(ROOT)} and results.json in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
