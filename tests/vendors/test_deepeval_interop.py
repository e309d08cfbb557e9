"""Interop with the real DeepEval (offline): evalconv's exports load in DeepEval's own loaders
with the intended values, and the files DeepEval's save_as writes import as valid rows."""
from __future__ import annotations

import csv
import io
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

# DeepEval reads its settings at import: no telemetry, no .env files from the working directory.
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalconv
from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from evalconv.vendors.deepeval.golden import is_tool_calls
from evalconv.vendors.deepeval.write import pandas_kind
from interop import require_module, vendor_fixtures
from strategies import TRICKY, row_sets, texts

pytestmark = pytest.mark.interop
FIXTURES, _ = vendor_fixtures("deepeval")
LOADERS = {"json": "add_goldens_from_json_file", "jsonl": "add_goldens_from_jsonl_file",
           "csv": "add_goldens_from_csv_file"}


@contextmanager
def scratch():
    """A temporary directory that is also the working directory (DeepEval writes into the cwd)."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(cwd)


@pytest.fixture(scope="module")
def deepeval():
    with scratch():
        module = require_module("deepeval.dataset")
    if not hasattr(module, "EvaluationDataset"):
        pytest.fail("deepeval.dataset has no EvaluationDataset")
    return module


def load(deepeval, path: Path) -> list:
    if path.suffix == ".csv":
        require_module("pandas")  # DeepEval's CSV loader needs it but does not depend on it
    dataset = deepeval.EvaluationDataset()
    with scratch():
        getattr(dataset, LOADERS[path.suffix[1:]])(str(path))
    return list(dataset.goldens)


def meant(row: Row, variant: str = "json") -> dict:
    """What DeepEval should see for a row, worked out from the row, not from the writer."""
    case = row.case
    expected = row.expected if row.has_expected else None
    tools = None
    if case["oracleType"] == "expected-tool-calls" and is_tool_calls(expected) and not isinstance(expected, str):
        tools, expected = [(c["name"], c.get("arguments")) for c in expected], None
        if not tools and variant == "jsonl":  # its JSONL loader reads [] as no expected tools
            tools = None
    elif case["oracleType"] in ("acceptable-set", "expected-final-state"):
        expected = None  # never text a stock metric would compare the output with
    elif expected is not None and not isinstance(expected, str):
        expected = jsonvalue.dumps(expected)
    judged = case.get("evaluator", "llm-judge" if case["oracleType"] == "rubric" else None) == "llm-judge"
    behavior = case["expectedBehavior"].strip()
    criteria = [c.strip() for c in case.get("evaluationCriteria", []) if c.strip()]
    if case["oracleType"] == "rubric" and behavior and criteria == [behavior]:
        criteria = []  # written once
    must = ([behavior] if behavior else []) + criteria if judged else []
    must_not = [i.strip() for i in case.get("unacceptableBehavior", []) if i.strip()] if judged else []
    return {"input": row.input if isinstance(row.input, str) else jsonvalue.dumps(row.input),
            "name": row.id, "expected_output": expected, "expected_tools": tools,
            "expectations": (must, must_not) if must or must_not else None}


def seen(golden) -> dict:
    tools = golden.expected_tools
    expectations = golden.expectations
    return {"input": golden.input, "name": golden.name, "expected_output": golden.expected_output,
            "expected_tools": None if tools is None else [(t.name, t.input_parameters) for t in tools],
            "expectations": None if expectations is None else (expectations.must, expectations.must_not)}


def export(rows, path: Path):
    return evalconv.write(rows, str(path), "deepeval")


@pytest.mark.parametrize("variant", ["json", "jsonl"])
@settings(max_examples=60)
@given(rows=row_sets().filter(bool))
def test_json_exports_load_in_deepeval_as_meant(deepeval, variant, rows):
    with scratch() as tmp:
        path = tmp / f"set.{variant}"
        export(rows, path)
        goldens = load(deepeval, path)
    assert len(goldens) == len(rows)
    for row, golden in zip(rows, goldens):
        assert seen(golden) == meant(row, variant)
        assert type(golden).__name__ == "Golden"  # never a conversational golden
        assert jsonvalue.same(golden.additional_metadata["evalconv"], row.to_json())


@pytest.mark.parametrize("variant, tools", [("json", []), ("jsonl", None), ("csv", [])])
def test_regression_no_expected_tool_calls_reads_back_as_none_from_deepeval_jsonl(deepeval, variant, tools):
    """A case expecting no tool calls (`expected: []`): DeepEval's JSONL loader reads the empty
    expected_tools as none at all, which the report now says (hypothesis found it in CI)."""
    value = {"id": "no-tools", "input": "Just answer.", "expected": [],
             "metadata": {"case": {"caseId": "no-tools", "oracleType": "expected-tool-calls",
                                   "expectedBehavior": "Answers without calling a tool.",
                                   "provenance": "expert-authored"}}}
    with scratch() as tmp:
        path = tmp / f"set.{variant}"
        report = export([Row.from_json(value)], path)
        [golden] = load(deepeval, path)
    assert golden.expected_tools == tools
    reported = {reason for (where, reason), ids in report.carried.entries.items() if where == "$.expected"}
    assert any("JSONL loader" in reason for reason in reported) == (variant == "jsonl")


@settings(max_examples=60)
@given(rows=row_sets().filter(bool))
def test_csv_exports_load_in_deepeval_as_meant_or_as_reported(deepeval, rows):
    with scratch() as tmp:
        path = tmp / "set.csv"
        report = export(rows, path)
        try:
            goldens = load(deepeval, path)
        except Exception:
            assert any("will fail" in note for note in report.notes), report.notes
            return
    assert not any("will fail" in note for note in report.notes), report.notes
    for row, golden in zip(rows, goldens):
        want, got = meant(row), seen(golden)
        carried = {path for (path, reason), ids in report.carried.entries.items()
                   if row.id in ids and reason.startswith("CSV:")}
        for key, path in (("input", "$.input"), ("expected_output", "$.expected"), ("name", "$.id")):
            assert (want[key] != got[key]) == (path in carried), (key, want[key], got[key])
        assert got["expected_tools"] == (want["expected_tools"] or ([] if golden.expected_tools == [] else None))
        assert got["expectations"] == want["expectations"]
        assert jsonvalue.same(golden.additional_metadata["evalconv"], row.to_json())


@settings(max_examples=300)
@given(cell=st.one_of(st.sampled_from(TRICKY), texts,
                      st.from_regex(r"\A[ \t]?[+-]?\d{0,3}\.?\d{0,3}(e[+-]?\d)?[ \t]?\Z")))
def test_pandas_kind_matches_pandas(cell):
    pandas = require_module("pandas")
    if "\x00" in cell:
        return  # never written raw (see the CSV writer)
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerows([["a", "b"], [cell, "x"]])  # never a blank line
    frame = pandas.read_csv(io.StringIO(buffer.getvalue()))
    value = frame["a"].astype(object).where(pandas.notna(frame["a"]), None).values[0] if len(frame) else None
    kind = "na" if value is None else "bool" if isinstance(value, bool) or str(frame["a"].dtype) == "bool" \
        else "text" if isinstance(value, str) else "number"
    assert pandas_kind(cell) == kind, (cell, value)


@pytest.mark.parametrize("name", ["goldens.json", "goldens.jsonl", "goldens.csv", "conversational_goldens.json"])
def test_fixtures_read_as_deepeval_reads_them(deepeval, name):
    goldens = load(deepeval, FIXTURES / name)
    rows = evalconv.read(str(FIXTURES / name)).rows
    assert len(goldens) == len(rows)
    for golden, row in zip(goldens, rows):
        assert row.id == golden.name
        if hasattr(golden, "scenario") and golden.scenario:
            assert row.case["scenario"] == golden.scenario
            assert [t["content"] for t in row.input["messages"]] == [t.content for t in golden.turns]
            continue
        assert row.input == golden.input
        if golden.expected_tools:
            assert row.expected == [{"name": t.name, "arguments": t.input_parameters} for t in golden.expected_tools]
        elif golden.expected_output is not None:
            assert row.expected == golden.expected_output
        if golden.expectations is not None:
            must = golden.expectations.must
            if must:  # the first condition is the expected behaviour, the rest criteria
                assert row.case["expectedBehavior"] == must[0]
                assert row.case.get("evaluationCriteria") == (
                    must[1:] or (must if row.case["oracleType"] == "rubric" else None))
            assert row.case.get("unacceptableBehavior", []) == golden.expectations.must_not


@pytest.mark.parametrize("file_type", ["json", "jsonl", "csv"])
def test_files_save_as_writes_import_as_valid_rows(deepeval, file_type):
    from deepeval.dataset.golden import ConversationalGolden, Golden
    from deepeval.test_case import ToolCall, Turn
    single = [
        Golden(input="Refund order 7?", expected_output="Yes, within 5 days.", name="g-1",
               context=["Refunds take 5 days."], retrieval_context=["Policy: 5 days."],
               actual_output="Sure", comments="c", additional_metadata={"k": [1, None, True]},
               custom_column_key_values={"tier": "gold"}),
        Golden(input="Track it", name="g-2",
               expected_tools=[ToolCall(name="track", input_parameters={"order": "7"})],
               tools_called=[ToolCall(name="track", input_parameters={"order": "7"}, output={"ok": True})]),
        Golden(input="Lost parcel", name="g-3"),
    ]
    conversational = [ConversationalGolden(
        scenario="Customer asks for a refund.", expected_outcome="Refund issued.", name="c-1",
        turns=[Turn(role="user", content="Refund please"),
               Turn(role="assistant", content="Done", tools_called=[ToolCall(name="refund")])])]
    for goldens in (single, conversational):
        with scratch() as tmp:
            dataset = deepeval.EvaluationDataset(goldens=goldens)
            path = Path(dataset.save_as(file_type, str(tmp)))
            result = evalconv.read(str(path), from_="deepeval")
        assert result.log.error_count == 0 and len(result.rows) == len(goldens)
        for golden, row in zip(goldens, result.rows):
            assert row.id == golden.name and row.case["provenance"] == "imported"
            if isinstance(golden, ConversationalGolden):
                assert row.input["messages"][1]["tools_called"][0]["name"] == "refund"
                assert row.expected == "Refund issued."
                continue
            assert row.input == golden.input
            if golden.expected_tools:
                assert row.expected == [{"name": "track", "arguments": {"order": "7"}}]
                assert row.metadata["deepeval_run"]["tools_called"][0]["output"] == {"ok": True}
            elif golden.expected_output:
                assert row.expected == golden.expected_output
                assert row.metadata["referenceContexts"] == golden.context
                assert row.metadata["deepeval_run"]["retrieval_context"] == golden.retrieval_context
                assert row.metadata["deepeval"]["additional_metadata"] == {"k": [1, None, True]}
            else:
                assert row.case["oracleType"] == "expected-behavior-only"


def _row(row_id: str, input="Where is it?", expected="Here.") -> Row:
    return Row.from_json({"id": row_id, "input": input, "expected": expected, "metadata": {"case": {
        "caseId": row_id, "oracleType": "reference-answer", "expectedBehavior": "Answers.",
        "provenance": "expert-authored"}}})


@pytest.mark.parametrize("rows", [[_row("42")], [_row("a", input="N/A"), _row("b")],
                                  [_row("a", expected="1"), _row("b", expected="2.5")]],
                         ids=["numeric-name-column", "na-input", "numeric-expected-column"])
def test_csv_that_deepeval_cannot_load_is_announced(deepeval, rows):
    with scratch() as tmp:
        report = export(rows, tmp / "set.csv")
        assert any("will fail" in note for note in report.notes)
        with pytest.raises(Exception):  # noqa: B017 - pandas and DeepEval raise several kinds
            load(deepeval, tmp / "set.csv")


def test_csv_na_like_reference_loads_as_none_and_is_reported(deepeval):
    rows = [_row("a", expected="NA"), _row("b", expected="Fine")]
    with scratch() as tmp:
        report = export(rows, tmp / "set.csv")
        goldens = load(deepeval, tmp / "set.csv")
    assert [g.expected_output for g in goldens] == [None, "Fine"]
    assert not report.notes
    assert any(path == "$.expected" and ids == ["a"] and reason.startswith("CSV:")
               for (path, reason), ids in report.carried.entries.items())


# --- issue 14: the right grader grades, edits come back -----------------------------------------

def _case_row(row_id: str, oracle: str, expected, **case) -> Row:
    value = {"id": row_id, "input": "How much is the deductible?", "metadata": {"case": {
        "caseId": row_id, "oracleType": oracle, "expectedBehavior": "States the deductible.",
        "provenance": "expert-authored", "unacceptableBehavior": ["Guesses."], **case}}}
    if expected is not None:
        value["expected"] = expected
    return Row.from_json(value)


def _membership_metric():
    """The metric docs/vendors/deepeval.md documents, run as written there."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "vendors" / "deepeval.md").read_text("utf-8")
    code = docs.split("<!-- membership-metric:start -->\n```python\n", 1)[1].split("```\n<!-- membership", 1)[0]
    scope: dict = {}
    exec(compile(code, "docs/vendors/deepeval.md", "exec"), scope)  # our own docs, run as written
    return scope["MembershipMetric"]


