"""The one check every command makes before it reads or writes anything: no output lands on an
input, nor on another output, nor where it cannot be written.

Inputs are what the command reads: the files named on its command line, every set file in a
folder named there (a dataset folder or a run store with all its files), and the file standard
input is redirected from. Files are compared by device and inode, so a symbolic link or a hard
link to an input is the input. Outputs are every path the command writes (`-o`, `--report`,
`--junit`, `--html`, `--summary`, `--ledger`, `--config`, the run store's files, a folder
conversion's files) and standard output when the command prints its result there.
"""
from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

from .atomic import STDOUT, target_kind
from .canonical.errors import EvalconvError, UsageError, WriteError
from .registry import REGISTRY
from .sources import STDIO
from .walk import collect

FileId = tuple[int, int]

# Each refusal: when, and the line evalconv prints (exit 2, nothing written). docs/errors.md's table
# is generated from this one (`refusals_markdown`); tests/cli/test_output_safety.py runs every example.
REFUSALS: dict[str, tuple[str, str]] = {
    "is-input": ("any output (`-o`, `--report`, `--ledger`, `--config`, `--junit`, `--html`, `--summary`) "
                 "names an input: `validate set.jsonl --junit set.jsonl`",
                 "set.jsonl: --junit is the input set.jsonl; evalconv never overwrites its input"),
    "in-folder": ("an output names a file of a folder given as input, or of a run store `report` reads: "
                  "`stats sets --html sets/a.jsonl`",
                  "sets/a.jsonl: --html is the input sets/a.jsonl (in the folder sets); evalconv never "
                  "overwrites its input"),
    "by-link": ("an output is a symbolic or hard link to an input: `import sheet.csv --report link.csv`",
                "link.csv: --report is the input sheet.csv (the same file by another name); evalconv never "
                "overwrites its input"),
    "holds-input": ("a folder output (`--to hf -o DIR`) is, or holds, an input: `out/a.jsonl --to hf -o out`",
                    "out: -o holds the input out/a.jsonl; evalconv never overwrites its input"),
    "stdout-input": ("standard output appends to an input: `stats set.jsonl >> set.jsonl`",
                     "set.jsonl: standard output is the input set.jsonl; evalconv never overwrites its input"),
    "same-output": ("two outputs are one file: `import sheet.csv -o set.csv --report set.csv`",
                    "set.csv: --report and -o set.csv name the same file"),
    "inside-output": ("an output file inside a folder output: `set.jsonl --to hf -o ds --report ds/report.json`",
                      "ds/report.json: --report is inside -o ds, a folder the output replaces whole"),
    "stdout-closed": ("standard output is closed (`>&-`) and the command prints its result there "
                      "(`validate`, `stats`, `roundtrip`, `report`, `formats`, `schema`, ...)",
                      "<stdout>: standard output is closed; redirect it to a file, or to /dev/null to discard "
                      "what evalconv prints"),
}


