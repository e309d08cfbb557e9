"""Ragas `EvaluationDataset` objects in and out, for code that holds a dataset rather than a file.

A Ragas sample object keeps only Ragas' own fields, so everything a file carries in its
`evalconv` key (ids, the case profile, user metadata) is dropped from the object, and the loss
report says so: write a file (`evalconv.write(rows, "set.ragas.jsonl", to="ragas")`) to keep it.
"""
from __future__ import annotations

import io
from typing import Any, Iterable

from ..canonical import jsonvalue
from ..canonical.row import Row
from ..canonical.source import Lines
from ..canonical.validator import Validator
from ..reports import FindingLog, LossReport, ReadReport

_OBJECT = "a Ragas EvaluationDataset object keeps only Ragas' own sample fields: "


def to_ragas_dataset(rows: Iterable[Row]) -> tuple[Any, LossReport]:
    """(EvaluationDataset, loss report) for canonical rows; ragas is imported only here."""
    from ragas import EvaluationDataset

    from ..vendors.ragas.fields import ENVELOPE
    from ..vendors.ragas.write import SampleWriter

    out, written = io.StringIO(), LossReport("ragas")
    writer = SampleWriter(out, written, "jsonl")
    for row in rows:
        writer.write(row)
        written.rows += 1
    writer.close()
    samples = [jsonvalue.loads(line) for line in out.getvalue().split("\n")[:-1]]
    for sample in samples:
        sample.pop(ENVELOPE, None)
    loss = LossReport("ragas", rows=written.rows, notes=list(written.notes))
    for (path, reason), ids in written.carried.entries.items():  # carried in a file, gone from an object
        for row_id in ids:
            loss.drop(path, row_id, _OBJECT + reason)
    return EvaluationDataset.from_list(samples), loss


def from_ragas_dataset(dataset: Any) -> tuple[list[Row], FindingLog, ReadReport]:
    """(valid rows, findings, read report) for an EvaluationDataset: each sample read as a
    sample evalconv did not write (numbered ragas-N, provenance imported)."""
    from ..registry import REGISTRY

    text = "".join(jsonvalue.dumps(sample) + "\n" for sample in dataset.to_list())
    report, log, rows = ReadReport("ragas", "EvaluationDataset"), FindingLog(), []
    lines = Lines(io.BytesIO(text.encode("utf-8")), source="EvaluationDataset")
    for checked in Validator(source="EvaluationDataset").check_all(REGISTRY.get("ragas").read(lines, report)):
        log.add(checked.findings)
        if checked.row is not None:
            rows.append(checked.row)
    report.rows = len(rows)
    return rows, log, report