@pytest.mark.parametrize("variant", ["json", "jsonl", "csv"])
def test_regression_stock_metrics_grade_what_they_may_and_no_judge_is_added(deepeval, variant):
    """Issue 14: every golden carried expectations (an LLM judge on exact and human cases), and an
    acceptable set was JSON text in expected_output, so ExactMatchMetric scored a member 0.0.
    Test cases are built as DeepEval builds them from goldens (`metadata=`, issue 26 item 16)."""
    from deepeval.errors import MissingTestCaseParamsError
    from deepeval.metrics import ExactMatchMetric
    from deepeval.test_case import LLMTestCase
    rows = [_case_row("exact", "reference-answer", "$1,000"),
            _case_row("human", "reference-answer", "$1,000", evaluator="human-expert", reviewerExpertise="claims"),
            _case_row("judged", "rubric", None, evaluator="llm-judge", evaluationCriteria=["Names the amount"]),
            _case_row("set", "acceptable-set", ["approved", "under_review"]),
            _case_row("state", "expected-final-state", {"claims": {"c-1": "closed"}},
                      evaluator="trajectory-or-state-check")]
    with scratch() as tmp:
        report = export(rows, tmp / f"set.{variant}")
        goldens = {g.name: g for g in load(deepeval, tmp / f"set.{variant}")}
    assert [name for name, g in goldens.items() if g.expectations is not None] == ["judged"]
    assert goldens["judged"].expectations.must == ["States the deductible.", "Names the amount"]

    def case(name: str, output: str) -> LLMTestCase:
        golden = goldens[name]
        return LLMTestCase(input=golden.input, actual_output=output, expected_output=golden.expected_output,
                           metadata=golden.additional_metadata)

    metric = ExactMatchMetric()
    assert metric.measure(case("exact", "$1,000"), _show_indicator=False) == 1.0
    assert metric.measure(case("exact", "$1,500"), _show_indicator=False) == 0.0
    for name in ("set", "state"):  # no text to mis-compare: the stock metric refuses the case
        assert goldens[name].expected_output is None
        with pytest.raises(MissingTestCaseParamsError, match="expected_output"):
            ExactMatchMetric().measure(case(name, "under_review"), _show_indicator=False)
    membership = _membership_metric()()
    assert membership.measure(case("set", "under_review")) == 1.0 and membership.is_successful()
    assert membership.measure(case("set", "rejected")) == 0.0 and not membership.is_successful()
    reasons = {(path, rid): reason for (path, reason), ids in report.carried.entries.items() for rid in ids}
    assert "membership" in reasons[("$.expected", "set")]
    assert "not graded by an LLM judge" in reasons[("$.metadata.case.expectedBehavior", "exact")]


