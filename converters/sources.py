"""Opening an input: the file or standard input, its format (--from, extension, content), its rows."""
from __future__ import annotations

import io
import os
import stat
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, cast

from .canonical.errors import EvalconvError, ReadError, UsageError
from .canonical.format import Format, ReadOptions
from .canonical.source import Lines, SourceRow
from .registry import REGISTRY
from .reports import ReadReport

STDIO = "-"
HEAD_BYTES = 8192


@dataclass(frozen=True)
class Progress:
    """How far a long read has got: told to the callback of `watching`, never printed here.
    `read`/`size` are bytes (None when not known: standard input, a reader that keeps its own
    file); `step`/`steps` count the work of a run made of many reads (a round trip's routes)."""

    source: str
    rows: int
    read: int | None = None
    size: int | None = None
    step: int | None = None
    steps: int | None = None
    done: bool = False
    unit: str = "row"  # what a step is: a row, a route, a file


ProgressCallback = Callable[[Progress], None]
_WATCHER: ContextVar[ProgressCallback | None] = ContextVar("evalconv_progress", default=None)
TELL_EVERY = 512  # rows between two progress calls (a call asks the stream where it is)


@contextmanager
def watching(callback: ProgressCallback | None) -> Iterator[None]:
    """Tell `callback` how every read in the block advances (the CLI draws a bar from it);
    None: nobody is told, as outside any block. The library itself never prints."""
    token = _WATCHER.set(callback)
    try:
        yield
    finally:
        _WATCHER.reset(token)


def tell(progress: Progress) -> None:
    """Pass `progress` to the watcher, if there is one."""
    watcher = _WATCHER.get()
    if watcher is not None:
        watcher(progress)


def watched() -> bool:
    return _WATCHER.get() is not None


def size_of(path: str) -> int | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def label(path: str) -> str:
    return "<stdin>" if path == STDIO else path


@contextmanager
def _open_bytes(path: str) -> Iterator[IO[bytes]]:
    if path == STDIO:
        stream = sys.stdin.buffer
        # peek: detection. The stubs type stdin's buffer BinaryIO; without peek it is a raw stream (readinto).
        yield stream if hasattr(stream, "peek") else io.BufferedReader(cast(io.RawIOBase, stream))
        return
    try:
        stream = open(path, "rb")
    except FileNotFoundError:
        raise ReadError("no such file", source=path) from None
    except IsADirectoryError:
        raise ReadError("is a directory (convert folders with -o OUTDIR)", source=path) from None
    except OSError as err:
        raise ReadError(f"cannot open: {err.strerror}", source=path) from None
    with stream:
        yield stream


def _peek(stream: IO[bytes]) -> bytes:
    peek = getattr(stream, "peek", None)
    return peek(HEAD_BYTES)[:HEAD_BYTES] if peek else b""


def detect(path: str, head: bytes, from_: str | None = None, encoding: str | None = None) -> Format:
    if from_:
        return REGISTRY.get(from_)
    try:
        text = head.decode(encoding or "utf-8", errors="replace")
    except LookupError:
        raise ReadError(f"unknown encoding '{encoding}'", source=label(path)) from None
    try:
        return REGISTRY.detect(None if path == STDIO else path, text)
    except UsageError as err:
        raise UsageError(err.message, source=label(path)) from None


def folder_format(path: str, from_: str | None = None) -> Format | None:
    """The format that reads this folder as one set (a dataset folder), or None: a folder of
    set files, converted file by file."""
    if path == STDIO or not os.path.isdir(path):
        return None
    if from_:
        fmt = REGISTRY.get(from_)
        return fmt if fmt.folder else None
    return next((f for f in REGISTRY.all() if f.folder and f.can_read and f.matches_path(path)), None)


@contextmanager
def reading(path: str, *, from_: str | None = None, encoding: str | None = None,
            **options: Any) -> Iterator[tuple[Format, Iterator[SourceRow], ReadReport]]:
    """Open `path` and yield its format, its rows (lazily) and the read report. `options`: what
    the reader is told, as its format declares it (`delimiter`: CSV cells are separated by it;
    `allow_outside_refs`: files a promptfoo input names may lie outside its folder). An option
    of another format is refused, but in a folder (`in_a_folder`), where it is meant for the
    folder's files of that format."""
    try:
        with _read(path, from_, encoding, options) as opened:
            yield opened
    except Exception as err:  # a bug, not bad input: the CLI's last guard names the file
        if not isinstance(err, EvalconvError) and not hasattr(err, "evalconv_source"):
            err.evalconv_source = label(path)  # type: ignore[attr-defined]  # any exception: the CLI's guard reads it
        raise


