"""Write rows with a format and read them back, in memory, through the real reader and writer."""
from __future__ import annotations

import io

from deepdiff import DeepDiff

from evalconv.canonical.source import Lines
from evalconv.canonical.validator import Validator
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport, ReadReport


def write_text(fmt_name: str, rows, path: str | None = None, **options) -> tuple[str | bytes, LossReport]:
    """The file's text (its bytes, for a binary format such as Parquet) and the loss report.
    `path` names the output (it picks the variant); nothing is written there."""
    fmt = REGISTRY.get(fmt_name)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="") if fmt.binary else io.StringIO(newline="")
    report = LossReport(fmt.name)
    writer = fmt.open_writer(out, report, fmt.make_options(path, **options))
    for row in rows:
        writer.write(row)
        report.rows += 1
    writer.close()
    if fmt.binary:
        out.flush()
        return out.buffer.getvalue(), report
    return out.getvalue(), report


def read_text(fmt_name: str, text: str | bytes, *, encoding: str = "utf-8", path: str | None = None):
    """(checked rows, read report) for `text` (or a binary format's bytes) read with `fmt_name`.
    `path` names the file it came from (a reader may go by its suffix); nothing is read there."""
    fmt = REGISTRY.get(fmt_name)
    source = path or "mem"
    report = ReadReport(fmt.name, source)
    data = text if isinstance(text, bytes) else text.encode(encoding)
    lines = Lines(io.BytesIO(data), source=source, path=path, encoding=encoding)
    return list(Validator(source=source).check_all(fmt.read(lines, report))), report


def parse_finding(fmt_name: str, text: str, **read):
    """The first finding on the first record of `text`, which must not have become a row."""
    checked, _ = read_text(fmt_name, text, **read)
    assert checked[0].row is None, checked[0].row
    return checked[0].findings[0]


def roundtrip(fmt_name: str, rows, **options):
    text, _ = write_text(fmt_name, rows, **options)
    checked, _ = read_text(fmt_name, text)
    return text, checked


def assert_exact(rows, checked, loss) -> None:
    """Every row came back, and differs from what went out by exactly its reported drops."""
    from evalconv.canonical.diff import diff_paths, unexplained

    assert [c.findings for c in checked if c.row is None] == []
    assert [c.row.id for c in checked] == [r.id for r in rows]
    for before, back in zip(rows, checked):
        differences = diff_paths(before.to_json(), back.row.to_json())
        assert unexplained(differences, loss.dropped_paths(before.id)) == ([], []), before.id
        if not loss.dropped_paths(before.id):
            assert before == back.row  # carried fields come back identical


def assert_identical(rows, checked):
    assert [c.findings for c in checked if c.row is None] == []
    back = [c.row.to_json() for c in checked]
    want = [r.to_json() for r in rows]
    diff = DeepDiff(want, back, ignore_order=False, ignore_numeric_type_changes=False,
                    ignore_string_type_changes=False)
    assert diff == {}, diff
    assert [r for r in rows] == [c.row for c in checked]  # Row equality is type-strict too
