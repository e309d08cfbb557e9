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
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
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
_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
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
            fd = None
            try:
                fd = self._make_temp(folder, name)
                self._real = real
                if fcntl is not None:  # the lock tells a later run this temp file is live
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._stream = os.fdopen(fd, "w", encoding="utf-8", newline="")
            except BaseException:  # a Ctrl-C (or a lock refused) while the file is made: nothing is left behind
                if self._stream is None and fd is not None:
                    os.close(fd)
                if self._tmp_name is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(self._tmp_name)
                    self._tmp_name = None
                raise
        else:
            sweep_stale(tempfile.gettempdir(), "stdout")  # spools of versions that named them
            try:
                self._spool = tempfile.TemporaryFile()  # unnamed: nothing is left when killed
            except OSError as err:
                raise self._spool_error(err) from None
            self._stream = open(self._spool.fileno(), "w", encoding="utf-8", newline="", closefd=False)
        return self._stream

    def _make_temp(self, folder: str, name: str) -> int:
        """The temp file, made with its name already known (as `mkstemp` does, but a Ctrl-C that
        lands between making the file and knowing its name, in any thread, can no longer leave it)."""
        for _ in range(100):
            self._tmp_name = os.path.join(folder, f".{name}.{secrets.token_hex(4)}{SUFFIX}")
            try:
                return os.open(self._tmp_name, _TEMP_FLAGS, 0o600)
            except FileExistsError:
                continue
            except OSError as err:
                self._tmp_name = None
                raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
        self._tmp_name = None
        raise WriteError("cannot write here: no free temporary name", source=self.path)

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
    """A folder output (a dataset folder), written in a temporary folder beside the target and
    swapped into place. A folder already there is replaced only if evalconv can prove it wrote
    it (`check_target`), and survives until the new one is in place (`commit`).

    The temporary folder `.NAME.XXXXXXXX.evalconv-tmp/` holds an owner marker (`OWNER`), the new
    folder (`dataset/`) and, during the swap, the old one (`previous/`). The run holds a lock on
    it (`flock`) from the moment the marker exists, so a later run sweeps it only once its
    process is gone (`sweep_stale_folders`), restoring `previous/` if the kill came mid-swap."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.folder: str | None = None  # where the writer writes: <temp>/dataset
        self._temp: str | None = None
        self._lock: int | None = None
        self._swapped = False  # the new folder is in place: what `previous/` holds is garbage

    @property
    def stream(self) -> Any:  # handed to a folder format's writer (typed `out: Any`) where a text stream goes
        return self

    def check_target(self) -> None:
        """Refuse a target that is a file, or a folder holding anything evalconv cannot prove it wrote."""
        if not os.path.lexists(self.path):
            return
        if not os.path.isdir(self.path) or os.path.islink(self.path):
            raise UsageError("is a file; this format writes a folder", source=self.path)
        _refuse_unless_ours(self.path)

    def open(self) -> "AtomicFolder":
        parent, name = _parent_and_name(self.path)
        sweep_stale_folders(parent, name)
        self.check_target()
        try:
            self._temp = tempfile.mkdtemp(prefix=f".{name}.", suffix=SUFFIX, dir=parent)
            self._lock = os.open(self._temp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            if fcntl is not None:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with open(os.path.join(self._temp, OWNER), "w", encoding="utf-8") as f:
                json.dump({"evalconv": OWNER_SAYS, "target": name, "pid": os.getpid(),
                           "host": socket.gethostname()}, f)
            self.folder = os.path.join(self._temp, "dataset")
            os.mkdir(self.folder)  # the umask's mode, as an ordinary mkdir
        except OSError as err:
            self.abort()
            raise WriteError(f"cannot write here: {err.strerror}", source=self.path) from None
        return self

    def commit(self) -> None:
        """Swap the new folder in: the old one is moved aside, checked again there (nothing may
        have arrived since `check_target`), the new one renamed in, and only then the old one
        removed. A failure at any step puts the old one back."""
        assert self.folder is not None and self._temp is not None
        try:
            _write_manifest(self.folder)
        except OSError as err:
            self.abort()
            raise WriteError(f"cannot write: {err.strerror}", source=self.path) from None
        self.check_target()
        previous = os.path.join(self._temp, "previous")
        try:
            seen = _listing(self.path) if os.path.lexists(self.path) else None
            with _signals_held():  # Ctrl-C or SIGTERM lands after the swap, not between its renames
                try:
                    if seen is not None:
                        os.rename(self.path, previous)
                        if _listing(previous) != seen:
                            raise _Changed()
                    os.rename(self.folder, self.path)
                    self._swapped = True
                except BaseException:
                    _put_back(previous, self.path)
                    raise
        except _Changed:
            self.abort()
            raise UsageError("files arrived in the folder while the dataset was written; nothing was "
                             "replaced: run again", source=self.path) from None
        except OSError as err:
            kept = f"; the previous folder is kept in {previous}" if os.path.lexists(previous) else ""
            self.abort()
            raise WriteError(f"cannot write here: {err.strerror}{kept}", source=self.path) from None
        self.abort()  # the old folder and the temporary one go

    def abort(self) -> None:
        """Remove the temporary folder, unless it still holds the old one (a swap whose undo failed)."""
        try:
            if self._temp is not None:
                if not self._swapped and os.path.lexists(os.path.join(self._temp, "previous")):
                    if self.folder is not None:
                        _remove_tree(self.folder)
                else:
                    _remove_tree(self._temp)
        finally:
            if self._lock is not None:
                os.close(self._lock)
            self._lock = self._temp = self.folder = None

    def __enter__(self) -> "AtomicFolder":
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        self.abort()


# The manifest a folder output holds: every file it wrote, with its size and digest. A folder is
# evalconv's to replace only if it holds nothing but these, unchanged.
MANIFEST = ".evalconv-manifest.json"
OWNER = ".evalconv-owner.json"  # in a temporary folder: which run made it, for what target
OWNER_SAYS = "a folder output being written"
WRITTEN_BY = "written by evalconv"  # in the card of a dataset the previous release wrote
_MAX_ENTRIES = 10_000  # more than any folder evalconv writes: a larger folder is not one of them
_SHOWN = 5


class _Changed(Exception):
    """The folder moved aside is not the one checked."""


def _parent_and_name(path: str) -> tuple[str, str]:
    real = os.path.abspath(path)
    return os.path.dirname(real), os.path.basename(real)


def _remove_tree(path: str) -> None:
    """`shutil.rmtree`, finished even when Ctrl-C or SIGTERM lands midway, then raised again. A
    signal taken by another thread of the process (a test runner's, a library caller's) reaches the
    main thread's handler whatever its mask, so it can land in a clean-up: cut short, the
    temporary folder stayed beside the dataset."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except KeyboardInterrupt:
        shutil.rmtree(path, ignore_errors=True)
        raise


