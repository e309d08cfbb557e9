"""Write rows with a format and read them back, in memory, through the real reader and writer."""
from __future__ import annotations

import io

from evalconv.canonical.source import Lines
from evalconv.canonical.validator import Validator
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport, ReadReport


def write_text(fmt_name: str, rows, **options) -> tuple[str, LossReport]:
    fmt = REGISTRY.get(fmt_name)
    out = io.StringIO(newline="")
    report = LossReport(fmt.name)
    writer = fmt.open_writer(out, report, {"path": None, **options})
    for row in rows:
        writer.write(row)
        report.rows += 1
    writer.close()
    return out.getvalue(), report


def read_text(fmt_name: str, text: str, *, encoding: str = "utf-8"):
    """(checked rows, read report) for `text` read with `fmt_name`."""
    fmt = REGISTRY.get(fmt_name)
    report = ReadReport(fmt.name, "mem")
    lines = Lines(io.BytesIO(text.encode(encoding)), source="mem", encoding=encoding)
    return list(Validator(source="mem").check_all(fmt.read(lines, report))), report


def roundtrip(fmt_name: str, rows, **options):
    text, _ = write_text(fmt_name, rows, **options)
    checked, _ = read_text(fmt_name, text)
    return text, checked
