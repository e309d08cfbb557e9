"""Canonical rows -> Ragas samples (JSONL as from_jsonl loads it; CSV and JSON arrays too).

A Ragas dataset holds one kind of sample, so the writer spools the rows on disk until it has
seen them all: any chat input makes the whole file multi-turn. `build_sample` is also what the reader
re-runs to tell an edit made in the Ragas file from the copy evalconv carried.
"""
from __future__ import annotations

import csv
import hashlib
import pickle
import tempfile
from typing import Any, Iterator, TextIO, TypeGuard

from evalconv.canonical import jsonvalue, paths
from evalconv.canonical.cells import formula_looking, unguarded_formulas
from evalconv.canonical.reporting import LossReporter
from evalconv.canonical.row import Row

from .._common.grading import llm_judge_may_grade
from .fields import (CARRIED, CONTEXTS, ENVELOPE, EXTENSION_FIELDS, FROM_REFS, MULTI_FIELDS, REASONS, REFS_REASONS,
                     ROLE_TO_TYPE, RUBRIC_FIELDS, RUN_FIELDS, RUN_KEY, SINGLE_FIELDS, VENDOR, WRITTEN)

REASONS_TURN = ("in a multi-turn dataset a text input is written as one human message; the exact value "
                "is carried in the sample's `evalconv` key")


def is_chat(value: Any) -> bool:
    return (isinstance(value, dict) and value.keys() == {"messages"} and isinstance(value["messages"], list)
            and bool(value["messages"]) and all(isinstance(m, dict) for m in value["messages"]))


def _ragas_calls(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, dict) and c.keys() == {"name", "args"} and isinstance(c["name"], str)
        and isinstance(c["args"], dict) for c in value)


def messages_for(value: Any) -> tuple[list[dict[str, Any]], bool]:
    """Ragas messages for a chat input, and whether they hold it exactly (an AI message keeps
    its tool_calls, any message its metadata object, when they have Ragas' shape)."""
    out, exact = [], True
    for m in value["messages"]:
        kind = ROLE_TO_TYPE.get(m.get("role"))
        content = m.get("content")
        if kind is None or not isinstance(content, str):
            exact = False
            continue
        message: dict[str, Any] = {"content": content, "type": kind}
        for key in m.keys() - {"role", "content"}:
            if (key == "tool_calls" and kind == "ai" and _ragas_calls(m[key])) or \
                    (key == "metadata" and isinstance(m[key], dict)):
                message[key] = m[key]
            else:
                exact = False
        out.append(message)
    return out, exact and bool(out)


def ragas_accepts(messages: list[dict[str, Any]]) -> bool:
    """MultiTurnSample's rule: a tool message follows an AI message that made tool calls, or
    another tool message."""
    previous: dict[str, Any] | None = None
    for m in messages:
        if m["type"] == "tool" and not (previous and (previous["type"] == "tool" or
                                                       (previous["type"] == "ai" and previous.get("tool_calls")))):
            return False
        previous = m
    return True


def build_sample(row: Row, report: LossReporter, multi: bool, csv_cells: bool = False) -> dict[str, Any]:
    env: dict[str, Any] = {"id": row.id}
    sample: dict[str, Any] = {"user_input": _user_input(row, env, report, multi)}
    sample.update(_reference(row, env, report, multi))
    if csv_cells:  # a CSV cell holds no NUL: such text goes as its JSON text, the exact value in the envelope
        if _has_nul(sample["user_input"]) and "input" not in env:
            env["input"] = row.input
            sample["user_input"] = jsonvalue.dumps(row.input)
            report.carry("$.input", row.id, REASONS["input.nul"])
        if _has_nul(sample.get("reference")) and sample["reference"] != row.expected:
            del sample["reference"]  # the expected behaviour beside tool calls: the case carries it
        elif _has_nul(sample.get("reference")) and "expected" not in env:
            env["expected"] = row.expected
            sample["reference"] = jsonvalue.dumps(row.expected)
            report.carry("$.expected", row.id, REASONS["expected.nul"])
    metadata = dict(row.metadata)
    for field, key in CONTEXTS.items():
        if not multi and _texts(metadata.get(key), ids=field.endswith("ids")):
            sample[field] = metadata.pop(key)
    contexts_carried = [(paths.join("$.metadata", key), REASONS["contexts.multi"])
                        for key in CONTEXTS.values() if multi and key in metadata]
    refs_reason = _context_refs(row, sample, env, multi)
    run = metadata.get(RUN_KEY)
    # An empty CSV cell reads as no value, and a NUL has no place in one: such run output stays carried.
    if not multi and _run_fields(run) and not (csv_cells and (run.get("response") == "" or _has_nul(run))):
        sample.update(metadata.pop(RUN_KEY))
    ext = row.case.get("extensions", {}).get(VENDOR)
    allowed = MULTI_FIELDS if multi else SINGLE_FIELDS
    rubrics = rubrics_for(row)
    if rubrics and not (csv_cells and _has_nul(rubrics)):
        sample["rubrics"] = rubrics
    if isinstance(ext, dict):
        sample.update((k, ext[k]) for k in EXTENSION_FIELDS
                      if k in ext and k in allowed and not (csv_cells and _has_nul(ext[k])))
    env["metadata"] = metadata
    native = RUBRIC_FIELDS if sample.get("rubrics") == rubrics and rubrics else ()
    carried = [("$.id", CARRIED["$.id"])]
    carried += [(_CASE_CARRIED[name][0], refs_reason) if name == "contextRefs" and refs_reason else _CASE_CARRIED[name]
                for name in row.case if name not in native]
    carried += contexts_carried
    carried += [(paths.join("$.metadata", key), REASONS["metadata"]) for key in metadata
                if key != "case" and not (multi and key in CONTEXTS.values())]
    report.carry_all(carried, row.id)
    env[WRITTEN] = {field: digest(value, csv_cells) for field, value in sample.items()}
    sample[ENVELOPE] = env
    return sample


