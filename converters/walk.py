"""Which files a directory holds for evalconv, filtered by --include / --exclude globs."""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from .canonical.errors import ReadError, UsageError
from .canonical.opening import not_regular, refusal
from .canonical.retirement import is_ledger
from .registry import REGISTRY


@dataclass(frozen=True)
class Found:
    path: str      # as the OS sees it
    relative: str  # to the folder named on the command line, with '/' separators
    refused: str | None = None  # why a file found in a folder is not read (a FIFO: it would block)

    def refusal_line(self) -> str | None:
        """The one line that says why this file is not read, or None when it is read."""
        return None if self.refused is None else ReadError(self.refused, source=self.path).render()


def _known_extension(name: str) -> bool:
    return any(fmt.matches_path(name) for fmt in REGISTRY.all() if fmt.can_read)


def _set_folder(path: str) -> bool:
    return any(fmt.folder and fmt.matches_path(path) for fmt in REGISTRY.all() if fmt.can_read)


def _matches(relative: str, globs: tuple[str, ...]) -> bool:
    base = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(relative, g) or fnmatch.fnmatchcase(base, g) for g in globs)


def collect(targets: tuple[str, ...] | list[str], *, include: tuple[str, ...] = (),
            exclude: tuple[str, ...] = (), skip: str | None = None) -> list[Found]:
    """Files named directly are taken as they are (a FIFO too: `<(cmd)` is a stream the user
    gave); folders are walked (hidden entries, the `.retired.jsonl` / `.migrations.jsonl` ledgers
    beside sets and `skip`, the output folder, left out). Without
    --include a file must have a known extension. A FIFO, device or socket found in a folder is
    listed `refused`, never opened: reading it would wait for a writer or never end."""
    found: list[Found] = []
    skip_real = os.path.realpath(skip) if skip else None
    for target in targets:
        if target == "-" or os.path.exists(target) and not os.path.isdir(target):
            found.append(Found(target, os.path.basename(target)))
            continue
        if not os.path.isdir(target):
            raise UsageError("no such file or folder", source=target)
        for folder, dirs, files in os.walk(target):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and os.path.realpath(os.path.join(folder, d)) != skip_real)
            for name in [d for d in dirs if _set_folder(os.path.join(folder, d))]:
                dirs.remove(name)  # a dataset folder is one set, not a folder of sets
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, target).replace(os.sep, "/")
                if (not include or _matches(relative, include)) and not _matches(relative, exclude):
                    found.append(Found(path, relative))
            for name in sorted(files):
                if name.startswith(".") or is_ledger(name):  # a set's history beside it, not a set
                    continue
                path = os.path.join(folder, name)
                relative = os.path.relpath(path, target).replace(os.sep, "/")
                wanted = _matches(relative, include) if include else _known_extension(name)
                if wanted and not _matches(relative, exclude):
                    kind = not_regular(path)
                    found.append(Found(path, relative, refusal(kind) if kind else None))
    return found
