"""Atomic output: write to a temporary file beside the target, then rename over it.

A process killed mid-write leaves the old file or none, never a torn one. Only a regular file
(or a name not yet taken) is ever replaced. Standard output, a FIFO and a character device
(`/dev/null`, a terminal) are streams: what goes to them is spooled to an unnamed temporary file
and copied out once complete, so a failed conversion sends them nothing; a kill during the copy
can leave them part of it (streams are not atomic). Block devices and sockets are refused.

Outputs committed inside `together()` are prepared (written, flushed, synced) first and published
(renamed, copied out) only when every one of them is ready: a side output that cannot be written
(a report on a full disk) stops the run before anything is published.
"""
from __future__ import annotations

import contextlib
import contextvars
import errno
import glob
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from typing import IO, Any, Iterator, TextIO

from .canonical.errors import UsageError, WriteError

if sys.platform == "win32":  # no flock: temp files are not swept
    fcntl = None
else:
    import fcntl

SUFFIX = ".evalconv-tmp"
STDOUT = "<stdout>"
# Errors that mean the output could not be written (not that the input could not be read).
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.ENXIO}
_STDOUT_NAMES = re.compile(r"/dev/stdout|/dev/fd/1|/proc/self/fd/1")
_pending: contextvars.ContextVar[list["AtomicOutput"] | None] = contextvars.ContextVar("_pending", default=None)


class AtomicOutput:
    """`open()` gives a text stream; `commit()` publishes it; `abort()` discards it."""

    def __init__(self, path: str | None) -> None:
        self.path = path  # None: standard output
        self.label = STDOUT if path is None else path
        self.kind = target_kind(path)  # "file", "stream" or "stdout"
        self._tmp_name: str | None = None  # a file target's temp file, while it is ours
        self._spool: IO[bytes] | None = None  # a stream target's spool
        self._stream: TextIO | None = None
        self._encoded = False  # bytes written past the text layer
        self._prepared = False

    @property
    def stream(self) -> TextIO:
        """The text stream `open()` made."""
        if self._stream is None:
            raise RuntimeError(f"{self.label} is not open")
        return self._stream

    def open(self) -> TextIO:
        if self.kind == "stdout" and sys.stdout is None:
            raise WriteError("standard output is closed; name an output file with -o", source=STDOUT)
        if self.kind == "file":
            assert self.path is not None  # a file target is named
            real = os.path.realpath(self.path)  # a symlink is kept; the file it names is replaced
            folder, name = os.path.dirname(real), os.path.basename(real)
            sweep_stale(folder, name)
            try:
                fd, self._tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=SUFFIX, dir=folder)
            except OSError as err:
                raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
            self._real = real
            if fcntl is not None:  # the lock tells a later run this temp file is live
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._stream = os.fdopen(fd, "w", encoding="utf-8", newline="")
        else:
            sweep_stale(tempfile.gettempdir(), "stdout")  # spools of versions that named them
            try:
                self._spool = tempfile.TemporaryFile()  # unnamed: nothing is left when killed
            except OSError as err:
                raise self._spool_error(err) from None
            self._stream = open(self._spool.fileno(), "w", encoding="utf-8", newline="", closefd=False)
        return self._stream

    def write_encoded(self, data: bytes) -> None:
        """UTF-8 text another process encoded, written past the text layer as it is. Text
        written before (a header) goes first; text written after goes in order only once the
        stream is flushed."""
        assert self._stream is not None
        if not self._encoded:
            self._stream.flush()
            self._encoded = True
        self._stream.buffer.write(data)

    def commit(self) -> None:
        """Publish now, or, inside `together()`, when every output of the group is ready."""
        self.prepare()
        group = _pending.get()
        if group is not None:
            group.append(self)
        else:
            self.publish()

    def prepare(self) -> None:
        """Everything short of publishing: the whole text written and on disk."""
        assert self._stream is not None
        try:
            self._stream.flush()
            if self.kind == "file":
                assert self._tmp_name is not None
                os.fsync(self._stream.fileno())
                os.chmod(self._tmp_name, _mode_for(self._real))  # mkstemp makes it owner-only
        except OSError as err:
            failure = self.error(err)
            self.abort()
            raise failure from None
        self._prepared = True

    def publish(self) -> None:
        assert self._prepared and self._stream is not None
        try:
            if self.kind == "file":
                assert self._tmp_name is not None
                os.replace(self._tmp_name, self._real)  # rename while the lock is held, then let go
                self._tmp_name = None
            else:
                self._copy_out()
        except OSError as err:
            failure = self.error(err)
            self.abort()
            raise failure from None
        finally:
            self._prepared = False
        self.abort()  # closes the stream and the spool; nothing left to remove

    def _copy_out(self) -> None:
        assert self._spool is not None
        self._spool.seek(0)
        if self.kind == "stdout":
            sys.stdout.flush()
            target = getattr(sys.stdout, "buffer", None)
            if target is None:  # a text-only stdout (a test runner's)
                sys.stdout.write(self._spool.read().decode("utf-8"))
            else:
                shutil.copyfileobj(self._spool, target, 1 << 20)
                target.flush()
            sys.stdout.flush()
            return
        assert self.path is not None  # a stream target is named
        with open(self.path, "wb") as out:  # a FIFO or a character device: no truncation, no rename
            shutil.copyfileobj(self._spool, out, 1 << 20)

    def abort(self) -> None:
        """Discard the output; the temp file goes whatever closing it raises (a full disk)."""
        try:
            if self._stream is not None and not self._stream.closed:
                self._stream.close()
        except OSError:
            pass
        finally:
            if self._spool is not None:
                with contextlib.suppress(OSError):
                    self._spool.close()
                self._spool = None
            if self._tmp_name is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._tmp_name)
                self._tmp_name = None

    def error(self, err: OSError) -> Exception:
        """What a failed write says: which output, and why."""
        if isinstance(err, BrokenPipeError):
            return err  # the reader went away: the CLI stops quietly
        if self._spool is not None and not self._prepared:
            return self._spool_error(err)
        return WriteError(f"cannot write: {err.strerror or err}", source=self.label)

    def _spool_error(self, err: OSError) -> WriteError:
        return WriteError(f"cannot spool the output in {tempfile.gettempdir()}: {err.strerror or err} "
                          f"(set TMPDIR to a folder with room)", source=self.label)

    def __enter__(self) -> "AtomicOutput":
        self.open()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        if self._prepared and _pending.get() is not None and exc_type is None:
            return  # the group publishes it
        failure = None
        if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS and not isinstance(exc, BrokenPipeError):
            failure = self.error(exc)
        if self._tmp_name is not None or self._spool is not None:
            self.abort()
        if failure is not None:
            raise failure from None


