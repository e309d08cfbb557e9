"""Atomic output: write to a temporary file beside the target, then rename over it.

A process killed mid-write leaves the old file or none, never a torn one. Standard output
is spooled the same way, so an aborted conversion prints nothing.
"""
from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
import time
from typing import TextIO

from .canonical.errors import UsageError, WriteError

try:
    import fcntl
except ImportError:  # no flock (Windows): temp files are not swept
    fcntl = None  # type: ignore[assignment]

SUFFIX = ".evalconv-tmp"


class AtomicOutput:
    """`open()` gives a text stream; `commit()` publishes it; `abort()` discards it."""

    def __init__(self, path: str | None) -> None:
        self.path = path  # None: standard output
        self._tmp_name: str | None = None
        self.stream: TextIO | None = None
        self._encoded = False  # bytes written past the text layer

    def open(self) -> TextIO:
        folder = os.path.dirname(os.path.abspath(self.path)) if self.path else None
        name = os.path.basename(self.path) if self.path else "stdout"
        if folder is not None:
            sweep_stale(folder, name)
        try:
            fd, self._tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=SUFFIX, dir=folder)
        except OSError as err:
            raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
        if fcntl is not None:  # the lock tells a later run this temp file is live
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self.stream = os.fdopen(fd, "w", encoding="utf-8", newline="")
        return self.stream

    def write_encoded(self, data: bytes) -> None:
        """UTF-8 text another process encoded, written past the text layer as it is. Text
        written before (a header) goes first; write no text after."""
        assert self.stream is not None
        if not self._encoded:
            self.stream.flush()
            self._encoded = True
        self.stream.buffer.write(data)

    def commit(self) -> None:
        assert self.stream is not None and self._tmp_name is not None
        self.stream.flush()
        if self.path is None:
            self.stream.close()
            sys.stdout.flush()
            target = getattr(sys.stdout, "buffer", None)
            with open(self._tmp_name, "rb" if target is not None else "r",
                      **({} if target is not None else {"encoding": "utf-8", "newline": ""})) as spooled:
                shutil.copyfileobj(spooled, target if target is not None else sys.stdout)
            (target or sys.stdout).flush()
            os.unlink(self._tmp_name)
        else:
            os.fsync(self.stream.fileno())
            os.chmod(self._tmp_name, _mode_for(self.path))  # mkstemp makes it owner-only
            try:
                os.replace(self._tmp_name, self.path)  # rename while the lock is held, then let go
            except OSError as err:
                self.abort()
                raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
            self.stream.close()
        self._tmp_name = None

    def abort(self) -> None:
        if self.stream is not None and not self.stream.closed:
            self.stream.close()
        if self._tmp_name is not None:
            try:
                os.unlink(self._tmp_name)
            except FileNotFoundError:
                pass
            self._tmp_name = None

    def __enter__(self) -> "AtomicOutput":
        self.open()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._tmp_name is not None:
            self.abort()


def _mode_for(path: str) -> int:
    """The mode an ordinary write would give: the old file's, or the umask's."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


# A temp file this new and still empty may be one another run created and has not locked yet.
_NEWBORN_SECONDS = 5


def sweep_stale(folder: str, name: str) -> None:
    """Remove temp files a killed run left for this target; files still locked are live."""
    if fcntl is None:
        return
    for stale in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(name)}.*{SUFFIX}")):
        try:
            info = os.stat(stale)
            if info.st_size == 0 and time.time() - info.st_mtime < _NEWBORN_SECONDS:
                continue
            fd = os.open(stale, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # a live writer holds it
        else:
            try:
                os.unlink(stale)
            except OSError:
                pass
        finally:
            os.close(fd)


class AtomicFolder:
    """A folder output (a dataset folder): written in a temporary folder beside the target,
    then renamed into place. A folder already there is replaced only if evalconv wrote it."""

    def __init__(self, path: str, *, marker: str = "README.md") -> None:
        self.path = path
        self.marker = marker  # a file every folder this format writes holds (README.md)
        self.folder: str | None = None

    @property
    def stream(self) -> "AtomicFolder":  # what writers are handed: they write under `.folder`
        return self

    def check_target(self) -> None:
        """Refuse a target that is a file, or a folder holding anything evalconv did not write."""
        if not os.path.lexists(self.path):
            return
        if not os.path.isdir(self.path) or os.path.islink(self.path):
            raise UsageError("is a file; this format writes a folder", source=self.path)
        entries = set(os.listdir(self.path))
        if entries and not (self.marker in entries and _written_by_evalconv(os.path.join(self.path, self.marker))):
            raise UsageError("the folder exists and evalconv did not write it; give a new or empty folder",
                             source=self.path)

    def open(self) -> "AtomicFolder":
        self.check_target()
        parent = os.path.dirname(os.path.abspath(self.path))
        try:
            self.folder = tempfile.mkdtemp(prefix=f".{os.path.basename(self.path)}.", suffix=SUFFIX, dir=parent)
        except OSError as err:
            raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
        return self

    def commit(self) -> None:
        assert self.folder is not None
        old = None
        try:
            if os.path.isdir(self.path):
                self.check_target()
                old = tempfile.mkdtemp(prefix=f".{os.path.basename(self.path)}.old.", suffix=SUFFIX,
                                       dir=os.path.dirname(os.path.abspath(self.path)))
                os.replace(self.path, os.path.join(old, "previous"))
            os.chmod(self.folder, 0o777 & ~_umask())  # mkdtemp makes it owner-only
            os.replace(self.folder, self.path)
        except OSError as err:
            self.abort()
            raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        self.folder = None

    def abort(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> "AtomicFolder":
        return self.open()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.abort()


WRITTEN_BY = "written by evalconv"  # a folder whose card says so may be replaced by the next run


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _written_by_evalconv(card: str) -> bool:
    try:
        with open(card, encoding="utf-8", errors="replace") as f:
            return WRITTEN_BY in f.read(1 << 16)
    except OSError:
        return False