def _context_refs(row: Row, sample: dict[str, Any], env: dict[str, Any], multi: bool) -> str | None:
    """A version-2 row's context references as reference_context_ids (their sources), where a
    single-turn sample can hold them; the reason the loss report gives (None: the default)."""
    refs = row.case.get("contextRefs")
    if not isinstance(refs, list) or not refs:
        return None
    if multi:
        return REFS_REASONS["multi"]
    if "reference_context_ids" in sample:
        return REFS_REASONS["kept"]
    sources = [ref.get("source") if isinstance(ref, dict) else None for ref in refs]
    if not all(isinstance(source, str) and source for source in sources):
        return REFS_REASONS["marker"]
    sample["reference_context_ids"] = sources
    env[FROM_REFS] = True
    return REFS_REASONS["sources"]


def digest(value: Any, csv_cells: bool) -> str:
    """A short fingerprint of a native field as the file holds it (the CSV cell, or the JSON value)."""
    return digest_text(csv_cell(value) if csv_cells else jsonvalue.dumps(value))


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def rubrics_for(row: Row) -> dict[str, str] | None:
    """Ragas rubrics for a rubric case an LLM judge grades: a pass (score 1) is the expected
    behaviour and every criterion, and none of what must not happen; a miss scores 0."""
    case = row.case
    if case["oracleType"] != "rubric" or not llm_judge_may_grade(row):
        return None
    must = [text.strip() for text in (case["expectedBehavior"], *case.get("evaluationCriteria", ())) if text.strip()]
    must_not = [text.strip() for text in case.get("unacceptableBehavior", ()) if text.strip()]
    if not must and not must_not:
        return None
    passing = "Meets every one of: " + "; ".join(must) if must else "Meets the case"
    if must_not:
        passing += ". Does none of: " + "; ".join(must_not)
    return {"score0_description": "Misses any of the requirements of score 1, or does what it rules out.",
            "score1_description": passing + "."}


_CASE_CARRIED = {path.removeprefix("$.metadata.case."): (path, reason) for path, reason in CARRIED.items()
                 if path.startswith("$.metadata.case.")}  # case field -> (path, reason)


def _has_nul(value: Any) -> bool:
    """Whether a NUL sits in text a CSV cell would hold as is (str() of a list or dict escapes it)."""
    if isinstance(value, dict):
        return any(_has_nul(v) for v in value.values())
    return isinstance(value, str) and "\x00" in value


def _texts(value: Any, ids: bool = False) -> bool:
    kinds = (str, int) if ids else (str,)
    return isinstance(value, list) and all(isinstance(v, kinds) and not isinstance(v, bool) for v in value)


def _run_fields(run: Any) -> TypeGuard[dict[str, Any]]:
    if not (isinstance(run, dict) and run and run.keys() <= set(RUN_FIELDS)):
        return False
    return all(isinstance(v, str) if k == "response" else _texts(v, ids=k.endswith("ids")) for k, v in run.items())


def _user_input(row: Row, env: dict[str, Any], report: LossReporter, multi: bool) -> Any:
    value = row.input
    if multi:
        if isinstance(value, str):
            env["input"] = value
            report.carry("$.input", row.id, REASONS_TURN)
            return [{"content": value, "type": "human"}]
        messages, exact = messages_for(value) if is_chat(value) else ([], False)
        if messages and ragas_accepts(messages):  # else (system messages alone, a stray tool message) JSON text
            if not exact:
                env["input"] = value
                text_only = all(isinstance(m.get("content"), str) for m in value["messages"])
                report.carry("$.input", row.id, REASONS["input.system" if text_only else "input.content"])
            return messages
    elif isinstance(value, str):
        return value
    env["input"] = value
    report.carry("$.input", row.id, REASONS["input.text"] if not multi or not is_chat(value) else REASONS["input.order"])
    text = jsonvalue.dumps(value)
    return [{"content": text, "type": "human"}] if multi else text


