"""pydantic-evals Dataset files (YAML or JSON) -> canonical rows.

A case evalconv wrote carries its case profile in `metadata.case` and fingerprints of what it
wrote in `metadata.evalconv.sums`: an `inputs`, `expected_output`, metadata key or evaluator list
that no longer has its fingerprint was edited in pydantic-evals. The edit is what the row holds
(evaluators: kept in `extensions.pydantic-evals.evaluators` and written back as they are), and
the read report names it. A case evalconv did not write gets a case profile inferred from its
evaluators and expected output, each inference in the read report. Dataset-level evaluators run
on every case in pydantic-evals, so they are read as each case's own (the same checks).
"""
from __future__ import annotations

from typing import Any, Iterator

import yaml

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError, RowError
from evalconv.canonical.reporting import ReadReporter
from evalconv.canonical.safe_yaml import load_yaml
from evalconv.canonical.source import Lines, SourceRow

from .._common import records as rec
from .evaluators import JUDGES, normal_form, spec_args, spec_name
from .fields import CASE_KEYS, DATASET_KEYS, STARTER_KEY, VENDOR

EDITED = ("edited in pydantic-evals: it differs from what evalconv wrote (its fingerprint in "
          "metadata.evalconv.sums); the edit is kept")
_WHITESPACE = "\ufeff \t\r\n"


def read_dataset(lines: Lines, report: ReadReporter) -> Iterator[SourceRow]:
    text = lines.text()
    if not text.strip(_WHITESPACE):
        return
    if text.lstrip(_WHITESPACE).startswith("{"):
        try:
            data = jsonvalue.loads(text.lstrip("\ufeff"))
        except jsonvalue.JSONValueError as err:
            raise ReadError(f"invalid JSON: {err}", source=lines.source) from None
        case_lines: list[int | None] = []
    else:
        node, data = load_yaml(text, lines.source)  # JSON values only, aliases bounded
        case_lines = _item_lines(node, "cases")
    if not (isinstance(data, dict) and "cases" in data):
        raise ReadError("a pydantic-evals dataset is a mapping with `cases:` (a list of cases)",
                        source=lines.source, line=1)
    cases, dataset_specs = data["cases"], data.get("evaluators") or []
    if not isinstance(cases, list):
        raise ReadError("`cases` must be a list of cases", source=lines.source, field="cases")
    if not isinstance(dataset_specs, list):
        raise ReadError("`evaluators` must be a list of evaluators", source=lines.source, field="evaluators")
    _note_dataset_fields(data, report)
    for index, case in enumerate(cases, 1):
        line = case_lines[index - 1] if index <= len(case_lines) else None
        record = None if line else index
        try:
            yield SourceRow(row_value(case, index, dataset_specs, report), line, record)
        except RowError as err:
            yield SourceRow.failed(err, line, record)


def _item_lines(node: Any, key: str) -> list[int | None]:
    if isinstance(node, yaml.MappingNode):
        found = next((v for k, v in node.value if getattr(k, "value", None) == key), None)
        if isinstance(found, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in found.value]
    return []


def _note_dataset_fields(data: dict[str, Any], report: ReadReporter) -> None:
    if isinstance(data.get("name"), str):
        report.notes.append(f"the dataset's name '{data['name']}' is not kept: evalconv names a set by its file "
                            "(pydantic-evals takes the file's name when a dataset names none)")
    if data.get("report_evaluators"):
        report.notes.append("report_evaluators (set-level analyses of a run) are not case data and are not read")
    for key in sorted(k for k in data if k not in DATASET_KEYS):
        report.notes.append(f"`{key}` is not a pydantic-evals dataset field (pydantic-evals refuses it) and is not read")
    if data.get("evaluators"):
        report.notes.append("the dataset-level evaluators run on every case in pydantic-evals: they are read as "
                            "each case's own (metadata.case.extensions.pydantic-evals.evaluators)")


def row_value(case: Any, index: int, dataset_specs: list[Any], report: ReadReporter) -> dict[str, Any]:
    """The canonical row of one pydantic-evals case (raises RowError)."""
    if not isinstance(case, dict):
        raise RowError(f"a case must be a mapping, not {type(case).__name__}", "$", None)
    name = case.get("name")
    partial = {"id": name} if isinstance(name, str) and name else None
    problem = jsonvalue.value_problem(case)
    if problem is not None:
        raise RowError(problem[1], problem[0], partial)
    for key in case:
        if key not in CASE_KEYS:
            raise RowError(f"`{key}` is not a pydantic-evals case field (pydantic-evals refuses the file)",
                           f"$.{key}", partial)
    if "inputs" not in case:
        raise RowError("the case has no inputs (pydantic-evals requires them)", "$.inputs", partial)
    metadata = case.get("metadata")
    metadata = {} if metadata is None else metadata
    if not isinstance(metadata, dict):
        raise RowError("metadata must be a mapping", "$.metadata", partial)
    specs = case.get("evaluators")
    specs = [] if specs is None else specs
    if not isinstance(specs, list):
        raise RowError("evaluators must be a list", "$.evaluators", partial)
    specs = specs + list(dataset_specs)
    profile = metadata.get("case")
    if isinstance(profile, dict) and isinstance(profile.get("caseId"), str) and isinstance(profile.get("oracleType"), str):
        return _own_row(case, metadata, specs, report, partial)
    return _foreign_row(case, metadata, specs, index, report)


