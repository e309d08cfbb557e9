"""Wide sheets import in time linear in their cells (issue 23).

    python bench/wide_sheets.py                        # 1k and 10k columns
    python bench/wide_sheets.py --columns 1000 25000 --suggest 1000000

Routes, each timed in this process (CPU seconds, best of --repeat), per cell:

- `import` of a JSONL sheet of --rows rows x N keys (every key a column, kept as metadata);
- `import` of a Parquet file of --rows rows x N columns;
- `--suggest-map` of a CSV sheet whose header has N columns (and one row).

The target is a ratio measured in the same run, never an absolute time: the time per cell at the
largest N within 1.5x the time per cell at the smallest (linear; quadratic work would show as the
ratio of the sizes, 10x from 1k to 10k). Results go to bench/out/wide_sheets.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

BENCH = Path(__file__).resolve().parent
LINEAR = 1.5


def _jsonl(folder: Path, rows: int, columns: int) -> Path:
    path = folder / f"wide-{columns}.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for r in range(rows):
            record = {"question": f"Question {r}?", "answer": f"Answer {r}"}
            record.update((f"key_{c}", f"value {r}.{c}") for c in range(columns - 2))
            out.write(json.dumps(record) + "\n")
    return path


def _parquet(folder: Path, rows: int, columns: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"wide-{columns}.parquet"
    data = {"question": [f"Question {r}?" for r in range(rows)], "answer": [f"Answer {r}" for r in range(rows)]}
    data.update((f"key_{c}", [f"value {r}.{c}" for r in range(rows)]) for c in range(columns - 2))
    pq.write_table(pa.table(data), path)
    return path


def _header(folder: Path, columns: int) -> Path:
    path = folder / f"header-{columns}.csv"
    names = ["question", "answer", *(f"Column {c}" for c in range(columns - 2))]
    path.write_text(",".join(names) + "\n" + ",".join("x" for _ in names) + "\n", encoding="utf-8")
    return path


def _cpu(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--columns", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--suggest", type=int, nargs="+", default=None,
                        help="header widths for --suggest-map (default: --columns x 10)")
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    from evalconv.authoring import sheet_import

    suggest = args.suggest or [n * 10 for n in args.columns]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        out = str(folder / "out.jsonl")

        def importing(path: Path) -> Callable[[], object]:
            return lambda: sheet_import.import_sheet(str(path), out)

        def suggesting(path: Path) -> Callable[[], object]:
            return lambda: sheet_import.suggested_map(sheet_import.plan(sheet_import.read_sheet(str(path)), None,
                                                                        need_input=False))

        routes: list[tuple[str, list[int], Callable[[int], Callable[[], object]], Callable[[int], int]]] = [
            ("import jsonl", args.columns, lambda n: importing(_jsonl(folder, args.rows, n)), lambda n: n * args.rows),
            ("import parquet", args.columns, lambda n: importing(_parquet(folder, args.rows, n)),
             lambda n: n * args.rows),
            ("--suggest-map", suggest, lambda n: suggesting(_header(folder, n)), lambda n: n),
        ]
        ok = True
        for name, sizes, make, cells in routes:
            per_cell = {}
            for n in sizes:
                seconds = _cpu(make(n), args.repeat)
                per_cell[n] = seconds / cells(n) * 1e6
                print(f"{name:16} {n:>9,} columns: {seconds:8.2f} s CPU, {per_cell[n]:7.2f} us a cell", flush=True)
            ratio = per_cell[sizes[-1]] / per_cell[sizes[0]]
            holds = ratio <= LINEAR
            ok &= holds
            print(f"{name:16} time a cell at {sizes[-1]:,} / at {sizes[0]:,}: {ratio:.2f}x "
                  f"({'holds' if holds else 'FAILS'}: target <= {LINEAR}x)", flush=True)
            results[name] = {**{str(n): v for n, v in per_cell.items()}, "ratio": ratio}
    (BENCH / "out").mkdir(exist_ok=True)
    (BENCH / "out" / "wide_sheets.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
