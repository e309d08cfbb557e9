"""Inspect eval logs -> attempts and results.

Reads the logs `inspect_ai.eval(...)` writes: `.eval` (a zip: `header.json`, then one
`samples/<id>_epoch_<n>.json` per sample, read one at a time) and `.json` (one document, its
`samples` streamed with ijson). Each sample (one epoch of one dataset sample) is an attempt;
each of its scores a result, scorer by scorer (a scorer whose value is a dict gives one result per
key, named `scorer/key`). evalconv's export writes the case id as the sample id and the case
profile in the sample's metadata (`metadata.case.caseId`); the sample id is the fallback link.

Inspect's values: C (CORRECT) passes, I (INCORRECT) fails, P (PARTIAL) fails with score 0.5 (as
Inspect's accuracy counts it), N (NOANSWER) is unscored, not failed; a boolean is its own
verdict, a number passes at `PASS_AT` (Inspect's CORRECT is 1.0), `yes`/`no` and
`true`/`false` as Inspect's value_to_float reads them; any other value is kept unscored.
"""
from __future__ import annotations

import json
import zipfile
from typing import Any, Iterator

from evalconv.canonical import runs
from evalconv.canonical.errors import ReadError

from .._common import runfiles

HARNESS = "inspect"
ZSTD = 93  # the zip compression method Inspect writes .eval members with
PASS_AT = 1.0
# Inspect's stock programmatic scorers and evalconv's (vendors/inspect/scorers.py).
PROGRAMMATIC = {"match", "includes", "exact", "pattern", "answer", "choice", "f1",
                "case_scorer", "membership", "tool_calls"}
JUDGES = {"model_graded_qa", "model_graded_fact"}
_LETTERS = {"C": (True, 1.0), "I": (False, 0.0), "P": (False, 0.5), "N": (None, None)}
_WORDS = {"yes": True, "true": True, "no": False, "false": False}


def evaluator_type(name: str) -> str | None:
    """The evaluator type of an Inspect scorer (`pkg/scorer` names by their last part), None if unknown."""
    base = name.rsplit("/", 1)[-1]
    if base in PROGRAMMATIC:
        return "exact-or-programmatic"
    if base in JUDGES:
        return "llm-judge"
    return None


def verdict(value: Any) -> tuple[bool | None, float | None, str]:
    """(passed, score, why) of one Inspect score value."""
    if isinstance(value, str) and value in _LETTERS:
        passed, score = _LETTERS[value]
        if value == "N":
            return None, None, "NOANSWER: the scorer did not score this sample"
        return passed, score, {"C": "CORRECT", "I": "INCORRECT", "P": "PARTIAL (not a pass)"}[value]
    if isinstance(value, bool):
        return value, float(value), str(value).lower()
    number = runfiles.number(value)
    if number is not None:
        passed = number >= PASS_AT
        return passed, number, f"score {number:g} {'>=' if passed else '<'} {PASS_AT:g} (evalconv's pass rule for Inspect numbers)"
    if isinstance(value, str) and value.strip().lower() in _WORDS:
        passed = _WORDS[value.strip().lower()]
        return passed, float(passed), value
    return None, None, f"value {json.dumps(value)[:60]} is not one evalconv can read as a verdict"


class InspectResults:
    name = HARNESS
    title = "Inspect eval logs (.eval zip or .json, as inspect_ai.eval writes them)"
    files = "Inspect eval log (logs/*.eval, or *.json with log_format='json')"

    def detect(self, path: str, head: str) -> bool:
        if path.endswith(".eval") or head.startswith("PK"):
            return path.endswith(".eval") and head.startswith("PK")
        top = head[:1500]
        return head.startswith("{") and '"eval"' in top and '"version"' in top and (
            '"task"' in top and '"run_id"' in head or '"plan"' in head)

    def read(self, path: str) -> Iterator[runfiles.Record]:
        if path.endswith(".eval") or runfiles.read_head_text(path, 2).startswith("PK"):
            yield from self._zip(path)
            return
        header = runfiles.first_value(path, "eval")
        run = _run(header)
        for index, sample in enumerate(runfiles.items(path, "samples.item")):
            yield from _sample(sample, path, run, runfiles.where(path, entry=index), f"sample {index + 1}")

    def _zip(self, path: str) -> Iterator[runfiles.Record]:
        try:
            archive = zipfile.ZipFile(path)
        except FileNotFoundError:
            raise ReadError("no such file", source=path) from None
        except (zipfile.BadZipFile, OSError) as err:
            raise ReadError(f"not an Inspect .eval log (not a zip archive: {err})", source=path) from None
        with archive:
            names = archive.namelist()
            header = _member(archive, "header.json", path) if "header.json" in names else None
            if header is None and "_journal/start.json" in names:  # a log still being written
                header = _member(archive, "_journal/start.json", path)
            if not isinstance(header, dict):
                raise ReadError("not an Inspect .eval log (no header.json)", source=path)
            run = _run(header.get("eval"))
            members = [n for n in names if n.startswith("samples/") and n.endswith(".json")]
            for index, name in enumerate(members):
                source = runfiles.where(path, entry=index)
                try:
                    sample = _member(archive, name, path)
                except ReadError as err:
                    yield "ledger", runs.ledger_entry("unreadable", f"{name}: {err.message}", source=source)
                    continue
                yield from _sample(sample, path, run, source, name)


def _member(archive: zipfile.ZipFile, name: str, path: str) -> Any:
    try:
        info = archive.getinfo(name)
        if info.compress_type == ZSTD:
            return _zstd_member(archive, info)
        with archive.open(name) as stream:
            return json.load(stream)
    except (ValueError, UnicodeDecodeError) as err:
        raise ReadError(f"{name} is not JSON ({err})", source=path) from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError, NotImplementedError) as err:
        raise ReadError(f"{name} cannot be read from the zip ({err})", source=path) from None


