"""Opening the files evalconv finds or is pointed to (a folder's files, files a set names, a
dataset folder's parts): regular files only, and no more of one than a reader may hold.

A FIFO, a device or a socket is refused before anything waits on it: opening a FIFO for reading
blocks until a writer comes, and reading a device may never end. Only what the user named as
the input (a file, `-`, `<(cmd)`) may be a stream; the main input is opened by its reader.
The refusals are `OSError`s, so a caller's "cannot read X: <why>" names the file as it does for
any other file it cannot open.
"""
from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from .source import MAX_DOCUMENT_BYTES

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


class NotRegularFile(OSError):
    """What is at the path is not a regular file."""


class FileTooLarge(OSError):
    """A file read in one piece is larger than the limit."""


def special_kind(mode: int) -> str | None:
    """What a file of this mode is when it is not a regular file ("a FIFO (named pipe)", ...)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_regular(path: str) -> str | None:
    """Why evalconv will not read `path` as a file it found (None: a regular file, or nothing
    there, which the opener reports in its own words)."""
    try:
        return special_kind(os.stat(path).st_mode)
    except OSError:
        return None


def refusal(kind: str) -> str:
    return f"it is {kind}, not a regular file (evalconv reads only regular files it finds or a set names)"


def open_regular(path: str) -> BinaryIO:
    """`path` opened for reading in binary, or NotRegularFile without waiting on it. Opened
    without blocking (a FIFO opens at once then), checked with fstat, so a file swapped for a
    FIFO between a check and the open is caught too."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegularFile(errno.EINVAL, refusal(kind), path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The whole of a regular file, refused (FileTooLarge) beyond `limit` bytes before it is read."""
    with open_regular(path) as stream:
        size = os.fstat(stream.fileno()).st_size
        data = b"" if size > limit else stream.read(limit + 1)
        if size > limit or len(data) > limit:
            raise FileTooLarge(errno.EFBIG, too_large(max(size, len(data)), limit), path)
        return data


def too_large(size: int, limit: int) -> str:
    return (f"it is {size / (1 << 20):,.0f} MiB, more than the {limit >> 20} MiB evalconv reads of a file "
            f"it must hold whole")