def target_kind(path: str | None) -> str:
    """"stdout", "stream" (an existing FIFO or character device) or "file" (a regular file or a
    new name); anything else is refused."""
    if path is None or _STDOUT_NAMES.fullmatch(path):
        return "stdout"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "file"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return "stream"
    what = ("a folder" if stat.S_ISDIR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise WriteError(f"is {what}; evalconv writes regular files, FIFOs and character devices only",
                     source=path)


@contextlib.contextmanager
def together() -> Iterator[list[AtomicOutput]]:
    """Outputs committed inside are published together at the end, in the order committed, once
    all are ready; if the block fails, none is. A publish that fails after others succeeded
    (the folder removed meanwhile) names what was written and what was not."""
    group: list[AtomicOutput] = []
    token = _pending.set(group)
    try:
        yield group
    except BaseException:
        for out in group:
            out.abort()
        raise
    finally:
        _pending.reset(token)
    done: list[str] = []
    for i, out in enumerate(group):
        try:
            out.publish()
        except BaseException as err:  # a failed rename, or Ctrl-C: the rest are not published
            for rest in group[i:]:
                rest.abort()
            if not done or not isinstance(err, WriteError):
                raise
            raise WriteError(f"{err.message}; written: {', '.join(done)}; not written: "
                             f"{', '.join(o.label for o in group[i:])}", source=err.source) from None
        done.append(out.label)


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
    def stream(self) -> Any:  # handed to a folder format's writer (typed `out: Any`) where a text stream goes
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

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
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
