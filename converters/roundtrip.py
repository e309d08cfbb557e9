"""The round-trip gate: canonical -> FORMAT -> canonical, for every set and every route.

A canonical format must give the rows back identical. A vendor format must differ by exactly
what its loss report lists: a change it did not report fails, and so does a reported loss that
did not happen (the report would be lying). `strict` also fails on reported loss.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import api
from .batch import output_extension
from .canonical.diff import diff_paths, unexplained
from .canonical.errors import EvalconvError
from .canonical.row import Row
from .canonical.suggest import count
from .registry import REGISTRY
from .sources import Progress, tell, watching
from .walk import collect


@dataclass
class Problem:
    id: str | None
    path: str
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "problem": self.problem}


@dataclass
class RouteResult:
    file: str
    via: str
    rows: int = 0
    status: str = "ok"  # ok | lossy | fail | error
    problems: list[Problem] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    row_ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "via": self.via, "rows": self.rows, "status": self.status,
                "problems": [p.to_json() for p in self.problems], "dropped": self.dropped}


@dataclass
class RoundtripReport:
    results: list[RouteResult]
    strict: bool = False
    unreadable: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)

    def failed(self, result: RouteResult) -> bool:
        return result.status in ("fail", "error") or (self.strict and result.status == "lossy")

    @property
    def exit_code(self) -> int:
        if self.unreadable:
            return 2
        return 1 if any(self.failed(r) for r in self.results) else 0

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.exit_code == 0, "strict": self.strict, "unreadable": self.unreadable,
                "results": [r.to_json() for r in self.results], "formats": field_maps(self.routes)}


def field_maps(routes: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Each route's declared field map: where every canonical field goes (native, carried, dropped)."""
    out = {}
    for name in routes:
        fmt = REGISTRY.get(name)
        out[name] = {"title": fmt.title, "lossless": fmt.lossless,
                     "fields": [{"path": f.path, "fate": f.fate, "where": f.where, "reason": f.reason}
                                for f in fmt.field_map]}
    return out


def default_routes() -> list[str]:
    return [fmt.name for fmt in REGISTRY.all() if fmt.can_read and fmt.can_write]


def route(rows: list[Row], via: str, label: str, suffix: str | None = None) -> RouteResult:
    """Write `rows` with `via`, read them back, and hold the difference against the loss report.
    `suffix` picks one of the format's variants (default: its output suffix)."""
    result = RouteResult(label, via, len(rows), row_ids=[r.id for r in rows])
    with tempfile.TemporaryDirectory(prefix="evalconv-roundtrip-") as tmp:
        path = os.path.join(tmp, "set" + (suffix or output_extension(via)))
        try:
            loss = api.write(rows, path, via)
            back = api.read(path, from_=via)
        except EvalconvError as err:
            result.status = "fail"
            result.problems.append(Problem(None, "$", f"the export does not read back: {err.render()}"))
            return result
    result.dropped = loss.dropped.to_json()
    for finding in back.log.errors:
        result.problems.append(Problem(finding.id, finding.path, f"the export reads back invalid: "
                                                                 f"{finding.code}: {finding.message}"))
    if len(back.rows) != len(rows):
        result.problems.append(Problem(None, "$", f"{count(len(rows), 'row')} went out, {len(back.rows)} came back"))
    for before, after in zip(rows, back.rows):
        differences = diff_paths(before.to_json(), after.to_json())
        unreported, idle = unexplained(differences, loss.dropped_paths(before.id))
        result.problems.extend(Problem(before.id, p, "changed, but the loss report does not say so")
                               for p in unreported)
        result.problems.extend(Problem(before.id, p, "reported as dropped, but came back unchanged")
                               for p in idle)
    if result.problems:
        result.status = "fail"
    elif loss.lossy:
        result.status = "lossy"
    return result


def check(targets: Iterable[str], *, via: Iterable[str] = (), from_: str | None = None,
          strict: bool = False, include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
          encoding: str | None = None) -> RoundtripReport:
    routes = list(via) or default_routes()
    for name in routes:
        fmt = REGISTRY.get(name)
        if not (fmt.can_read and fmt.can_write):
            raise EvalconvError(f"format '{name}' does not both read and write; it cannot be a route")
    report = RoundtripReport([], strict, routes=routes)
    found_sets = collect(list(targets), include=include, exclude=exclude)
    if not found_sets:  # a gate that checked nothing must not pass
        report.unreadable.append(f"no set files found in {', '.join(targets)}")
    step, steps = 0, len(found_sets) * len(routes)  # told to a watcher (the CLI's progress bar)
    for found in found_sets:
        label = found.path
        if found.refused is not None:  # a FIFO in the folder: never opened
            report.unreadable.append(str(found.refusal_line()))
            continue
        try:
            read = api.read(found.path, from_=from_, encoding=encoding)
        except EvalconvError as err:
            report.unreadable.append(err.render())
            continue
        if read.log.error_count:
            first = read.log.errors[0]
            for name in routes:
                report.results.append(RouteResult(label, name, status="error", problems=[Problem(
                    first.id, first.path, f"the set itself is invalid ({count(read.log.error_count, 'error')}; "
                                          f"first: {first.render()})")]))
            continue
        for name in routes:
            with watching(None):  # the route's own reads are of temporary files: its step is told
                report.results.append(route(read.rows, name, label))
            step += 1
            tell(Progress(f"{label} via {name}", len(read.rows), step=step, steps=steps, done=step == steps,
                          unit="route"))
    return report