def refusals_markdown() -> str:
    """The table of docs/errors.md's *Outputs* section."""
    lines = ["| refusal | evalconv says (example) | exit | output |", "|---|---|---|---|"]
    lines += [f"| {when} | `{says}` | 2 | nothing |" for when, says in REFUSALS.values()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class _Input:
    label: str        # the path as the message names it
    folder: str = ""  # the folder named on the command line that holds it


def check_outputs(inputs: Iterable[str], files: Mapping[str, str | None] | None = None, *,
                  created: Mapping[str, Sequence[str]] | None = None, folders: Mapping[str, str | None] | None = None,
                  stdout: bool = False, include: Sequence[str] = (), skip: str | None = None) -> None:
    """Refuse (exit 2, one line naming both paths) a command whose outputs would land on an input
    or on each other, before it reads or writes anything. `files`: option -> the file it writes
    (its folder must exist); `created`: option -> files it writes in folders it makes as needed
    (a folder conversion's, the run store's); `folders`: option -> a folder the output replaces
    whole (a dataset folder); `stdout`: the command prints its result on standard output, which
    must then be open and not an input. `include` (the command's --include globs) and `skip` (a
    folder conversion's output folder) expand input folders to the files the command reads."""
    files, created, folders = files or {}, created or {}, folders or {}
    if stdout:
        _check_stdout_open(files)
    known = input_files(inputs, include, skip)
    if stdout:
        _check_stdout_not_input(known)
    for option, folder in folders.items():
        if folder is not None:
            _check_holds_no_input(option, folder, known)
            _check_holds_no_output(option, folder, [*files.items(), *((o, p) for o, ps in created.items() for p in ps)])
    seen: dict[str, tuple[str, str]] = {}
    for option, path in files.items():
        if path is not None:
            _check_not_input(option, path, known)
            _check_not_repeated(option, path, seen)
            _check_writable_place(option, path)
    for option, paths in created.items():
        for path in paths:
            _check_not_input(option, path, known)
            _check_not_repeated(option, path, seen)


def input_files(inputs: Iterable[str], include: Sequence[str] = (), skip: str | None = None) -> dict[FileId, _Input]:
    """Every regular file the command reads, by (device, inode)."""
    known: dict[FileId, _Input] = {}
    for path in inputs:
        if path == STDIO:
            _add(known, _file_id(0), _Input(STDIO))
        elif os.path.isdir(path):
            for member in _folder_inputs(path, include, skip):
                _add(known, _file_id(member), _Input(member, path))
        else:
            _add(known, _file_id(path), _Input(path))
    return known


def _add(known: dict[FileId, _Input], file_id: FileId | None, what: _Input) -> None:
    if file_id is not None:
        known.setdefault(file_id, what)


def _file_id(fd_or_path: int | str) -> FileId | None:
    """(device, inode) of a regular file; None for anything else (a pipe, a terminal, nothing)."""
    try:
        info = os.fstat(fd_or_path) if isinstance(fd_or_path, int) else os.stat(fd_or_path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def _folder_inputs(folder: str, include: Sequence[str], skip: str | None) -> Iterator[str]:
    """The files a command reads in a folder: its set files (with --include, the matching ones
    too), all of a dataset folder's or a run store's files."""
    from .runs.store import is_store  # the store's modules load only when a folder is named

    if _whole(folder) or is_store(folder):
        yield from _every_file(folder)
        return
    for globs in ((), tuple(include)) if include else ((),):
        try:
            found = collect([folder], include=globs, skip=skip)
        except EvalconvError:
            continue
        for entry in found:
            yield from _every_file(entry.path) if os.path.isdir(entry.path) else [entry.path]


def _whole(folder: str) -> bool:
    """A folder one format reads as one set (a dataset folder)."""
    return any(fmt.folder and fmt.can_read and fmt.matches_path(folder) for fmt in REGISTRY.all())


def _every_file(folder: str) -> Iterator[str]:
    for parent, _, names in os.walk(folder):
        for name in sorted(names):
            yield os.path.join(parent, name)


def _check_stdout_open(files: Mapping[str, object]) -> None:
    if sys.stdout is None or _closed(1):
        hint = ("name an output file with -o" if "-o" in files and files["-o"] is None
                else "redirect it to a file, or to /dev/null to discard what evalconv prints")
        raise WriteError(f"standard output is closed; {hint}", source=STDOUT)


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _check_stdout_not_input(known: dict[FileId, _Input]) -> None:
    hit = known.get(_file_id(1) or (-1, -1))
    if hit is None:
        return
    if hit.label == STDIO:
        raise UsageError("standard output is the file standard input reads; evalconv never overwrites its input",
                         source="<stdin>")
    raise UsageError(f"standard output is the input {hit.label}{_where(hit)}; evalconv never overwrites its input",
                     source=hit.label)


def _where(hit: _Input) -> str:
    return f" (in the folder {hit.folder})" if hit.folder else ""


def _check_not_input(option: str, path: str, known: dict[FileId, _Input]) -> None:
    hit = known.get(_file_id(path) or (-1, -1))
    if hit is None:
        return
    if hit.label == STDIO:
        raise UsageError(f"{option} is the file standard input reads; evalconv never overwrites its input",
                         source=path)
    link = "" if hit.folder or _same_name(path, hit.label) else " (the same file by another name)"
    raise UsageError(f"{option} is the input {hit.label}{_where(hit)}{link}; evalconv never overwrites its input",
                     source=path)


def _same_name(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def _check_not_repeated(option: str, path: str, seen: dict[str, tuple[str, str]]) -> None:
    """Two outputs that are one file: the same real path, or (existing) the same inode."""
    keys = [os.path.realpath(path)]
    file_id = _file_id(path)
    if file_id is not None:
        keys.append(f"{file_id[0]}:{file_id[1]}")
    for key in keys:
        if key in seen:
            other, other_path = seen[key]
            raise UsageError(f"{option} and {other} {other_path} name the same file", source=path)
    for key in keys:
        seen[key] = (option, path)


def _check_writable_place(option: str, path: str) -> None:
    if os.path.isdir(path):
        raise UsageError(f"{option} is a folder, not a file", source=path)
    target_kind(path)  # refuses a block device or a socket
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"{option}: the folder {folder} does not exist", source=path)


def _check_holds_no_input(option: str, folder: str, known: dict[FileId, _Input]) -> None:
    """A folder output replaced whole may not be, or hold, an input (by path or by a link)."""
    if not os.path.lexists(folder):
        return
    real = os.path.realpath(folder)
    inside = {_file_id(path) for path in (_every_file(folder) if os.path.isdir(folder) else [])}
    for file_id, what in known.items():
        label = "standard input's file" if what.label == STDIO else what.label
        there = what.label != STDIO and (os.path.realpath(what.label) + os.sep).startswith(real + os.sep)
        if there or file_id in inside:
            raise UsageError(f"{option} holds the input {label}; evalconv never overwrites its input", source=folder)


def _check_holds_no_output(option: str, folder: str, outputs: Iterable[tuple[str, str | None]]) -> None:
    """A file output inside a folder output would be replaced with it, or left as a stranger in it."""
    real = os.path.realpath(folder)
    for other, path in outputs:
        if path is not None and os.path.realpath(path).startswith(real + os.sep):
            raise UsageError(f"{other} is inside {option} {folder}, a folder the output replaces whole", source=path)
