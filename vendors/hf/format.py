"""Hugging Face datasets: a dataset folder, Parquet data files and a README.md dataset card.

Writing (`--to hf -o DIR`) gives a folder `datasets.load_dataset(DIR)` loads as is, and that can
be pushed to the Hub unchanged. The data file is canonical Parquet, so evalconv reads it back
exactly. Reading takes such a folder (Parquet or canonical JSONL data files, found through the
card's `configs` or the usual `data/` layout), or a Parquet file downloaded from the Hub with
`--from parquet`.
"""
from __future__ import annotations

import glob
import os
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator

from evalconv.canonical import jsonvalue, parquet_format, paths
from evalconv.canonical.errors import ReadError
from evalconv.canonical.format import FieldLoss, Format, WriteOptions
from evalconv.canonical.json_format import JSONL_FORMAT
from evalconv.canonical.opening import open_regular, read_regular
from evalconv.canonical.reporting import LossReporter, ReadReporter
from evalconv.canonical.review import is_placeholder
from evalconv.canonical.row import Row
from evalconv.canonical.source import Lines, SourceRow
from evalconv.canonical.vocabulary import STARTER_PROVENANCES

from . import card

SPLIT = "test"  # a golden set is test data
CARD = "README.md"
_DATA_SUFFIXES = (".parquet", ".jsonl", ".arrow")
_AS_TEXT = "a dataset column has one type; this value is not text, so it is JSON text in"

FIELD_MAP = (
    FieldLoss("$.id", "native", "id", "string column"),
    FieldLoss("$.input", "native", "input; input:json when not text", f"text as is; otherwise {_AS_TEXT} input:json"),
    FieldLoss("$.expected", "native", "expected; expected:json when not text",
              f"text as is; otherwise {_AS_TEXT} expected:json"),
    FieldLoss("$.metadata.case.<field>", "native", "case.<field>", "string or list-of-strings columns"),
    FieldLoss("$.metadata.case.extensions", "carried", "case.extensions (JSON text)",
              "free-form objects have no fixed column type; evalconv reads them back exactly"),
    FieldLoss("$.metadata.<other keys>", "carried", "metadata:json (JSON text)",
              "keys differ from row to row; evalconv reads them back exactly"),
)


def is_dataset_folder(path: str) -> bool:
    """A folder with a dataset card whose YAML header says where the data is, or one that
    `datasets`' save_to_disk wrote (state.json, or dataset_dict.json for several splits)."""
    try:
        if saved_files(path) is not None:
            return True
    except ReadError:
        pass  # a state.json of something else
    try:
        header = _card_header(path)
    except OSError:
        return False
    return header is not None and ("configs" in header or "dataset_info" in header)


