"""A worker's instructions a row on each route, counted by valgrind's callgrind: counts made in one
sitting agree to about 0.5%, where wall time on this shared two-core machine moves by 5-10%, so a
change to a route's per-row work can be told to within a percent.

    python bench/instructions.py [--rows 100000] [--routes pydantic-evals,csv] [--chunks 3]
    python bench/instructions.py --routes pydantic-evals --take-out yaml,fingerprints,envelope

For each route, the work of one worker (`engine.parallel._check_chunk`: parse, validate, encode)
runs over the bench set's first chunk, then over its first 1 + CHUNKS chunks, each time in its own
process under callgrind. The difference, over the rows of those CHUNKS chunks, is the route's
instructions a row, with the start-up, the imports and any first-use cost left out. A line then
gives each route against the first.

What this does not tell: time. Instructions are not cycles (cache misses, how many an instruction
takes), and valgrind's CPU has no SHA extensions, so OpenSSL's sha256 counts several times the
instructions it costs on the real CPU. The targets stay in wall time (`paired.py`, `run.py`); this
is for finding where a route's work is, and whether a change reduced it.

`--take-out PART,...` counts the pydantic-evals route again with each part replaced by nothing
(one at a time; the file it writes is then wrong): what the part costs, so an upper bound on what
making it cheaper could give. The parts are in `TAKE_OUT`.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent

import run  # noqa: E402  (a sibling: the cached data set, the bytecode cache)

_COLLECTED = re.compile(r"Collected : ([\d,]+)")


def _take_out(part: str) -> None:
    """Replace one part of the pydantic-evals writer by nothing, in this process."""
    from evalconv.reports import LossRecorder
    from evalconv.vendors._common import records
    from evalconv.vendors.pydantic_evals import write

    if part == "yaml":  # the case's YAML
        write.yaml_item = lambda case: "-\n"
    elif part == "fingerprints":  # the sha256 of each value with no other copy
        records.fingerprint = lambda value, dumped=None: "0a0a0a0a0a0a"
        records.metadata_sums = lambda metadata, dumped=None: dict.fromkeys(metadata, "0a0a0a0a0a0a")
    elif part == "envelope":  # the envelope in the metadata (so in the YAML), and its copy of the metadata
        records.add_envelope = lambda metadata, envelope: metadata
    elif part == "nan-check":  # the NaN and infinity check of the row's JSON
        records.check_row = lambda *args: None
    elif part == "carried":  # the carried fields' bookkeeping
        LossRecorder.carry_all = lambda self, keys, row_id: None
    elif part == "notices":  # the row notices
        LossRecorder.notice_row = lambda self, text, row_id: None
    else:
        raise SystemExit(f"no part named {part!r}: one of {', '.join(TAKE_OUT)}")


TAKE_OUT = ("yaml", "fingerprints", "envelope", "nan-check", "carried", "notices")


def child(path: str, to: str, chunks: int, take_out: str = "") -> None:
    """The worker's work over the first `chunks` chunks of `path`, in this process."""
    if take_out:
        _take_out(take_out)
    from evalconv.canonical.format import WriteOptions
    from evalconv.engine.parallel import _check_chunk, _chunks
    from evalconv.sources import identity

    found = identity(path)
    for start, end in list(_chunks(path))[:chunks]:
        _check_chunk(path, start, end, found, "bench", None if to == "none" else to, WriteOptions(), ())


def counted(path: Path, to: str, chunks: int, take_out: str = "") -> int:
    """Instructions of a process that runs `child` under callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           __file__, "--child", str(path), to, str(chunks), take_out], capture_output=True, text=True)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind failed for {to}: {done.stderr.strip().splitlines()[-1:]}")
    return int(found.group(1).replace(",", ""))


def rows_in(path: Path, first: int, last: int) -> int:
    """Rows in chunks first..last-1 (0-based) of `path`, as the engine cuts it."""
    from evalconv.engine.parallel import _chunks

    cuts = list(_chunks(str(path)))[first:last]
    with open(path, "rb") as f:
        f.seek(cuts[0][0])
        return f.read(cuts[-1][1] - cuts[0][0]).count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="the bench set's size (it is generated once)")
    parser.add_argument("--routes", default="pydantic-evals,csv",
                        help="target formats, comma-separated; 'none' validates only")
    parser.add_argument("--chunks", type=int, default=3, help="chunks counted after the first")
    parser.add_argument("--take-out", default="", help=f"pydantic-evals parts to count without: {', '.join(TAKE_OUT)}")
    parser.add_argument("--child", nargs=4, metavar=("PATH", "TO", "CHUNKS", "PART"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), args.child[3])
        return
    unknown = [part for part in filter(None, args.take_out.split(",")) if part not in TAKE_OUT]
    if unknown:
        parser.error(f"no part named {unknown[0]!r}: one of {', '.join(TAKE_OUT)}")
    if args.take_out and "pydantic-evals" not in args.routes.split(","):
        parser.error("--take-out needs pydantic-evals among --routes")
    if shutil.which("valgrind") is None:
        raise SystemExit("bench/instructions.py needs valgrind (apt-get install valgrind)")
    run.installed_bytecode()  # every child imports from bytecode, as an installed evalconv does
    path = run.dataset(args.rows, 8)
    rows = rows_in(path, 1, 1 + args.chunks)
    per_row: dict[str, float] = {}
    for to in args.routes.split(","):
        base, more = counted(path, to, 1), counted(path, to, 1 + args.chunks)
        per_row[to] = (more - base) / rows
        print(f"{to:<16} {per_row[to]:>10,.0f} instructions a row ({rows:,} rows)", flush=True)
    first = next(iter(per_row))
    print("against " + first + ": " + ", ".join(f"{to} {n / per_row[first]:.3f}x" for to, n in per_row.items()))
    whole = per_row.get("pydantic-evals")
    for part in filter(None, args.take_out.split(",")):
        assert whole is not None  # (checked above)
        without = (counted(path, "pydantic-evals", 1 + args.chunks, part) - counted(path, "pydantic-evals", 1, part)) / rows
        print(f"  without {part:<13} {without:>10,.0f} a row: the part is {whole - without:>9,.0f} "
              f"({(whole - without) / whole:.1%} of the route)", flush=True)


if __name__ == "__main__":
    os.chdir(BENCH.parent)
    main()