def _own_row(case: dict[str, Any], metadata: dict[str, Any], specs: list[Any], report: ReadReporter,
             partial: dict[str, Any] | None) -> dict[str, Any]:
    envelope = metadata.get(rec.ENVELOPE)
    envelope = envelope if isinstance(envelope, dict) else {}
    meta = {k: v for k, v in metadata.items() if k != rec.ENVELOPE}
    rec.restore_shadowed(meta, envelope, (rec.ENVELOPE,))
    if envelope.get("starter"):
        meta.pop(STARTER_KEY, None)
    sums = envelope.get(rec.SUMS)
    if isinstance(sums, dict):  # before the profile takes a rename or kept evaluators
        rec.name_metadata_edits(meta, envelope, "pydantic-evals", str(meta["case"]["caseId"]), report)
    profile = meta["case"] = dict(meta["case"])
    row_id = profile["caseId"]
    if partial is None:
        raise RowError("the case has no name (evalconv writes the id there)", "$.name", {"id": row_id})
    if partial["id"] != row_id:  # renamed in pydantic-evals: the name is the id
        report.edit("$.id", partial["id"], f"the case was renamed in pydantic-evals (from '{row_id}'); the new "
                    "name is the id and metadata.case.caseId follows it")
        row_id = profile["caseId"] = partial["id"]
    value: dict[str, Any] = {"id": row_id, "input": case["inputs"]}
    if case.get("expected_output") is not None:
        value["expected"] = case["expected_output"]
    elif envelope.get("expectedNull"):
        value["expected"] = None
    if isinstance(sums, dict):
        if rec.fingerprint(value["input"]) != sums.get("inputs"):
            report.edit("$.input", row_id, "inputs " + EDITED)
        if (rec.fingerprint(value["expected"]) if "expected" in value else None) != sums.get("expected_output"):
            report.edit("$.expected", row_id, "expected_output " + EDITED)
        if rec.fingerprint([normal_form(s) for s in specs]) != sums.get("evaluators"):
            _keep_evaluators(profile, specs, row_id, report)
    value["metadata"] = meta
    return value


def _keep_evaluators(profile: dict[str, Any], specs: list[Any], row_id: str, report: ReadReporter) -> None:
    extensions = profile["extensions"] = dict(profile.get("extensions") or {})
    ext = extensions[VENDOR] = dict(extensions.get(VENDOR) or {})
    ext["evaluators"] = specs
    report.edit(f"$.metadata.case.extensions.{VENDOR}.evaluators", row_id,
                "the case's evaluators were edited in pydantic-evals (or dataset-level evaluators added): kept in "
                f"metadata.case.extensions.{VENDOR}.evaluators and written back as they are")


# --- a file evalconv did not write -------------------------------------------------------------

def _foreign_row(case: dict[str, Any], metadata: dict[str, Any], specs: list[Any], index: int,
                 report: ReadReporter) -> dict[str, Any]:
    name = case.get("name")
    if isinstance(name, str) and name:
        row_id = name
    else:
        row_id = rec.generated_id(VENDOR, index)
        report.infer("$.id", row_id, "the case has no name; numbered by its place in the file")
    value: dict[str, Any] = {"id": row_id, "input": case["inputs"]}
    has_expected = case.get("expected_output") is not None
    if has_expected:
        value["expected"] = case["expected_output"]
    profile: dict[str, Any] = {"caseId": row_id}
    _infer_from_evaluators(profile, value, specs, report)
    if "oracleType" not in profile:
        profile["oracleType"], why = rec.infer_oracle(value.get("expected"), "expected" in value)
        report.infer("$.metadata.case.oracleType", row_id, why)
    profile["expectedBehavior"], profile["provenance"] = "", "imported"
    report.infer("$.metadata.case.provenance", row_id, "imported: a pydantic-evals case evalconv did not write")
    report.infer("$.metadata.case.expectedBehavior", row_id,
                 "left empty: pydantic-evals cases do not say it in words; fill it in")
    profile = {k: profile[k] for k in ("caseId", "oracleType", "expectedBehavior", "provenance", *profile)}
    meta = dict(metadata)
    rec.keep_foreign_case(meta, profile, VENDOR, row_id, report)
    if specs:
        profile.setdefault("extensions", {}).setdefault(VENDOR, {})["evaluators"] = specs
        report.infer(f"$.metadata.case.extensions.{VENDOR}.evaluators", row_id,
                     "the case's evaluators, kept as they are and written back to pydantic-evals")
    value["metadata"] = {"case": profile, **meta}
    return value