def test_regression_an_edit_made_with_deepeval_comes_back_and_is_printed(deepeval, tmp_path):
    """Issue 14: expected_output changed in DeepEval from `$1,000` to `$1,500` read back as
    `$1,000` and the CLI printed "lossless". DeepEval itself makes the edit and saves the file."""
    from click.testing import CliRunner

    from evalconv.cli import cli
    rows = [_case_row("exact", "reference-answer", "$1,000"), _case_row("other", "reference-answer", "$5")]
    with scratch() as tmp:
        export(rows, tmp / "set.json")
        dataset = deepeval.EvaluationDataset()
        dataset.add_goldens_from_json_file(str(tmp / "set.json"))
        dataset.goldens[0].expected_output = "$1,500"
        saved = Path(dataset.save_as("json", str(tmp), file_name="edited"))
        result = CliRunner().invoke(cli, [str(saved), "--from", "deepeval", "--to", "jsonl",
                                           "-o", str(tmp_path / "back.jsonl")])
    assert result.exit_code == 0, result.output
    back = [jsonvalue.loads(line) for line in (tmp_path / "back.jsonl").read_text("utf-8").splitlines()]
    assert [r["expected"] for r in back] == ["$1,500", "$5"]
    assert "row 'exact' $.expected: expected_output was edited in the DeepEval file" in result.stderr
    assert "1 edit in the deepeval file taken (listed above)" in result.stderr  # not a bare "lossless"


