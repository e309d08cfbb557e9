"""The library surface: read, validate, write, convert. The CLI is a thin layer over these."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Iterable

from . import output_paths
from .engine import parallel
from .atomic import SIDE_FILES, AtomicFolder, AtomicOutput, target_kind, together
from .canonical import jsonvalue
from .canonical.errors import RowRefused, UsageError
from .canonical.format import Format
from .canonical.row import Row
from .canonical.validator import Checked, Validator
from .registry import REGISTRY
from .reports import FindingLog, LossReport, ReadReport
from .sources import STDIO, detect, label, reading
from .engine.split_writers import refused_finding, write_row
from .validation import FileValidation, ValidationReport, refuse_contexts_on_a_cluster, validate, validate_file

__all__ = ["ConversionResult", "FileValidation", "ReadResult", "ValidationReport", "convert", "detect",
           "read", "reading", "validate", "validate_file", "write"]


@dataclass
class ReadResult:
    format: str
    rows: list[Row]
    log: FindingLog
    report: ReadReport


def read(path: str, *, from_: str | None = None, encoding: str | None = None, **options: Any) -> ReadResult:
    """Read a whole file into valid rows; invalid rows are left out and listed in `log.errors`.
    `options`: what the file's format reads with, e.g. `delimiter=";"` for CSV,
    `allow_outside_refs=True` for promptfoo (`evalconv convert --help` lists every flag)."""
    with reading(path, from_=from_, encoding=encoding, **options) as (fmt, rows, report):
        log, valid = FindingLog(), []
        for checked in Validator(source=label(path)).check_all(rows):
            log.add(checked.findings)
            if checked.row is not None:
                valid.append(checked.row)
        return ReadResult(fmt.name, valid, log, report)


def write(rows: Iterable[Row], path: str | None, to: str, **options: Any) -> LossReport:
    """Write valid rows atomically (`path=None`: standard output); returns the loss report.
    `options`: the target format's declared writer options, e.g. `excel_safe=True` for CSV."""
    fmt = _writer_format(to)
    writer_options = REGISTRY.writer_options(fmt, path, options)
    report = LossReport(fmt.name, path)
    fmt.load_writer()
    with _output(fmt, path) as out:
        writer = fmt.open_writer(out.stream, report, writer_options)
        for row in rows:
            write_row(writer, row)
            report.rows += 1
        writer.close()
        out.commit()
        fmt.committed(writer, writer_options, SIDE_FILES)
    return report


def _output(fmt: Format, path: str | None) -> "AtomicOutput | AtomicFolder":
    if not fmt.folder:
        return AtomicOutput(path)
    return AtomicFolder(_folder_named(fmt, path))


def _folder_named(fmt: Format, path: str | None) -> str:
    if path is None:
        raise UsageError(f"format '{fmt.name}' writes a folder; name it with -o DIR")
    return path


def check_folder_output(source: str, path: str) -> None:
    """A folder output may not hold the input, nor be a folder evalconv did not write."""
    if source != STDIO:
        real, inside = os.path.realpath(path), os.path.realpath(source)
        if inside == real or inside.startswith(real + os.sep):
            raise UsageError("-o is the input or holds it; evalconv never overwrites its input", source=path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"-o: the folder {folder} does not exist", source=path)
    AtomicFolder(path).check_target()


def _writer_format(to: str) -> Format:
    fmt = REGISTRY.get(to)
    if not fmt.can_write:
        raise UsageError(f"format '{to}' cannot be written")
    return fmt


@dataclass
class ConversionResult:
    source: str
    output: str | None
    from_format: str
    to_format: str
    rows_read: int
    valid_rows: int
    log: FindingLog
    loss: LossReport
    read: ReadReport
    wrote_output: bool
    ledger: str | None = None
    report: str | None = None  # where the loss report was written

    @property
    def rows_written(self) -> int:
        return self.loss.rows if self.wrote_output else 0

    @property
    def rejected(self) -> int:
        return self.rows_read - self.valid_rows

    @property
    def exit_code(self) -> int:
        return 1 if self.log.error_count else 0

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "output": self.output, "from": self.from_format,
                "to": self.to_format, "rows": self.rows_read, "written": self.rows_written,
                "rejected": self.rejected, "wrote_output": self.wrote_output, "ledger": self.ledger, "report": self.report,
                "errors": [f.to_json() for f in self.log.errors],
                "warnings": [f.to_json() for f in self.log.warnings],
                "loss": self.loss.to_json(), "read": self.read.to_json()}


def ledger_path_for(source: str, output: str) -> str:
    """The error ledger's default place: beside the output."""
    return output + ".rejected.jsonl"


def check_written_paths(source: str, targets: dict[str, str | None]) -> None:
    """Refuse, before anything is read, a write that would land on the input (a file named on
    the command line or standard input redirected from one), on another output, in a folder that
    does not exist, on a folder, or on what is neither a file nor a stream (a block device).
    A target None is standard output (refused when it is the input; when closed, on opening)."""
    to_stdout = any(path is None for option, path in targets.items() if option in ("-o", "the output"))
    output_paths.check_outputs([source], {option: path for option, path in targets.items() if path is not None},
                               stdout=to_stdout and sys.stdout is not None)