def _reference(row: Row, env: dict[str, Any], report: LossReporter, multi: bool) -> dict[str, Any]:
    if not row.has_expected:
        return {}
    oracle, expected = row.case["oracleType"], row.expected
    if oracle in ("reference-answer", "rubric") and isinstance(expected, str) and expected:
        return {"reference": expected}
    if oracle == "expected-tool-calls" and multi and isinstance(expected, list):
        calls = [{"name": c["name"], "args": c.get("arguments", {})} for c in expected
                 if isinstance(c, dict) and isinstance(c.get("name"), str)]
        exact = len(calls) == len(expected) and all(
            c.keys() == {"name", "arguments"} and isinstance(c["arguments"], dict) for c in expected)
        if not exact:
            env["expected"] = expected
            report.carry("$.expected", row.id, REASONS["expected.args"])
        out: dict[str, Any] = {"reference_tool_calls": calls}
        if row.case.get("expectedBehavior"):  # the outcome in words, as agent-goal metrics read it
            out["reference"] = row.case["expectedBehavior"]
        return out
    if expected == "":
        env["expected"] = expected
        report.carry("$.expected", row.id, REASONS["expected.empty"])
        return {}
    why = {"reference-answer": "expected.text", "rubric": "expected.text", "acceptable-set": "expected.set",
           "expected-tool-calls": "expected.calls"}.get(oracle, "expected.other")
    env["expected"] = expected
    report.carry("$.expected", row.id, REASONS[why])
    return {"reference": jsonvalue.dumps(expected)} if why == "expected.text" else {}


def csv_cell(value: Any) -> str:
    """What Ragas' to_csv writes: text as is, anything else as Python's str() of it."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


CSV_FORMULAS = unguarded_formulas("Ragas", "pandas.read_csv, in datasets' csv loader and EvaluationDataset.from_pandas")


class SampleWriter:
    """A Ragas dataset is all single-turn or all multi-turn, and only the whole set decides (one
    chat input makes it multi-turn); a CSV's header is the union of its samples' keys. So rows
    wait in a spool on disk until the set is known, and CSV samples in another until their keys
    are: memory stays flat whatever the size."""

    def __init__(self, out: TextIO, report: LossReporter, variant: str) -> None:
        self._out, self._report, self._variant = out, report, variant
        self._rows: Any = tempfile.SpooledTemporaryFile(_SPOOL_BYTES)  # JSON lines, as UTF-8
        self._multi = self._text = False

    def write(self, row: Row) -> None:
        self._rows.write(jsonvalue.dumps(row.to_json()).encode("utf-8") + b"\n")
        if is_chat(row.input):
            self._multi = True
        else:
            self._text = True

    def _samples(self) -> Iterator[dict[str, Any]]:
        return (sample for _, sample in self._rows_and_samples())

    def _rows_and_samples(self) -> Iterator[tuple[str, dict[str, Any]]]:
        self._rows.seek(0)
        for line in self._rows:
            row = Row.from_json(jsonvalue.loads(line))
            yield row.id, build_sample(row, self._report, self._multi, self._variant == "csv")
        self._rows.close()

    def close(self) -> None:
        if self._variant == "jsonl":
            for sample in self._samples():
                self._out.write(jsonvalue.dumps(sample) + "\n")
        elif self._variant == "json":
            count = 0
            for sample in self._samples():  # the layout of the whole array dumped with an indent
                body = jsonvalue.dumps(sample, indent=True).replace("\n", "\n  ")
                self._out.write(("[\n  " if count == 0 else ",\n  ") + body)
                count += 1
            self._out.write("\n]\n" if count else "[]\n")
        else:
            self._close_csv()
        if self._multi and self._text:
            self._report.notes.append("the set mixes chat and text inputs; Ragas holds one kind per dataset, "
                                      "so every sample is multi-turn (a text input is one human message)")

    def _close_csv(self) -> None:
        columns: dict[str, None] = {}
        with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as samples:
            for row_id, sample in self._rows_and_samples():
                columns.update(dict.fromkeys(sample))
                pickle.dump(sample, samples, pickle.HIGHEST_PROTOCOL)
                if formula_looking([csv_cell(value) for value in sample.values()]):
                    self._report.notice_row(CSV_FORMULAS, row_id)
            writer = csv.writer(self._out)  # the excel dialect, as to_csv's DictWriter
            writer.writerow(columns)
            samples.seek(0)
            while True:
                try:
                    sample = pickle.load(samples)
                except EOFError:
                    break
                writer.writerow([csv_cell(sample.get(k)) for k in columns])


_SPOOL_BYTES = 1 << 20  # a spool stays in memory up to this, then goes to a temporary file