@pytest.mark.parametrize("variant", ["json", "jsonl"])
def test_regression_chats_load_as_conversational_goldens(deepeval, variant):
    """Issue 14: a chat input became a JSON string. A set of user/assistant chats now loads in
    DeepEval as ConversationalGolden turns; a mixed set stays single-turn (DeepEval cannot mix)."""
    chat = {"messages": [{"role": "user", "content": "Is my claim covered?"},
                         {"role": "assistant", "content": "Which policy?"}, {"role": "user", "content": "HO-3"}]}
    rows = [Row.from_json({"id": f"c{i}", "input": chat, "expected": "Explains the HO-3 coverage.", "metadata": {
        "case": {"caseId": f"c{i}", "oracleType": "reference-answer", "expectedBehavior": "Explains coverage.",
                 "provenance": "expert-authored", "scenario": "A policyholder asks about coverage."}}})
            for i in range(2)]
    with scratch() as tmp:
        export(rows, tmp / f"set.{variant}")
        dataset = deepeval.EvaluationDataset()
        getattr(dataset, LOADERS[variant])(str(tmp / f"set.{variant}"))
        plain = _case_row("plain", "reference-answer", "$1,000")
        report = export([*rows, plain], tmp / f"mixed.{variant}")
        mixed = load(deepeval, tmp / f"mixed.{variant}")
    goldens = dataset.goldens
    assert [type(g).__name__ for g in goldens] == ["ConversationalGolden"] * 2
    assert [(t.role, t.content) for t in goldens[0].turns] == [(m["role"], m["content"]) for m in chat["messages"]]
    assert goldens[0].scenario == "A policyholder asks about coverage."
    assert goldens[0].expected_outcome == "Explains the HO-3 coverage."
    assert [type(g).__name__ for g in mixed] == ["Golden"] * 3
    assert "conversational goldens" in {r for (p, r), ids in report.carried.entries.items() if p == "$.input" and "c0" in ids}.pop()