_IN_A_FOLDER: ContextVar[bool] = ContextVar("evalconv_in_a_folder", default=False)


@contextmanager
def in_a_folder() -> Iterator[None]:
    """Reads in the block are of files found in a folder: a read option goes to the files whose
    format declares it and passes the others by."""
    token = _IN_A_FOLDER.set(True)
    try:
        yield
    finally:
        _IN_A_FOLDER.reset(token)


def _read_options(fmt: Format, options: dict[str, Any], source: str) -> ReadOptions:
    return REGISTRY.reader_options(fmt, options, source=source, passing_over=_IN_A_FOLDER.get())


@contextmanager
def _read(path: str, from_: str | None, encoding: str | None, options: dict[str, Any]
          ) -> Iterator[tuple[Format, Iterator[SourceRow], ReadReport]]:
    folder = folder_format(path, from_)
    if folder is not None:
        report = ReadReport(folder.name, path)
        lines = Lines(io.BytesIO(b""), source=path, encoding=encoding, path=path)
        lines.options = _read_options(folder, options, path)
        yield folder, _counted(folder.read(lines, report), report), report
        return
    with _open_bytes(path) as stream:
        fmt = detect(path, _peek(stream), from_, encoding)
        if not fmt.can_read:
            raise UsageError(f"format '{fmt.name}' cannot be read")
        report = ReadReport(fmt.name, label(path))
        lines = Lines(stream, source=label(path), encoding=encoding,
                      path=None if path == STDIO else path)
        lines.options = _read_options(fmt, options, label(path))
        yield fmt, _counted(fmt.read(lines, report), report, _Unchanged(stream, label(path)), stream), report


def _counted(rows: Iterator[SourceRow], report: ReadReport,
             unchanged: "_Unchanged | None" = None, stream: IO[bytes] | None = None) -> Iterator[SourceRow]:
    """Count the rows read; a file (not a dataset folder) is checked for change under the read.
    A watcher (`watching`) is told every TELL_EVERY rows how far the read is."""
    watcher = _WATCHER.get()
    if watcher is not None:
        rows = _told(rows, report, watcher, stream)
    try:
        for row in rows:
            report.rows += 1
            yield row
    except RecursionError:
        raise ReadError("nesting is too deep to read", source=report.source) from None
    if unchanged is not None:
        unchanged.check()


def _told(rows: Iterator[SourceRow], report: ReadReport, watcher: ProgressCallback,
          stream: IO[bytes] | None) -> Iterator[SourceRow]:
    size = None
    try:
        size = os.fstat(stream.fileno()).st_size if stream is not None and stream.seekable() else None
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass

    def where() -> int | None:
        try:
            return stream.tell() if size is not None and stream is not None else None
        except (OSError, ValueError):
            return None

    for n, row in enumerate(rows, 1):
        if n % TELL_EVERY == 0:
            watcher(Progress(report.source or "", n, where(), size))
        yield row
    watcher(Progress(report.source or "", report.rows, where(), size, done=True))


class InputChanged(ReadError):
    """The input file changed while it was read: what was read is not the file."""


def identity(path: str) -> tuple[int, int, int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def changed(label: str, before: tuple[int, int, int, int], now: tuple[int, int, int, int] | None) -> InputChanged:
    how = ("it is gone" if now is None else "it was replaced" if now[:2] != before[:2]
           else f"it is now {now[2]:,} bytes, {before[2]:,} when the run started" if now[2] != before[2]
           else "it was modified")
    return InputChanged(f"the file changed while it was read ({how}); run again once it is complete",
                        source=label)


class _Unchanged:
    """A regular file read to its end must not have changed meanwhile: a file truncated or
    rewritten under the run would pass for a shorter set."""

    def __init__(self, stream: IO[bytes], source: str) -> None:
        self._stream, self._source = stream, source
        self._before = self._now()

    def _now(self) -> tuple[int, int] | None:
        try:
            info = os.fstat(self._stream.fileno())
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return None
        return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None

    def check(self) -> None:
        if self._before is None:
            return
        now = self._now()
        if now != self._before:
            before = (0, 0, *self._before)
            raise changed(self._source, before, None if now is None else (0, 0, *now))