def _infer_from_evaluators(profile: dict[str, Any], value: dict[str, Any], specs: list[Any],
                           report: ReadReporter) -> None:
    """The oracle type and evaluator the case's evaluators say, strongest first: tool checks,
    a model judge, an equality, a containment or type check."""
    row_id = value["id"]
    named: dict[str, list[Any]] = {}
    for spec in specs:
        named.setdefault(spec_name(spec) or "", []).append(spec)
    tools = [s for n in ("ToolCorrectness", "TrajectoryMatch", "ArgumentCorrectness") for s in named.get(n, [])]
    judges = [s for n in JUDGES for s in named.get(n, [])]

    def say(field: str, setting: Any, why: str) -> None:
        profile[field] = setting
        report.infer(f"$.metadata.case.{field}", row_id, why)

    if tools:
        say("oracleType", "expected-tool-calls", "the case has tool-call evaluators")
        say("evaluator", "trajectory-or-state-check", "pydantic-evals checks the calls in the run's spans")
        if "expected" not in value:
            calls = _calls(named)
            if calls is not None:
                value["expected"] = calls
                report.infer("$.expected", row_id, "the expected calls, from the tool evaluators' arguments")
    elif judges:
        criteria = [t for t in (_judge_text(s) for s in judges) if t]
        if "expected" in value:
            say("oracleType", "reference-answer", "a model judge with an expected output")
        else:
            say("oracleType", "rubric", "a model judge and no expected output")
        say("evaluator", "llm-judge", "the case is graded by LLMJudge / GEval")
        if criteria:
            say("evaluationCriteria", criteria, "the judges' rubrics")
    elif "EqualsExpected" in named or "Equals" in named:
        say("oracleType", "reference-answer", "an equality evaluator")
        say("evaluator", "exact-or-programmatic", "Equals / EqualsExpected compare the output exactly")
        if "expected" not in value and "Equals" in named:
            value["expected"] = _first_arg(named["Equals"][0], "value")
            report.infer("$.expected", row_id, "the value Equals compares the output with")
    elif "Contains" in named or "IsInstance" in named:
        say("oracleType", "reference-answer" if "expected" in value or "Contains" in named else "expected-behavior-only",
            "a containment or type check")
        if "Contains" in named:
            say("evaluator", "exact-or-programmatic", "Contains checks the output programmatically")
        checks = [f"the output contains {jsonvalue.dumps(_first_arg(s, 'value'))}"
                  + (" (case-insensitive)" if spec_args(s)[1].get("case_sensitive") is False else "")
                  for s in named.get("Contains", [])]
        checks += [f"the output is a {_first_arg(s, 'type_name')}" for s in named.get("IsInstance", [])]
        say("passLogic", "; ".join(checks), "what the evaluators check (pydantic-evals' own words)")
        if "expected" not in value and "Contains" in named:
            value["expected"] = _first_arg(named["Contains"][0], "value")
            report.infer("$.expected", row_id, "the value Contains looks for in the output")


def _first_arg(spec: Any, key: str) -> Any:
    args, kwargs = spec_args(spec)
    return kwargs.get(key, args[0] if args else None)


def _judge_text(spec: Any) -> str | None:
    text = _first_arg(spec, "rubric" if spec_name(spec) == "LLMJudge" else "criteria")
    return text if isinstance(text, str) and text else None


def _calls(named: dict[str, list[Any]]) -> list[dict[str, Any]] | None:
    names: Any = None
    for kind, key in (("TrajectoryMatch", "expected_trajectory"), ("ToolCorrectness", "expected_tools")):
        if named.get(kind):
            names = _first_arg(named[kind][0], key)
            break
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        return None
    calls: list[dict[str, Any]] = [{"name": n} for n in names]
    for spec in named.get("ArgumentCorrectness", []):
        _, kwargs = spec_args(spec)
        tool, occurrence = kwargs.get("tool_name"), kwargs.get("occurrence", "first")
        matching = [c for c in calls if c["name"] == tool]
        at = 0 if occurrence == "first" else -1 if occurrence == "last" else occurrence
        if matching and isinstance(at, int) and -len(matching) <= at < len(matching) and \
                isinstance(kwargs.get("expected_arguments"), dict):
            matching[at]["arguments"] = kwargs["expected_arguments"]
    return calls