# --- issue 24: what DeepEval's judge and metrics read; edits made with DeepEval's own code -------

def _issue24_rows() -> list[Row]:
    """One row per shape the issue names: a judged rubric with criteria, reference contexts, a
    case that expects no tool call, run output read from DeepEval, a reference answer."""
    def row(row_id: str, oracle: str, expected=None, metadata=None, **case) -> Row:
        value = {"id": row_id, "input": f"Question {row_id}?", "metadata": {"case": {
            "caseId": row_id, "oracleType": oracle, "expectedBehavior": f"Answers {row_id}.",
            "provenance": "expert-authored", **case}, **(metadata or {})}}
        if expected is not None:
            value["expected"] = expected
        return Row.from_json(value)
    return [row("rubric", "rubric", evaluator="llm-judge", evaluationCriteria=["Apologises once", "Offers the credit"],
                unacceptableBehavior=["Blames the carrier"]),
            row("grounded", "reference-answer", "5 days", evaluator="llm-judge",
                metadata={"referenceContexts": ["Refunds post 5-7 business days.", "Receipts are required."]}),
            row("no-tools", "expected-tool-calls", []),
            row("ran", "reference-answer", "Yes", metadata={"deepeval_run": {"actual_output": "Yes",
                                                                              "retrieval_context": ["Policy."]}})]