def _put_back(previous: str, target: str) -> None:
    """Undo the first half of a swap: the old folder returns, if it was moved and nothing took its place."""
    if os.path.lexists(previous) and not os.path.lexists(target):
        os.rename(previous, target)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _entries(folder: str) -> list[str]:
    """Every entry under the folder, relative, '/'-separated: files, links and other non-folders,
    and folders with nothing in them (marked with a trailing '/'). Stops past `_MAX_ENTRIES`."""
    found: list[str] = []
    stack = [""]
    while stack and len(found) <= _MAX_ENTRIES:
        relative = stack.pop()
        with os.scandir(os.path.join(folder, relative)) as listing:
            children = sorted(listing, key=lambda e: e.name)
        if not children and relative:
            found.append(relative + "/")
        for entry in children:
            name = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append(name)
            else:
                found.append(name)
    return sorted(found)


def _listing(folder: str) -> list[tuple[str, int]]:
    """Names and sizes: what must not change between the check and the swap."""
    return [(name, 0 if name.endswith("/") else os.lstat(os.path.join(folder, name)).st_size)
            for name in _entries(folder)]


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_manifest(folder: str) -> None:
    files = [{"path": name, "bytes": os.path.getsize(os.path.join(folder, name)),
              "sha256": _digest(os.path.join(folder, name))}
             for name in _entries(folder) if not name.endswith("/")]
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8", newline="\n") as f:
        json.dump({"written_by": "evalconv", "files": files}, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _manifest(folder: str) -> dict[str, dict[str, Any]] | None:
    """The files a folder's manifest lists (path -> entry), or None when it has no manifest of ours."""
    path = os.path.join(folder, MANIFEST)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode) or os.path.getsize(path) > 1 << 20:
            return None
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("written_by") != "evalconv" or not isinstance(value.get("files"), list):
        return None
    listed = {entry["path"]: entry for entry in value["files"]
              if isinstance(entry, dict) and isinstance(entry.get("path"), str)}
    return listed if len(listed) == len(value["files"]) else None


def _unchanged(folder: str, name: str, entry: dict[str, Any]) -> bool:
    path = os.path.join(folder, name)
    try:
        info = os.lstat(path)
        return stat.S_ISREG(info.st_mode) and info.st_size == entry.get("bytes") and _digest(path) == entry.get("sha256")
    except OSError:
        return False