class HuggingFaceFormat(Format):
    name = "hf"
    title = "Hugging Face dataset folder (Parquet data files + README.md dataset card)"
    extensions = ()
    output_suffix = ""  # a folder conversion makes OUTDIR/<name>/, a dataset folder per set
    streaming_read = True
    streaming_write = True
    write_shape = "columnar"
    lossless = True
    folder = True
    layout = "DIR/ (README.md card, data/*.parquet)"
    field_map = FIELD_MAP

    def matches_path(self, path: str) -> bool:
        return os.path.isdir(path) and is_dataset_folder(path)

    def read(self, lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
        folder = lines.path or lines.source
        files = data_files(folder)
        if len(files) > 1 or files[0][0] != SPLIT:
            splits = sorted({split for split, _ in files})
            report.notes.append(f"read {len(files)} data file(s) of split(s) {', '.join(splits)}, in that order")
        record = 0
        for _, path in files:
            label = os.path.relpath(path, folder)
            shown = os.path.join(lines.source, label)
            with _data_file(path, shown) as stream:
                if path.endswith(".parquet"):
                    rows = parquet_format.read_parquet(stream, shown, first_record=record, dataset=lines.source)
                elif path.endswith(".arrow"):
                    rows = parquet_format.read_arrow(stream, shown, first_record=record, dataset=lines.source)
                else:
                    _check_canonical_jsonl(stream, shown, lines.source)
                    rows = JSONL_FORMAT.read(Lines(stream, source=shown, path=path), report)
                for row in rows:
                    record += 1
                    yield row

    def load_writer(self) -> None:
        parquet_format.FORMAT.load_writer()

    def open_writer(self, out: Any, report: LossReporter, options: WriteOptions) -> "DatasetWriter":  # out: the folder output
        target = options.path or "dataset"
        return DatasetWriter(out.folder, os.path.basename(os.path.normpath(target)) or "dataset", report)


def _check_canonical_jsonl(stream: Any, shown: str, folder: str) -> None:
    """A JSONL data file whose first record has none of a canonical row's keys is another
    dataset: say so once, with the import command, rather than a finding on every row."""
    first = b""
    for line in stream:
        if line.strip():
            first = line
            break
    stream.seek(0)
    try:
        record = jsonvalue.loads(first.removeprefix(b"\xef\xbb\xbf")) if first else None
    except (jsonvalue.JSONValueError, UnicodeDecodeError):
        return  # the reader names the line
    if isinstance(record, dict) and record and not {"id", "input", "metadata"} & record.keys():
        required = ["id", "input", "metadata.case"]
        raise parquet_format.not_canonical(required, list(record), folder, shown)


def data_files(folder: str) -> list[tuple[str, str]]:
    """(split, path) for each data file: save_to_disk's (a DatasetDict's splits in its order),
    else in the card's order, else the Hub's default layout."""
    saved = saved_files(folder)
    if saved:
        return saved
    header = None
    try:
        header = _card_header(folder)
    except OSError:
        pass
    found: list[tuple[str, str]] = []
    for split, pattern in _card_patterns(header):
        if os.path.isabs(pattern) or ".." in pattern.split("/"):
            raise ReadError(f"the card's data_files path '{pattern}' leaves the folder", source=folder)
        matches = sorted(glob.glob(os.path.join(glob.escape(folder), pattern), recursive=True))
        found += [(split, m) for m in matches if not os.path.isdir(m)]  # a FIFO: refused when opened
    if not found and header is None or not found and not _card_patterns(header):
        for pattern in ("data/*", "*"):
            found = [(_split_of(m), m) for m in sorted(glob.glob(os.path.join(glob.escape(folder), pattern)))
                     if m.endswith(_DATA_SUFFIXES) and not os.path.isdir(m)]
            if found:
                break
    if not found:
        raise ReadError("no data files in this dataset folder (a .parquet or .jsonl file, under data/ or "
                        "named by the card's configs)", source=folder)
    unknown = [os.path.relpath(p, folder) for _, p in found if not p.endswith(_DATA_SUFFIXES)]
    if unknown:
        raise ReadError(f"data file '{unknown[0]}' is neither Parquet nor JSONL (convert it first)", source=folder)
    return found


def saved_files(folder: str, split: str = "train", _seen: frozenset[str] = frozenset()
                ) -> list[tuple[str, str]] | None:
    """(split, path) of the Arrow files `datasets`' save_to_disk wrote; None for another folder.
    `_seen`: the folders of the splits above this one (a split naming one of them is a loop)."""
    seen = _seen | {os.path.realpath(folder)}
    splits = _json_file(os.path.join(folder, "dataset_dict.json"))
    if isinstance(splits, dict) and isinstance(splits.get("splits"), list):
        found: list[tuple[str, str]] = []
        for name in map(str, splits["splits"]):
            if os.path.isabs(name) or ".." in name.split("/"):
                raise ReadError(f"dataset_dict.json names the split {name!r}, which is not in the folder",
                                source=folder)
            sub = os.path.join(folder, name)
            if os.path.realpath(sub) in seen:
                raise ReadError(f"dataset_dict.json names the split {name!r}, which is this folder or one "
                                f"that holds it (a loop)", source=folder)
            found += saved_files(sub, name, seen) or []
        return found
    state = _json_file(os.path.join(folder, "state.json"))
    if not isinstance(state, dict) or not isinstance(state.get("_data_files"), list):
        return None
    files = []
    for file in [entry.get("filename") for entry in state["_data_files"] if isinstance(entry, dict)]:
        if not isinstance(file, str) or os.path.isabs(file) or ".." in file.split("/"):
            raise ReadError(f"state.json names the data file {file!r}, which is not in the folder", source=folder)
        files.append((split, os.path.join(folder, file)))
    return files


_JSON_FILE_BYTES = 16 << 20  # dataset_dict.json, state.json: a few hundred bytes from save_to_disk


def _json_file(path: str) -> Any:
    try:
        return jsonvalue.loads(read_regular(path, _JSON_FILE_BYTES))
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ReadError(f"cannot read it: {err.strerror}", source=path) from None
    except (jsonvalue.JSONValueError, UnicodeDecodeError) as err:
        raise ReadError(f"cannot read it as JSON ({err})", source=path) from None


def _card_header(folder: str) -> dict[str, Any] | None:
    """The YAML header of the folder's card (its first MiB), or None without one."""
    with open_regular(os.path.join(folder, CARD)) as stream:
        return card.read_header(stream.read(1 << 20).decode("utf-8", errors="replace"))


@contextmanager
def _data_file(path: str, shown: str) -> Iterator[BinaryIO]:
    try:
        stream = open_regular(path)
    except OSError as err:
        raise ReadError(f"cannot read the data file: {err.strerror}", source=shown) from None
    with stream:
        yield stream


def _split_of(path: str) -> str:
    base = os.path.basename(path)
    return base.split("-", 1)[0].split(".", 1)[0] or "train"


def _card_patterns(header: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(split, glob) from the card's first config (the `default` one when there is one)."""
    if not header or not isinstance(header.get("configs"), list) or not header["configs"]:
        return []
    configs = [c for c in header["configs"] if isinstance(c, dict)]
    chosen = next((c for c in configs if c.get("config_name") == "default"), configs[0] if configs else {})
    spec = chosen.get("data_files")
    out: list[tuple[str, str]] = []
    for entry in spec if isinstance(spec, list) else [spec]:
        if isinstance(entry, str):
            out.append(("train", entry))
        elif isinstance(entry, dict):
            paths = entry.get("path")
            for p in paths if isinstance(paths, list) else [paths]:
                if isinstance(p, str):
                    out.append((str(entry.get("split", "train")), p))
    return out


class DatasetWriter:
    """Streams rows into one canonical Parquet data file; the card is written at close, when
    the counts are known."""

    def __init__(self, folder: str, title: str, report: LossReporter) -> None:
        self._folder = folder
        self._title = title
        self._report = report
        os.makedirs(os.path.join(folder, card.DATA_DIR))
        self._data_file = f"{card.DATA_DIR}/{SPLIT}-00000-of-00001.parquet"
        self._stream = open(os.path.join(folder, self._data_file), "wb")
        self._parquet = parquet_format.ParquetWriter(self._stream, on_row_group=self._count_rows)
        self.stats = card.CardStats()

    def write(self, row: Row) -> None:
        self._parquet.write(row)

    def write_slice(self, batch: Any, start: int, stop: int) -> None:
        self._parquet.write_slice(batch, start, stop)

    def _count_rows(self, table: Any) -> None:
        """The card's counts and the loss report, from the columns of each row group."""
        stats = self.stats
        stats.rows += table.num_rows
        stats.num_bytes += table.nbytes
        column = {name: table.column(name).to_pylist()
                  for name in ("id", "case.provenance", "case.expectedBehavior", "input:json", "expected:json", "case.extensions",
                               "metadata:json")}
        for i, row_id in enumerate(column["id"]):
            if column["case.provenance"][i] in STARTER_PROVENANCES:
                stats.starter_count += 1
                if len(stats.starters) < card.SHOWN_IDS:
                    stats.starters.append(row_id)
            elif is_placeholder({"expectedBehavior": column["case.expectedBehavior"][i]}):
                stats.placeholder_count += 1
                if len(stats.placeholders) < card.SHOWN_IDS:
                    stats.placeholders.append(row_id)
            for key, name in (("$.input", "input:json"), ("$.expected", "expected:json"),
                              ("$.metadata.case.extensions", "case.extensions")):
                if column[name][i] is not None:
                    self._carry(key, name, row_id)
            rest = column["metadata:json"][i]
            if rest is not None:
                for key in jsonvalue.loads(rest):
                    self._carry(paths.join("$.metadata", key), "metadata:json", row_id)
                self._count("metadata:json")

    def _carry(self, path: str, column: str, row_id: str) -> None:
        if column != "metadata:json":
            self._count(column)
        self._report.carry(path, row_id, f"as JSON text in column {column}")

    def _count(self, column: str) -> None:
        self.stats.carried[column] = self.stats.carried.get(column, 0) + 1

    def close(self) -> None:
        self._parquet.close()
        self._stream.close()
        text = card.render(self._title, SPLIT, self._data_file, self.stats)
        with open(os.path.join(self._folder, CARD), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


FORMAT = HuggingFaceFormat()