class _Seen(Exception):
    pass


def _offline_judge():
    """A DeepEval model that records the prompt it is given and answers nothing (no network)."""
    from deepeval.models import DeepEvalBaseLLM

    class Recorder(DeepEvalBaseLLM):
        def __init__(self):
            self.prompts: list[str] = []

        def load_model(self):
            return None

        def generate(self, prompt, schema=None):
            self.prompts.append(prompt)
            raise _Seen()

        async def a_generate(self, prompt, schema=None):
            return self.generate(prompt, schema)

        def get_model_name(self):
            return "recorder"
    return Recorder()


@pytest.mark.parametrize("variant", ["json", "jsonl", "csv"])
def test_regression_the_rubric_judge_and_hallucination_metric_read_the_criteria_and_contexts(deepeval, variant):
    """Issue 24: a rubric's judge got only `must = [expectedBehavior]` (the criteria sat in
    additional_metadata, which DeepEval does not read), and reference contexts went nowhere DeepEval
    reads. DeepEval's own golden -> test case conversion, expectations judge and HallucinationMetric
    now see them."""
    import warnings

    from deepeval.dataset.utils import convert_goldens_to_test_cases
    from deepeval.evaluate.expectations import _SingleTurnExpectations
    from deepeval.metrics import HallucinationMetric
    rows = _issue24_rows()
    with scratch() as tmp:
        export(rows, tmp / f"set.{variant}")
        cases = {c.name: c for c in convert_goldens_to_test_cases(load(deepeval, tmp / f"set.{variant}"))}
    conditions, prompt = _SingleTurnExpectations()._prepare(cases["rubric"])
    assert [(c["kind"], c["condition"]) for c in conditions] == [
        ("must", "Answers rubric."), ("must", "Apologises once"), ("must", "Offers the credit"),
        ("must_not", "Blames the carrier")]
    assert "Apologises once" in prompt
    grounded = cases["grounded"]
    assert grounded.context == ["Refunds post 5-7 business days.", "Receipts are required."]
    grounded.actual_output = "Five days."
    judge = _offline_judge()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its notice that the score direction changed
        metric = HallucinationMetric(model=judge, async_mode=False)
    with pytest.raises(_Seen):
        metric.measure(grounded, _show_indicator=False)
    assert "Refunds post 5-7 business days." in judge.prompts[0] and "Receipts are required." in judge.prompts[0]


def test_regression_a_rubric_reads_back_from_deepeval_as_written(deepeval):
    """Issue 24: the two directions agree: a golden's `must` read without evalconv's carrier (as a
    file DeepEval made) gives back the expected behaviour and the criteria the writer wrote."""
    from deepeval.dataset.golden import Golden
    rows = [r for r in _issue24_rows() if r.id in ("rubric", "grounded")]
    with scratch() as tmp:
        export(rows, tmp / "set.json")
        goldens = load(deepeval, tmp / "set.json")
        bare = [Golden(**{**g.model_dump(exclude={"additional_metadata"}), "additional_metadata": None})
                for g in goldens]  # what push/pull or a hand copy leaves: no carried row
        path = Path(deepeval.EvaluationDataset(goldens=bare).save_as("json", str(tmp), file_name="bare"))
        back = {r.id: r for r in evalconv.read(str(path), from_="deepeval").rows}
    for row in rows:
        case = back[row.id].case
        assert case["expectedBehavior"] == row.case["expectedBehavior"]
        assert case.get("evaluationCriteria") == row.case.get("evaluationCriteria")
        assert case.get("unacceptableBehavior") == row.case.get("unacceptableBehavior")
    assert back["grounded"].metadata["referenceContexts"] == rows[1].metadata["referenceContexts"]