def _zstd_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Any:
    """A zstd member (Inspect's default; Python's zipfile cannot open it), decompressed as it is read."""
    import struct

    import zstandard

    assert archive.fp is not None
    archive.fp.seek(info.header_offset)
    local = archive.fp.read(30)
    if local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    archive.fp.seek(info.header_offset + 30 + name_len + extra_len)
    bounded: Any = _Bounded(archive.fp, info.compress_size)  # stream_reader needs only read(); its stub asks for IO
    with zstandard.ZstdDecompressor().stream_reader(bounded) as stream:
        return json.load(stream)


class _Bounded:
    """The next `size` bytes of a file, as a readable stream."""

    def __init__(self, fp: Any, size: int) -> None:
        self._fp, self._left = fp, size

    def read(self, size: int = -1) -> bytes:
        size = self._left if size < 0 else min(size, self._left)
        data = self._fp.read(size)
        self._left -= len(data)
        return data


def _run(header: Any) -> dict[str, Any]:
    header = header if isinstance(header, dict) else {}
    packages = header.get("packages") if isinstance(header.get("packages"), dict) else {}
    text = lambda key: header[key] if isinstance(header.get(key), str) else None  # noqa: E731
    return {"run": text("run_id") or text("eval_id"), "task": text("task"), "model": text("model"),
            "version": packages.get("inspect_ai") if isinstance(packages.get("inspect_ai"), str) else None}


def case_link(sample: dict[str, Any]) -> tuple[str | None, str | None, dict[str, str] | None]:
    metadata = sample.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if isinstance(case, dict) and isinstance(case.get("caseId"), str) and case["caseId"]:
        version = case.get("version")
        return case["caseId"], version if isinstance(version, str) else None, None
    own = sample.get("id")
    if isinstance(own, (str, int)) and not isinstance(own, bool) and str(own):
        return None, None, {"kind": "name", "value": str(own)}
    return None, None, None


def _sample(sample: Any, path: str, run: dict[str, Any], source: dict[str, Any], label: str) -> Iterator[runfiles.Record]:
    problem = _shape(sample)
    if problem:
        yield "ledger", runs.ledger_entry("unreadable", f"{label}: {problem}", source=source)
        return
    case_id, version, ref = case_link(sample)
    error = sample.get("error")
    message = runs.first_line(error.get("message") if isinstance(error, dict) else error)
    output = sample.get("output")
    completion = output.get("completion") if isinstance(output, dict) else None
    epoch = sample.get("epoch", 1)
    attempt = runs.attempt(
        harness=HARNESS, key=(run["run"], sample["id"], epoch), case_id=case_id, case_ref=ref, case_version=version,
        run=run["run"], harness_version=run["version"], system=run["model"] or "inspect model",
        started_at=sample.get("started_at") if isinstance(sample.get("started_at"), str) else None,
        duration_ms=(t * 1000 if (t := runfiles.number(sample.get("total_time"))) is not None else None),
        status="error" if message else "completed", error=message,
        output=completion, has_output=isinstance(completion, str), source=source)
    yield "attempt", attempt
    for name, score in (sample.get("scores") or {}).items():
        value = score.get("value")
        parts = value.items() if isinstance(value, dict) else [(None, value)]
        for key, part in parts:
            yield "result", _result(attempt["id"], name, key, part, score, source)


def _shape(sample: Any) -> str | None:
    """Why a sample cannot be read, naming the field; None when it can."""
    if not isinstance(sample, dict):
        return "not an object"
    if not isinstance(sample.get("id"), (str, int)) or isinstance(sample.get("id"), bool):
        return "$.id: missing or not a string or integer"
    scores = sample.get("scores")
    if scores is not None and not isinstance(scores, dict):
        return "$.scores: not an object"
    for name, score in (scores or {}).items():
        if not isinstance(score, dict) or "value" not in score:
            return f"$.scores.{name}: not a score object with a value"
    return None


def _result(attempt_id: str, scorer: str, key: Any, value: Any, score: dict[str, Any],
            source: dict[str, Any]) -> runs.Result:
    passed, number, why = verdict(value)
    type_ = evaluator_type(scorer)
    name = scorer if key is None else f"{scorer}/{key}"
    explanation = score.get("explanation")
    reason = why + (f": {explanation}" if isinstance(explanation, str) and explanation.strip() else "")
    if type_ is None:
        reason += f" (unknown Inspect scorer '{name}': type it with --evaluator '{name}=TYPE')"
    numeric = runfiles.number(value) is not None and not isinstance(value, bool)
    return runs.result(
        attempt_id=attempt_id, name=name, type_=type_, type_source="inferred", score=number, passed=passed,
        review_status="automated", reason=runs.first_line(reason), own_id=name, source=source,
        typed_by="Inspect scorer name" if type_ else "default: unknown (not a known Inspect scorer)",
        pass_at=PASS_AT if numeric else None)


RULES = {
    "verdict": "C passes; I fails; P (PARTIAL) fails with score 0.5; N (NOANSWER) is unscored; true/false, "
               "yes/no as Inspect reads them; a number at or above the threshold passes",
    "threshold": f"{PASS_AT}, Inspect's CORRECT, for numbers (`--threshold inspect=SCORE` or per scorer)",
    "typing": "by scorer name: " + ", ".join(f"`{n}`" for n in sorted(PROGRAMMATIC)) + ": exact-or-programmatic; "
              + ", ".join(f"`{n}`" for n in sorted(JUDGES)) + ": llm-judge; any other scorer: unknown, a warning "
              "names it and `--evaluator NAME=TYPE`",
}

READER = InspectResults()