class _RejectLedger:
    """The error ledger: each rejected row with its findings, opened on the first rejection."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._out: AtomicOutput | None = None

    def add(self, checked: Checked) -> None:
        if self._out is None:
            self._out = AtomicOutput(self.path)
            self._out.open()
        src = checked.source
        entry = {"row": checked.number, "line": src.line, "record": src.record,
                 "id": checked.findings[0].id if checked.findings else None,
                 "findings": [f.to_json() for f in checked.errors], "value": src.value}
        self._out.stream.write(jsonvalue.dumps(entry) + "\n")

    def commit(self) -> str | None:
        if self._out is None:
            return None
        self._out.commit()
        return self.path

    def abort(self) -> None:
        if self._out is not None:
            self._out.abort()


def _write_report(path: str, loss: LossReport) -> None:
    with AtomicOutput(path) as out:
        out.stream.write(jsonvalue.dumps(loss.to_json(), indent=True) + "\n")
        out.commit()


def _refused(checked: Any, err: RowRefused, source: str) -> Checked[Any]:
    """A valid row the writer refused, as a rejected row: its findings and the refusal."""
    src = checked.source
    finding = refused_finding(err).locate(row=checked.number, id=err.row_id, line=src.line, record=src.record,
                                          source=source)
    return Checked(src, checked.number, [*checked.findings, finding], None)


def convert(source: str, output: str | None, *, to: str, from_: str | None = None,
            keep_going: bool = False, encoding: str | None = None, ledger: str | None = None,
            report: str | None = None, report_ids: bool = True, jobs: int | None = None,
            engine: Any = None, contexts: Any = None, **options: Any) -> ConversionResult:
    """Read, validate and write. Any invalid row: nothing is written (exit code 1), unless
    `keep_going`, when the valid rows are written and the rejected ones go to the ledger.
    `report`: also write the loss report there as JSON. The output and its side outputs (the
    ledger, the report, a promptfoo config) are published together, once all are written: one
    that cannot be written (a full disk) stops the run with nothing published.
    `report_ids=False` keeps only per-field row counts in the loss report (flat memory).
    `jobs`: worker processes for a large JSONL file (default: up to 2; 1 is serial).
    `engine`: a cluster's engine for a Parquet input (`--engine dask`: docs/scale.md).
    `contexts`: the ContextIndex a version-2 row's context references must resolve in
    (`--contexts`): a reference that does not is an error, so the set is refused before a tool runs it.
    `options`: the input format's read options (`delimiter=";"`) and the target format's
    writer options (`excel_safe=True`), each checked by the format that declares it."""
    refuse_contexts_on_a_cluster(contexts, engine)
    if output == STDIO:
        output = None
    fmt_out = _writer_format(to)
    if fmt_out.folder:
        check_folder_output(source, _folder_named(fmt_out, output))
    if keep_going and not ledger:
        if output is None or (not fmt_out.folder and target_kind(output) != "file"):
            raise UsageError("--keep-going to standard output or a stream needs --ledger PATH for the rejected rows")
        ledger = ledger_path_for(source, output)
    ledger_file = ledger if keep_going else None
    check_written_paths(source, {"the output": None if fmt_out.folder else output, "the ledger": ledger_file,
                                 "the report": report})
    read_options, options = REGISTRY.split_options(options)
    writer_options = REGISTRY.writer_options(fmt_out, output, options)
    loss = LossReport(fmt_out.name, output) if report_ids else LossReport.counting(fmt_out.name, output)
    log = FindingLog()
    rejects = _RejectLedger(ledger_file) if ledger_file else None
    fmt_out.load_writer()
    try:
        with reading(source, from_=from_, encoding=encoding, **read_options) as (fmt_in, rows, read_report), \
                parallel.checked_rows(source, fmt_in.name, rows, to=fmt_out.name, encoding=encoding, jobs=jobs,
                                      label=label(source), options=writer_options, engine=engine,
                                      output=output, contexts=contexts) as checker, \
                _output(fmt_out, output) as out:  # opened after the workers start: they must not hold it
            writer = fmt_out.open_writer(out.stream, loss, writer_options)
            validator = Validator(source=label(source), contexts=contexts)
            row_writer = checker.row_writer(writer, out, fmt_out.name, loss)  # a Row, or what the workers wrote
            valid_rows = 0
            for checked in checker.checked(validator):
                if checked.row is not None:
                    # Written even once the output is lost (an invalid row, no --keep-going), so
                    # that every row the writer refuses is named, as the workers name them.
                    try:
                        write_row(row_writer, checked.row)
                    except RowRefused as err:
                        checked = _refused(checked, err, label(source))
                if checked.findings:
                    log.add(checked.findings)
                if checked.row is None:
                    if rejects is not None:
                        rejects.add(checked)
                    continue
                valid_rows += checked.count
                loss.rows += checked.count
            checker.finish(row_writer)
            writer.close()
            write_it = rejects is not None or log.error_count == 0
            if write_it:
                with together():
                    out.commit()
                    fmt_out.committed(writer, writer_options, SIDE_FILES)  # a promptfoo config
                    ledger_file = rejects.commit() if rejects is not None else None
                    if report:
                        _write_report(report, loss)
    finally:
        if rejects is not None:
            rejects.abort()  # nothing, once committed
    read_report.rows = validator.count
    return ConversionResult(label(source), output, fmt_in.name, fmt_out.name, validator.count,
                            valid_rows, log, loss, read_report, write_it, ledger_file if write_it else None,
                            report if write_it else None)