@pytest.mark.parametrize("file_type", ["json", "jsonl", "csv"])
def test_regression_deepeval_load_and_save_as_of_an_untouched_export_is_no_edit(deepeval, file_type):
    """Issue 24: DeepEval's own load-then-save_as turns `expected_tools: []` into null, which read
    back as an edit deleting the expected value of the "call no tool" case."""
    rows = _issue24_rows()
    with scratch() as tmp:
        export(rows, tmp / "set.json")
        dataset = deepeval.EvaluationDataset()
        dataset.add_goldens_from_json_file(str(tmp / "set.json"))
        saved = Path(dataset.save_as(file_type, str(tmp), file_name="resaved"))
        if file_type == "json":
            assert [g["expected_tools"] for g in jsonvalue.loads(saved.read_text("utf-8"))][2] is None
        result = evalconv.read(str(saved), from_="deepeval")
    assert "edited" not in result.report.to_json(), result.report.to_json().get("edited")
    assert result.rows == rows


def test_regression_every_field_edited_with_deepeval_save_as_is_kept_and_named(deepeval, tmp_path, capsys):
    """Issue 24: context, comments and retrieval_context added in DeepEval were dropped while the
    CLI said "lossless". Every golden field a user touches, set with DeepEval's own objects and
    saved with save_as, comes back and is named on stderr with the row and the path."""
    from deepeval.test_case import ToolCall

    from conftest import run_cli
    rows = _issue24_rows()
    with scratch() as tmp:
        export(rows, tmp / "set.json")
        dataset = deepeval.EvaluationDataset()
        dataset.add_goldens_from_json_file(str(tmp / "set.json"))
        rubric, grounded, no_tools, ran = dataset.goldens
        rubric.expectations.must = ["Answers rubric.", "Apologises once", "Names the credit amount"]
        rubric.comments = "reviewed by QA"
        rubric.input = "Question rubric, edited?"
        grounded.context = ["Refunds post in 5 days."]
        grounded.expected_output = "5 business days"
        grounded.source_file = "kb/refunds.md"
        grounded.custom_column_key_values = {"tier": "gold"}
        grounded.additional_metadata["ticket"] = "ZD-7"
        no_tools.expected_tools = [ToolCall(name="lookup", input_parameters={"id": "7"})]
        no_tools.name = "one-tool"
        ran.retrieval_context = ["Policy v2."]
        ran.actual_output = "No"
        ran.tools_called = [ToolCall(name="search")]
        saved = Path(dataset.save_as("json", str(tmp), file_name="edited"))
        code, err = run_cli([str(saved), "--from", "deepeval", "--to", "jsonl", "-o", str(tmp_path / "back.jsonl")],
                            capsys)
    assert code == 0, err
    back = {r["id"]: r for r in map(jsonvalue.loads, (tmp_path / "back.jsonl").read_text("utf-8").splitlines())}
    assert back["rubric"]["input"] == "Question rubric, edited?"
    assert back["rubric"]["metadata"]["case"]["evaluationCriteria"] == ["Apologises once", "Names the credit amount"]
    assert back["rubric"]["metadata"]["deepeval"] == {"comments": "reviewed by QA"}
    assert back["grounded"]["metadata"]["referenceContexts"] == ["Refunds post in 5 days."]
    assert back["grounded"]["expected"] == "5 business days"
    assert back["grounded"]["metadata"]["deepeval"] == {"source_file": "kb/refunds.md",
                                                        "custom_column_key_values": {"tier": "gold"},
                                                        "additional_metadata": {"ticket": "ZD-7"}}
    assert back["one-tool"]["expected"] == [{"name": "lookup", "arguments": {"id": "7"}}]
    assert back["ran"]["metadata"]["deepeval_run"] == {"actual_output": "No", "retrieval_context": ["Policy v2."],
                                                       "tools_called": [{"name": "search", "type": "FUNCTION"}]}
    for row_id, path in [("rubric", "$.input"), ("rubric", "$.metadata.case.evaluationCriteria"),
                         ("rubric", "$.metadata.deepeval.comments"), ("grounded", "$.metadata.referenceContexts"),
                         ("grounded", "$.expected"), ("grounded", "$.metadata.deepeval.source_file"),
                         ("grounded", "$.metadata.deepeval.custom_column_key_values"),
                         ("grounded", "$.metadata.deepeval.additional_metadata"), ("no-tools", "$.id"),
                         ("no-tools", "$.expected"), ("ran", "$.metadata.deepeval_run.retrieval_context"),
                         ("ran", "$.metadata.deepeval_run.actual_output"), ("ran", "$.metadata.deepeval_run.tools_called")]:
        assert f"row '{row_id}' {path}: " in err, (row_id, path, err)
    assert "13 edits in the deepeval file taken (listed above)" in err


