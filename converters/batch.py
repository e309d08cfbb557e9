"""Directory conversion: walk a tree, mirror it under OUTDIR with the target's extension.

Each file is converted on its own (atomically), optionally in worker processes; one bad file
never stops the others.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from . import api
from .atomic import sweep_stale
from .canonical.errors import EvalconvError, UsageError
from .registry import REGISTRY
from .sources import in_a_folder
from .walk import Found, collect

MESSAGES_PER_FILE = 20
FAILED = ("invalid", "unreadable", "unwritable")


@dataclass
class FileOutcome:
    source: str
    output: str | None
    rows: int = 0
    rejected: int = 0
    lossy_fields: int = 0
    warnings: int = 0
    status: str = "ok"  # ok | lossy | invalid | unreadable | unwritable
    messages: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # what the target does differently (LossReport)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BatchResult:
    files: list[FileOutcome]

    @property
    def exit_code(self) -> int:
        return 1 if any(f.status in FAILED for f in self.files) else 0

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.exit_code == 0, "files": [f.to_json() for f in self.files]}


def output_extension(to: str) -> str:
    return REGISTRY.get(to).output_suffix


def plan(root: str, outdir: str, *, to: str, include: tuple[str, ...] = (),
         exclude: tuple[str, ...] = ()) -> list[tuple[Found, str]]:
    """(input, output path) pairs; two inputs that would land on one output are refused."""
    ext = output_extension(to)
    pairs: list[tuple[Found, str]] = []
    taken: dict[str, str] = {}
    for found in collect([root], include=include, exclude=exclude, skip=outdir):
        stem = found.relative
        for known in sorted((e for f in REGISTRY.all() for e in f.extensions), key=len, reverse=True):
            if stem.lower().endswith(known):
                stem = stem[: -len(known)]
                break
        else:
            stem = os.path.splitext(stem)[0]
        out = os.path.join(outdir, *(stem + ext).split("/"))
        if out in taken:
            raise UsageError(f"'{taken[out]}' and '{found.relative}' would both become '{out}'; "
                             f"leave one out with --exclude")
        taken[out] = found.relative
        pairs.append((found, out))
    return pairs


def convert_one(source: str, label: str, output: str, to: str, from_: str | None, keep_going: bool,
                encoding: str | None, options: dict[str, Any], engine: Any = None, contexts: Any = None) -> FileOutcome:
    """Convert one file of a folder. `options`: read and writer options; a read option goes to
    the files whose format reads with it (in a worker process too: the block is set here)."""
    outcome = FileOutcome(label, output)
    try:
        os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
        with in_a_folder():
            result = api.convert(source, output, to=to, from_=from_, keep_going=keep_going, encoding=encoding,
                                 report_ids=False, jobs=1, engine=engine, contexts=contexts, **options)
    except EvalconvError as err:
        outcome.status, outcome.output = "unreadable", None
        outcome.messages.append(err.render())
        return outcome
    except OSError as err:  # a place the output cannot go: this file fails, the others go on
        outcome.status, outcome.output = "unwritable", None
        outcome.messages.append(f"{output}: cannot write: {err.strerror or err}")
        return outcome
    outcome.rows, outcome.rejected = result.rows_read, result.rejected
    outcome.lossy_fields = len({path for path, _ in result.loss.dropped.entries})
    outcome.warnings = result.log.warning_count
    outcome.notices = list(result.loss.notices) if result.wrote_output else []
    outcome.messages = [f.render() for f in (result.log.errors + result.log.warnings)[:MESSAGES_PER_FILE]]
    if not result.wrote_output:
        outcome.output = None
    if result.log.error_count:
        outcome.status = "invalid"
    elif result.loss.lossy:
        outcome.status = "lossy"
    return outcome


def convert_tree(root: str, outdir: str, *, to: str, from_: str | None = None,
                 include: tuple[str, ...] = (), exclude: tuple[str, ...] = (), jobs: int = 1,
                 keep_going: bool = False, encoding: str | None = None,
                 options: dict[str, Any] | None = None, engine: Any = None, contexts: Any = None,
                 on_done: Callable[[FileOutcome], None] | None = None) -> BatchResult:
    """Convert every set file under `root` into `outdir`. `options`: read and writer options, as
    `api.convert` takes them."""
    pairs = plan(root, outdir, to=to, include=include, exclude=exclude)
    tasks = [(found.path, found.relative, out, to, from_, keep_going, encoding, options or {}, engine, contexts)
             for found, out in pairs if found.refused is None]
    outcomes: dict[str, FileOutcome] = {}

    def done(outcome: FileOutcome) -> None:
        outcomes[outcome.source] = outcome
        if on_done:
            on_done(outcome)

    for found, _ in pairs:
        if found.refused is not None:  # a FIFO in the folder: never opened
            done(FileOutcome(found.relative, None, status="unreadable", messages=[str(found.refusal_line())]))

    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            done(convert_one(*task))
    else:
        from .engine.pools import INTERRUPTED, WorkerPool, answer_of, finished_in_turn

        try:
            with WorkerPool(jobs) as pool:  # Ctrl-C: the files in hand are dropped, no new ones start
                futures = [pool.submit(convert_one, *task) for task in tasks]
                for future in finished_in_turn(futures):
                    outcome = answer_of(future)
                    if outcome is INTERRUPTED:  # Ctrl-C reached the worker
                        raise KeyboardInterrupt
                    done(outcome)
        except BaseException:  # Ctrl-C: sweep the temp files of the conversions cut short
            for _, _, out, *_ in tasks:
                sweep_stale(os.path.dirname(os.path.abspath(out)), os.path.basename(out))
            raise
    return BatchResult([outcomes[found.relative] for found, _ in pairs])
