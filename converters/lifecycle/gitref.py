"""A path as it was at a git ref, read with `git cat-file` / `git ls-tree` (no checkout): copied
into a temporary folder, named as in the repository, so that every reader evalconv has reads it."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from typing import Iterator

from ..canonical.errors import ReadError, UsageError


def _git(args: list[str], cwd: str, **kwargs: object) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError:
        raise UsageError("--git needs git on the PATH") from None


def _where(path: str) -> tuple[str, str]:
    """The folder git runs in and `path` relative to the repository's top (with '/')."""
    folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    while not os.path.isdir(folder):  # a set that is gone from the working tree
        folder = os.path.dirname(folder)
    top = _git(["rev-parse", "--show-toplevel"], folder, text=True)
    if top.returncode != 0:
        raise UsageError("--git: not inside a git repository", source=path)
    root = os.path.realpath(top.stdout.strip())
    inside = os.path.relpath(os.path.realpath(os.path.abspath(path)), root).replace(os.sep, "/")
    if inside.startswith(".."):
        raise UsageError("--git: the path is outside the repository", source=path)
    return root, "" if inside == "." else inside


def check_ref(ref: str, path: str) -> None:
    root, _ = _where(path)
    done = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root, text=True)
    if done.returncode != 0:
        raise UsageError(f"--git: '{ref}' is not a commit in this repository", source=path)


@contextmanager
def at_ref(ref: str, path: str) -> Iterator[str | None]:
    """`path` as it was at `ref`, as a temporary copy (a file or a folder), or None when `ref` has
    no such path (a set added since). Removed on leaving."""
    check_ref(ref, path)
    root, inside = _where(path)
    spec = f"{ref}:{inside}"
    kind = _git(["cat-file", "-t", spec], root, text=True)
    if kind.returncode != 0:
        yield None
        return
    tmp = tempfile.mkdtemp(prefix="evalconv-git-")
    try:
        name = os.path.basename(inside) or os.path.basename(root)
        target = os.path.join(tmp, name)
        if kind.stdout.strip() == "blob":
            _blob(root, spec, target)
        else:
            listing = _git(["ls-tree", "-r", "-z", "--full-tree", ref, "--", inside or "."], root)
            if listing.returncode != 0:
                raise ReadError(f"git ls-tree failed: {listing.stderr.decode(errors='replace').strip()}", source=path)
            os.makedirs(target)
            for entry in listing.stdout.split(b"\0"):
                if not entry:
                    continue
                meta, file = entry.split(b"\t", 1)
                mode, otype, sha = meta.decode().split()
                if otype != "blob" or mode == "120000":  # submodules and links: not a set file
                    continue
                relative = os.path.relpath(file.decode("utf-8", "surrogateescape"), inside or ".")
                out = os.path.join(target, relative)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                _blob(root, sha, out)
        yield target
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _blob(root: str, spec: str, out: str) -> None:
    with open(out, "wb") as stream:  # git writes the blob to the file: never held in memory
        done = subprocess.run(["git", "cat-file", "blob", spec], cwd=root, stdout=stream, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise ReadError(f"git cat-file failed: {done.stderr.decode(errors='replace').strip()}", source=spec)


def author(path: str) -> str | None:
    """Who git says is working here (`Name <email>`), or None when git does not know."""
    folder = os.path.abspath(os.path.dirname(path) or ".")
    try:
        name = subprocess.run(["git", "config", "user.name"], cwd=folder, capture_output=True, text=True)
        email = subprocess.run(["git", "config", "user.email"], cwd=folder, capture_output=True, text=True)
    except (FileNotFoundError, NotADirectoryError):
        return None
    who = name.stdout.strip() if name.returncode == 0 else ""
    mail = email.stdout.strip() if email.returncode == 0 else ""
    if not who and not mail:
        return None
    return f"{who} <{mail}>".strip() if mail else who