def test_regression_deepeval_4_3_metadata_is_read_without_its_deprecation_warning(deepeval):
    """Issue 26 item 16: DeepEval 4.3 warns that a test case's `additional_metadata` is deprecated
    (`metadata` now). Goldens still hold `additional_metadata` (4.3.1's Golden model and loaders),
    so evalconv writes that; DeepEval's own conversion hands it to the test case as `metadata`,
    which the documented metric reads without a warning; a golden file naming it `metadata` reads too."""
    import warnings

    from deepeval.dataset.golden import Golden
    from deepeval.dataset.utils import convert_goldens_to_test_cases
    row = _case_row("set", "acceptable-set", ["approved", "under_review"])
    assert "additional_metadata" in Golden.model_fields and "metadata" not in Golden.model_fields
    with scratch() as tmp:
        export([row], tmp / "set.json")
        [case] = convert_goldens_to_test_cases(load(deepeval, tmp / "set.json"))
        renamed = [{("metadata" if k == "additional_metadata" else k): v
                    for k, v in g.items()} for g in jsonvalue.loads((tmp / "set.json").read_text("utf-8"))]
        (tmp / "renamed.json").write_text(jsonvalue.dumps(renamed), "utf-8")
        assert evalconv.read(str(tmp / "renamed.json"), from_="deepeval").rows == [row]
    case.actual_output = "under_review"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        metric = _membership_metric()()
        assert metric.measure(case) == 1.0


def test_regression_a_conversational_golden_saved_by_deepeval_keeps_its_turn_edits(deepeval):
    """Issue 24: DeepEval's save_as writes every turn field (nulls too); an untouched chat set reads
    back with no edit, and a turn edited with DeepEval's own objects keeps what was added."""
    from deepeval.test_case import ToolCall
    chat = {"messages": [{"role": "user", "content": "Refund?"}, {"role": "assistant", "content": "Which order?"}]}
    rows = [Row.from_json({"id": f"c{i}", "input": chat, "metadata": {"case": {
        "caseId": f"c{i}", "oracleType": "expected-behavior-only", "expectedBehavior": "Asks for the order.",
        "provenance": "expert-authored", "scenario": "A refund request."}}}) for i in range(2)]
    with scratch() as tmp:
        export(rows, tmp / "set.json")
        dataset = deepeval.EvaluationDataset()
        dataset.add_goldens_from_json_file(str(tmp / "set.json"))
        untouched = evalconv.read(dataset.save_as("json", str(tmp), file_name="same"), from_="deepeval")
        dataset.goldens[0].turns[1].tools_called = [ToolCall(name="lookup_order")]
        dataset.goldens[1].scenario = "A refund request for order 7."
        edited = evalconv.read(dataset.save_as("json", str(tmp), file_name="edited"), from_="deepeval")
    assert untouched.rows == rows and "edited" not in untouched.report.to_json()
    assert edited.rows[0].input["messages"][1]["tools_called"][0]["name"] == "lookup_order"
    assert edited.rows[1].case["scenario"] == "A refund request for order 7."
    assert {(e["path"], tuple(e["ids"])) for e in edited.report.to_json()["edited"]} == {
        ("$.input", ("c0",)), ("$.metadata.case.scenario", ("c1",))}