def _refuse_unless_ours(folder: str) -> None:
    """A folder evalconv may replace holds only what it wrote: the files its manifest lists,
    unchanged (or, with no manifest, only what the previous release's hf writer wrote). Otherwise
    refuse, naming what replacing it would lose."""
    try:
        entries = _entries(folder)
    except OSError as err:
        raise UsageError(f"cannot read the folder: {err.strerror}", source=folder) from None
    if not entries:
        return
    listed = _manifest(folder)
    if listed is not None:
        foreign = [e for e in entries if e not in listed and e != MANIFEST]
        changed = [e for e in entries if e in listed and not _unchanged(folder, e, listed[e])]
    else:
        foreign = [e for e in entries if not _previous_release_file(folder, e)]
        changed = []
    if len(entries) > _MAX_ENTRIES:
        foreign.append("...")
    problems = []
    if foreign:
        problems.append(f"holds files evalconv did not write ({_names(foreign)})")
    if changed:
        problems.append(f"holds files changed since evalconv wrote them ({_names(changed)})")
    if problems:
        raise UsageError(f"the folder {' and '.join(problems)}; replacing it would lose them, so nothing "
                         "was written: give a new or empty folder", source=folder)


def _names(paths: list[str]) -> str:
    more = len(paths) - _SHOWN
    return ", ".join(paths[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


_PREVIOUS_DATA_FILE = re.compile(r"data/[A-Za-z0-9_]+-\d{5}-of-\d{5}\.parquet")


def _previous_release_file(folder: str, name: str) -> bool:
    """A file the hf writer of the release before manifests wrote: its card, or a Parquet data file."""
    path = os.path.join(folder, name)
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    if name == "README.md":
        return _previous_release_card(head.decode("utf-8", errors="replace"))
    return bool(_PREVIOUS_DATA_FILE.fullmatch(name)) and head.startswith(b"PAR1")


def _previous_release_card(text: str) -> bool:
    """The card that release wrote: its YAML header (evalconv's tag, the one default config over
    data/) and the words it wrote in the body. The words alone prove nothing."""
    import yaml

    end = text.find("\n---\n", 3)
    if not text.startswith("---\n") or end < 0 or WRITTEN_BY not in text[end:]:
        return False
    try:
        header = yaml.safe_load(text[4:end])
    except (yaml.YAMLError, RecursionError):
        return False
    if not isinstance(header, dict) or "evalconv" not in (header.get("tags") or []):
        return False
    configs = header.get("configs")
    if not isinstance(configs, list) or len(configs) != 1 or not isinstance(configs[0], dict):
        return False
    files = configs[0].get("data_files")
    return (configs[0].get("config_name") == "default" and isinstance(files, list) and len(files) == 1
            and isinstance(files[0], dict) and files[0].get("path") == f"data/{files[0].get('split')}-*")


def sweep_stale_folders(parent: str, name: str) -> None:
    """Remove the temporary folders killed runs left for this target: only folders whose owner
    marker says evalconv made them for it, older than `_NEWBORN_SECONDS`, whose lock is free and
    whose process is gone. A kill between the swap's renames left the old folder aside and no
    target: it is put back instead of removed."""
    if fcntl is None:
        return
    for temp in glob.glob(os.path.join(glob.escape(parent), f".{glob.escape(name)}.*{SUFFIX}")):
        try:
            if not stat.S_ISDIR(os.lstat(temp).st_mode):
                continue
            owner = _owner(os.path.join(temp, OWNER), name)
            if owner is None or _alive(owner):
                continue
            fd = os.open(temp, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _put_back(os.path.join(temp, "previous"), os.path.join(parent, name))
            if not os.path.lexists(os.path.join(temp, "previous")):
                shutil.rmtree(temp, ignore_errors=True)
        except OSError:
            continue  # a live run holds it, or the old folder cannot go back: leave it all
        finally:
            os.close(fd)


def _owner(marker: str, name: str) -> dict[str, Any] | None:
    try:
        info = os.lstat(marker)
        if not stat.S_ISREG(info.st_mode) or time.time() - info.st_mtime < _NEWBORN_SECONDS:
            return None
        with open(marker, encoding="utf-8") as f:
            value = json.loads(f.read(4096))
    except (OSError, ValueError):
        return None
    ours = isinstance(value, dict) and value.get("evalconv") == OWNER_SAYS and value.get("target") == name
    return value if ours else None


def _alive(owner: dict[str, Any]) -> bool:
    """The run that made it is still running on this machine (a lock a network file system
    does not keep is not trusted alone)."""
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return False  # this process's live folders hold their locks: the lock decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


class AtomicSideFiles:
    """`canonical.format.SideFiles` for a format's `committed`: each file atomic, and published
    with the output when both are committed inside `together()`."""

    def write_text(self, path: str, text: str) -> None:
        with AtomicOutput(path) as out:
            out.stream.write(text)
            out.commit()


SIDE_FILES = AtomicSideFiles()
