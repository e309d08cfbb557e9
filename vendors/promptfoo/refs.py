"""Files a promptfoo file names: `tests:` globs, `defaultTest: file://...`, and `vars` given as a
file path, a glob or a list of them, each relative to the file that names it, as promptfoo
0.121.20 resolves them (checked with promptfoo itself: tests/vendors/test_promptfoo_refs.py).

evalconv reads only inside the folder of the file the user named: a reference that leaves it
(`../`, an absolute path, a symlink out) is refused unless the user allows it.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Any

import yaml
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError
from evalconv.canonical.opening import read_regular
from evalconv.canonical.options import ReadOptions, option
from evalconv.canonical.reporting import ReadReporter

from evalconv.canonical.safe_yaml import load_yaml

ALLOW_FLAG = "--allow-outside-refs"
FILE_URL = "file://"


@dataclass(frozen=True)
class PromptfooReadOptions(ReadOptions):
    allow_outside_refs: bool = option(False, flag=ALLOW_FLAG, goes_with="follows promptfoo's file references; "
                                                                        "it goes with a promptfoo input",
                                      help="promptfoo: follow file:// and vars references that lead outside "
                                           "the input's folder.")


class Scope:
    """Where references may lead: the folder of the file the user named."""

    def __init__(self, named: str | None, allow_outside: bool = False) -> None:
        self.named = named
        self.root = os.path.realpath(os.path.dirname(os.path.abspath(named))) if named else None
        self.allow_outside = allow_outside
        self._noted: set[str] = set()

    def paths(self, ref: str, base: str | None, what: str, source: str, line: int | None) -> list[str]:
        """The files `ref` names (a path or a glob, `file://` or not), relative to `base`; a glob
        that matches nothing gives itself, for the reader to say it cannot be read."""
        if base is None:
            raise ReadError(f"cannot follow the {what} '{ref}' when reading standard input", source=source, line=line)
        relative = ref.removeprefix(FILE_URL)
        pattern = os.path.normpath(os.path.join(os.path.dirname(base), relative))
        self._inside(pattern, ref, what, source, line)
        matches = (sorted(glob.glob(pattern)) if glob.has_magic(relative) else []) or [pattern]
        for path in matches:
            self._inside(path, ref, what, source, line)
        return matches

    def _inside(self, path: str, ref: str, what: str, source: str, line: int | None) -> None:
        if self.allow_outside or self.root is None:
            return
        real = os.path.realpath(path)
        if real != self.root and not real.startswith(self.root.rstrip(os.sep) + os.sep):
            raise ReadError(f"the {what} '{ref}' leads outside {os.path.dirname(self.named or '') or '.'}, the "
                            f"folder of the file named on the command line; evalconv reads only inside it "
                            f"(pass {ALLOW_FLAG} to follow it)", source=source, line=line)

    def note(self, report: ReadReporter, text: str) -> None:
        if text not in self._noted:
            self._noted.add(text)
            report.notes.append(text)

    # --- defaultTest and vars -------------------------------------------------------------------

    def default_test(self, value: str, base: str | None, source: str, report: ReadReporter) -> Any:
        """`defaultTest: file://defaults.yaml`: the mapping in that file (vars files followed)."""
        paths = self.paths(value, base, "defaultTest file", source, None)
        if not paths:
            raise ReadError(f"defaultTest: no file matches '{value}'", source=source, field="defaultTest")
        path = paths[0]
        data = _load(path, source, None, "defaultTest file")
        if not isinstance(data, dict):
            raise ReadError(f"defaultTest: {path} must hold a mapping (assert, vars, metadata, ...)",
                            source=source, field="defaultTest")
        self.note(report, f"defaultTest read from {path} (named as '{value}')")
        return self.with_vars(data, path, source, None, report)

    def with_vars(self, test: Any, base: str | None, source: str, line: int | None, report: ReadReporter) -> Any:
        """The test with `vars` given as file paths or globs replaced by the mapping they hold:
        every file's keys merged in order, a later file's value winning, as promptfoo does."""
        if not isinstance(test, dict):
            return test
        refs = test.get("vars")
        if isinstance(refs, str):
            refs = [refs]
        if not (isinstance(refs, list) and refs and all(isinstance(r, str) for r in refs)):
            return test
        merged: dict[str, Any] = {}
        for ref in refs:
            paths = self.paths(ref, base, "vars file", source, line)
            if not paths or not os.path.exists(paths[0]):
                raise ReadError(f"vars: no file matches '{ref}'", source=source, line=line, field="vars")
            if ref.startswith(FILE_URL):
                self.note(report, f"vars '{ref}': promptfoo 0.121.20 does not follow file:// in vars (it runs "
                                  f"the test with no vars); evalconv read the file; write "
                                  f"'{ref.removeprefix(FILE_URL)}' for promptfoo to see it too")
            for path in paths:
                data = _load(path, source, line, "vars file")
                if not isinstance(data, dict):
                    raise ReadError(f"vars: {path} must hold a mapping of variable names to values",
                                    source=source, line=line, field="vars")
                if len(paths) > 1 and merged.keys() & data.keys():
                    self.note(report, f"vars '{ref}': files matched by the glob set the same variables; "
                                      f"evalconv merges them in name order, promptfoo in the order the "
                                      f"file system lists them")
                merged.update(data)
                self.note(report, f"vars read from {path} (named as '{ref}')")
        return {**test, "vars": merged}


def _load(path: str, source: str, line: int | None, what: str) -> Any:
    try:
        text = read_regular(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else f"not UTF-8 text ({err.reason})"
        raise ReadError(f"cannot read the {what} {path}: {why}", source=source, line=line) from None
    if path.lower().endswith(".json"):
        try:
            return jsonvalue.loads(text)
        except jsonvalue.JSONValueError as err:
            raise ReadError(f"the {what} {path} is not valid JSON: {err}", source=source, line=line) from None
    try:
        return load_yaml(text, path)[1]
    except yaml.YAMLError as err:  # load_yaml reports its own errors; this is a last resort
        raise ReadError(f"the {what} {path} is not valid YAML: {err}", source=source, line=line) from None
