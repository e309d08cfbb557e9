"""Validating files: every row through the validator, findings gathered per file."""
from __future__ import annotations

import os
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .canonical import paths
from .canonical.errors import EvalconvError, UsageError
from .canonical.format import WriteOptions
from .canonical.validator import Validator
from .engine import parallel
from .reports import FindingLog
from .sources import folder_format, in_a_folder, label, reading


@dataclass
class FileValidation:
    path: str
    format: str | None
    rows: int = 0
    log: FindingLog = field(default_factory=FindingLog)
    unreadable: str | None = None  # the one-line reason the file could not be read
    versions: Counter = field(default_factory=Counter)  # rows by the schema version they say (absent: 1)

    @property
    def valid(self) -> bool:
        return self.unreadable is None and self.log.error_count == 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "format": self.format, "rows": self.rows,
                               "valid": self.valid,
                               "errors": [f.to_json() for f in self.log.errors],
                               "warnings": [f.to_json() for f in self.log.warnings],
                               "schema_versions": {str(k): v for k, v in sorted(self.versions.items(), key=lambda kv: str(kv[0]))}}
        if self.unreadable is not None:
            out["unreadable"] = self.unreadable
        return out


@dataclass
class ValidationReport:
    files: list[FileValidation]

    @property
    def valid(self) -> bool:
        return all(f.valid for f in self.files)

    @property
    def exit_code(self) -> int:
        if any(f.unreadable is not None for f in self.files):
            return 2
        return 0 if self.valid else 1

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "files": [f.to_json() for f in self.files]}


def validate_file(path: str, *, from_: str | None = None, encoding: str | None = None,
                  require: Iterable[str] = (), jobs: int | None = None,
                  packs: Any = None, engine: Any = None, contexts: Any = None, **options: Any) -> FileValidation:
    """Validate one file; `require` lists paths every row must fill (`metadata.reason`).
    `jobs`: worker processes for a large JSONL file (default: up to 2; 1 is serial).
    `packs`: the PackIndex case families are checked against (default: the built-in packs;
    workers know only those, so other packs are checked on one core). `contexts`: the
    ContextIndex a version-2 row's context references must resolve in (`--contexts`).
    `engine`: a cluster's engine for a Parquet file (`--engine dask`: docs/scale.md).
    `options`: what the file's format reads with (`delimiter=";"`, `allow_outside_refs=True`)."""
    if packs is not None and engine is not None:
        raise UsageError("--pack is checked in one process: leave out --engine dask")
    refuse_contexts_on_a_cluster(contexts, engine)
    if packs is not None:
        jobs = 1
    result = FileValidation(label(path), from_)
    required = tuple(_required_paths(require))
    try:
        with reading(path, from_=from_, encoding=encoding, **options) as (fmt, rows, report), \
                parallel.checked_rows(path, fmt.name, rows, to=None, encoding=encoding, jobs=jobs,
                                      label=label(path), options=WriteOptions(), require=required,
                                      engine=engine, contexts=contexts) as checker:
            result.format = fmt.name
            validator = Validator(source=label(path), require=required, packs=packs, contexts=contexts)
            for checked in checker.checked(validator):
                if checked.findings:
                    result.log.add(checked.findings)
            result.rows = validator.count
            result.versions = validator.versions
    except EvalconvError as err:
        result.unreadable = err.render()
    return result


def refuse_contexts_on_a_cluster(contexts: Any, engine: Any) -> None:
    """The cluster's workers check rows without the manifest: `--contexts` is one process's."""
    if contexts is not None and engine is not None:
        raise UsageError("--contexts is checked in one process: leave out --engine dask")


def _required_paths(require: Iterable[str]) -> Iterator[str]:
    for user_path in require:
        try:
            yield paths.normalize(user_path)
        except ValueError:
            raise UsageError(f"--require takes a field path such as metadata.reason, not '{user_path}'") from None


def validate(paths_: Iterable[str], *, from_: str | None = None, encoding: str | None = None,
             require: Iterable[str] = (), jobs: int | None = None,
             packs: Any = None, engine: Any = None, contexts: Any = None, **options: Any) -> ValidationReport:
    """Validate files; folders are walked for files with a known extension. `options`: read
    options (`validate_file`); a folder's files whose format does not read with one pass it by."""
    from .walk import Found, collect

    require = list(require)
    results = []
    for target in paths_:
        whole = os.path.isdir(target) and folder_format(target, from_) is not None  # a dataset folder
        walked = os.path.isdir(target) and not whole
        files = collect([target]) if walked else [Found(target, target)]
        if not files:  # a gate that checked nothing must not pass
            results.append(FileValidation(target, None, unreadable=f"{target}: no set files found in this folder"))
        with in_a_folder() if walked else nullcontext():
            results += [validate_file(f.path, from_=from_, encoding=encoding, require=require, jobs=jobs,
                                      packs=packs, engine=engine, contexts=contexts, **options)
                        if f.refused is None else FileValidation(f.path, from_, unreadable=f.refusal_line())
                        for f in files]
    return ValidationReport(results)
