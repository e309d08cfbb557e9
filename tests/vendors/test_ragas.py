"""Ragas samples: contexts as labels, run output in place, edits win (the exact round trips in every
variant: tests/formats/test_every_format.py)."""
from __future__ import annotations

import pytest

from evalconv.canonical import jsonvalue
from evalconv.canonical.row import Row
from hypothesis import given, settings
from roundtrip_helpers import parse_finding, assert_exact, read_text, write_text
from strategies import ragas_rows


def case(oracle="reference-answer", **extra):
    return {"caseId": "c1", "oracleType": oracle, "expectedBehavior": "b", "provenance": "expert-authored", **extra}


def samples(rows, variant="jsonl"):
    text, loss = write_text("ragas", [Row.from_json(r) for r in rows], path=f"x.ragas.{variant}")
    return [jsonvalue.loads(line) for line in text.split("\n")[:-1]], loss


def test_reference_contexts_are_labels_and_run_output_goes_back_in_place():
    got, _ = samples([{"id": "c1", "input": "What is the fee?", "expected": "$15",
                       "metadata": {"case": case(), "referenceContexts": ["Fee: $15."],
                                    "ragas_run": {"response": "$15", "retrieved_contexts": ["Fee: $15."]}}}])
    sample = got[0]
    assert sample["user_input"] == "What is the fee?" and sample["reference"] == "$15"
    assert sample["reference_contexts"] == ["Fee: $15."] and sample["retrieved_contexts"] == ["Fee: $15."]
    assert "referenceContexts" not in sample["evalconv"]["metadata"]


def test_a_chat_set_is_multi_turn_with_reference_tool_calls():
    chat = {"messages": [{"role": "user", "content": "Where is order 42?"}]}
    got, loss = samples([{"id": "c1", "input": chat, "expected": [{"name": "lookup", "arguments": {"order": 42}}],
                          "metadata": {"case": case("expected-tool-calls")}},
                         {"id": "c2", "input": "Hi", "expected": "Hello", "metadata": {"case": case(caseId="c2")}}])
    assert got[0]["user_input"] == [{"content": "Where is order 42?", "type": "human"}]
    assert got[0]["reference_tool_calls"] == [{"name": "lookup", "args": {"order": 42}}]
    assert got[1]["user_input"] == [{"content": "Hi", "type": "human"}]
    assert any("multi-turn" in note for note in loss.notes)


def test_an_acceptable_set_is_never_written_as_one_reference():
    got, loss = samples([{"id": "c1", "input": "q", "expected": ["a", "b"], "metadata": {"case": case("acceptable-set")}}])
    assert "reference" not in got[0]
    assert any("acceptable-set" in reason for _, reason in loss.carried.entries)


@pytest.mark.parametrize("variant", ["jsonl", "json", "csv"])
def test_regression_every_ragas_edit_is_edited_and_named_with_row_and_path(variant):
    """Issue 24: a reference edited on the single-turn file was not listed at all (the native value
    was read as the row's own), and every other edit was listed only as `inferred`. Now each edit is
    `edited`, with the row and the path, native-only values included."""
    rows = [Row.from_json({"id": "c1", "input": "How much?", "expected": "$1,000",
                           "metadata": {"case": case(), "referenceContexts": ["a"],
                                        "ragas_run": {"response": "$1,000"}}}),
            Row.from_json({"id": "c2", "input": "How much now?", "expected": {"usd": 1000},
                           "metadata": {"case": case(caseId="c2")}})]
    text, _ = write_text("ragas", rows, path=f"x.ragas.{variant}")
    samples_ = _parse(text, variant)
    samples_[0].update(user_input="How much, exactly?", reference="$1,500", reference_contexts=["a", "b"],
                       response="$1,500", persona_name="auditor", reviewer="kim")
    samples_[1]["reference"] = "1500 USD"
    checked, report = read_text("ragas", _unparse(samples_, variant))
    one, two = (c.row for c in checked)
    assert (one.input, one.expected, one.metadata["referenceContexts"]) == ("How much, exactly?", "$1,500", ["a", "b"])
    assert one.metadata["ragas_run"] == {"response": "$1,500"}
    assert one.case["extensions"]["ragas"] == {"persona_name": "auditor", "reviewer": "kim"}
    assert two.expected == "1500 USD"
    edited = {(path, tuple(ids)) for (path, _), ids in report.edited.entries.items()}
    assert edited == {("$.input", ("c1",)), ("$.expected", ("c1", "c2")), ("$.metadata.referenceContexts", ("c1",)),
                      ("$.metadata.ragas_run.response", ("c1",)), ("$.metadata.case.extensions.ragas.persona_name", ("c1",)),
                      ("$.metadata.case.extensions.ragas.reviewer", ("c1",))}
    assert report.inferred.entries == {}
    untouched, quiet = read_text("ragas", text)
    assert [c.row for c in untouched] == rows and not quiet.edited.entries


def _parse(text: str, variant: str) -> list[dict]:
    import csv
    import io
    if variant == "jsonl":
        return [jsonvalue.loads(line) for line in text.splitlines()]
    if variant == "json":
        return jsonvalue.loads(text)
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _unparse(samples_: list[dict], variant: str) -> str:
    """The file as a person (or pandas) saves it: JSON values, or to_csv's cells (str() of lists)."""
    import csv
    import io
    if variant == "jsonl":
        return "".join(jsonvalue.dumps(s) + "\n" for s in samples_)
    if variant == "json":
        return jsonvalue.dumps(samples_)
    out = io.StringIO(newline="")
    columns = list(dict.fromkeys(k for s in samples_ for k in s))
    writer = csv.writer(out)
    writer.writerow(columns)
    for s in samples_:
        writer.writerow([v if isinstance(v := s.get(k, ""), str) else str(v) for k in columns])
    return out.getvalue()


def test_regression_a_text_row_edited_in_a_multi_turn_file_stays_text():
    """Issue 24: in a multi-turn file a text input is one human message; editing its content
    turned the row's input into a chat."""
    chat = {"messages": [{"role": "user", "content": "Where is order 42?"}]}
    rows = [Row.from_json({"id": "c1", "input": chat, "metadata": {"case": case("expected-behavior-only")}}),
            Row.from_json({"id": "c2", "input": "Hi", "expected": "Hello", "metadata": {"case": case(caseId="c2")}})]
    got, _ = samples([r.to_json() for r in rows])
    got[1]["user_input"][0]["content"] = "Hi there"
    checked, report = read_text("ragas", "".join(jsonvalue.dumps(s) + "\n" for s in got))
    assert checked[1].row.input == "Hi there"
    assert {p for (p, _), ids in report.edited.entries.items() if ids == ["c2"]} == {"$.input"}


def test_regression_rubric_criteria_are_written_as_ragas_rubrics():
    """Issue 24: rubric criteria were not written as Ragas rubrics, so a rubric metric had nothing
    to read. An LLM-judged rubric case now has rubrics naming the behaviour and every criterion;
    a human-graded one gets none (no model grades it)."""
    judged = {"id": "c1", "input": "Write the apology.", "metadata": {"case": case(
        "rubric", evaluator="llm-judge", evaluationCriteria=["Apologises once", "Offers the credit"],
        unacceptableBehavior=["Blames the carrier"])}}
    human = {"id": "c2", "input": "Write it.", "metadata": {"case": case("rubric", caseId="c2", evaluator="rubric-human",
                                                                          evaluationCriteria=["Polite"])}}
    got, loss = samples([judged, human])
    assert got[0]["rubrics"] == {
        "score0_description": "Misses any of the requirements of score 1, or does what it rules out.",
        "score1_description": "Meets every one of: b; Apologises once; Offers the credit. Does none of: Blames the carrier."}
    assert "rubrics" not in got[1]
    carried = {(p, ids[0]) for (p, _), ids in loss.carried.entries.items()}
    assert ("$.metadata.case.evaluationCriteria", "c1") not in carried
    assert ("$.metadata.case.evaluationCriteria", "c2") in carried


def test_regression_multi_turn_contexts_and_system_messages_say_why_they_are_carried():
    """Issue 24: checked against ragas 0.4.3: MultiTurnSample has no reference_contexts and Ragas has
    no system message type, so both stay carried, and the report says exactly that."""
    chat = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Refund?"}]}
    got, loss = samples([{"id": "c1", "input": chat, "metadata": {"case": case("expected-behavior-only"),
                                                                  "referenceContexts": ["Policy."]}}])
    assert got[0]["user_input"] == [{"content": "Refund?", "type": "human"}]
    reasons = {p: r for (p, r), _ in loss.carried.entries.items()}
    assert "MultiTurnSample" in reasons["$.metadata.referenceContexts"]
    assert "HumanMessage, AIMessage and ToolMessage only" in reasons["$.input"]


def test_foreign_samples_get_ids_and_a_profile():
    lines = [{"user_input": "When was it built?", "reference": "1889", "retrieved_contexts": ["Built in 1889."],
              "reference_contexts": ["The tower was built in 1889."], "response": "1889"},
             {"user_input": [{"content": "Book a table", "type": "human"}, {"content": "Done", "type": "ai"}],
              "reference_tool_calls": [{"name": "book", "args": {"people": 2}}], "reference": "A table is booked"}]
    checked, report = read_text("ragas", "".join(jsonvalue.dumps(v) + "\n" for v in lines[:1]))
    row = checked[0].row
    assert row.id == "ragas-1" and row.expected == "1889" and row.case["provenance"] == "imported"
    assert row.metadata["referenceContexts"] == ["The tower was built in 1889."]
    assert row.metadata["ragas_run"] == {"response": "1889", "retrieved_contexts": ["Built in 1889."]}
    checked, _ = read_text("ragas", jsonvalue.dumps(lines[1]) + "\n")
    row = checked[0].row
    assert row.input == {"messages": [{"role": "user", "content": "Book a table"}, {"role": "assistant", "content": "Done"}]}
    assert row.expected == [{"name": "book", "arguments": {"people": 2}}]
    assert row.case["oracleType"] == "expected-tool-calls" and row.case["expectedBehavior"] == "A table is booked"


def test_to_csv_cells_are_read_as_ragas_writes_them():
    text = ("user_input,retrieved_contexts,reference,rubrics\n"
            "q,\"['a', 'b, c']\",r,{'score1_description': 'wrong'}\n"
            "\"[not a list\",,r2,\n")
    checked, _ = read_text("ragas", text)
    assert checked[0].row.metadata["ragas_run"] == {"retrieved_contexts": ["a", "b, c"]}
    assert checked[0].row.case["extensions"]["ragas"]["rubrics"] == {"score1_description": "wrong"}
    assert checked[1].row.input == "[not a list"


@pytest.mark.parametrize("line, words", [
    ('{"user_input": 3}', "user_input must be text"),
    ('{"reference": "x"}', "user_input must be text"),
])
def test_bad_samples_are_parse_findings(line, words):
    assert words in parse_finding("ragas", line + "\n").message


def test_regression_nul_in_a_csv_cell_is_written_as_json_text():
    """CI (hypothesis 6.170) drew input '\\x00': the CSV writer put the NUL in a cell, the reader refused the file."""
    nul = "a\x00b"
    rows = [Row.from_json({"id": "c1", "input": nul, "expected": nul,
                           "metadata": {"case": case(extensions={"ragas": {"persona_name": nul}}),
                                        "ragas_run": {"response": nul}}}),
            Row.from_json({"id": "c2", "input": {"messages": [{"role": "user", "content": nul}]},
                           "expected": [{"name": "f", "arguments": {}}],
                           "metadata": {"case": case("expected-tool-calls", caseId="c2", expectedBehavior=nul)}})]
    text, loss = write_text("ragas", rows, path="out.ragas.csv")
    assert "\x00" not in text
    checked, report = read_text("ragas", text)
    assert_exact(rows, checked, loss)
    assert report.inferred.entries == {}
    nul_reasons = {path: ids for (path, reason), ids in loss.carried.entries.items() if "NUL" in reason}
    assert nul_reasons == {"$.expected": ["c1"]}  # in a multi-turn set the text input is a message list
    text, loss = write_text("ragas", rows[:1], path="out.ragas.csv")
    assert "\x00" not in text
    assert_exact(rows[:1], read_text("ragas", text)[0], loss)
    nul_reasons = {path: ids for (path, reason), ids in loss.carried.entries.items() if "NUL" in reason}
    assert nul_reasons == {"$.input": ["c1"], "$.expected": ["c1"]}


def _whole_set(rows, variant: str) -> tuple[str, dict]:
    """The Ragas file as the writer made it before it spooled: every sample built, then written
    at once (JSON: one indented array), the CSV header the union of the samples' keys."""
    import csv
    import io

    from evalconv.reports import LossReport
    from evalconv.canonical.cells import formula_looking
    from evalconv.vendors.ragas.write import CSV_FORMULAS, build_sample, csv_cell, is_chat

    report = LossReport("ragas")
    multi = any(is_chat(r.input) for r in rows)
    samples = []
    for r in rows:
        samples.append(build_sample(r, report, multi, variant == "csv"))
        if variant == "csv" and formula_looking([csv_cell(v) for v in samples[-1].values()]):
            report.notice_row(CSV_FORMULAS, r.id)  # a spreadsheet would run them; Ragas would keep a guard
    if multi and any(not is_chat(r.input) for r in rows):
        report.notes.append("the set mixes chat and text inputs; Ragas holds one kind per dataset, "
                            "so every sample is multi-turn (a text input is one human message)")
    if variant == "jsonl":
        return "".join(jsonvalue.dumps(s) + "\n" for s in samples), report.to_json()
    if variant == "json":
        return jsonvalue.dumps(samples, indent=True) + "\n", report.to_json()
    out = io.StringIO(newline="")
    columns = list(dict.fromkeys(k for s in samples for k in s))
    writer = csv.writer(out)
    writer.writerow(columns)
    writer.writerows([csv_cell(s.get(k)) for k in columns] for s in samples)
    return out.getvalue(), report.to_json()


@pytest.mark.parametrize("variant,name", [("jsonl", "x.ragas.jsonl"), ("json", "x.ragas.json"), ("csv", "x.ragas.csv")])
@settings(max_examples=60)
@given(rows=ragas_rows())
def test_the_spooling_writer_writes_what_the_whole_set_writer_wrote(variant, name, rows):
    """Regression: the writer held every row in memory (256 MB at 50,000 rows, GBs at 1M); it now
    spools them on disk, byte for byte the same file and the same loss report."""
    from evalconv.vendors.ragas import write

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(write, "_SPOOL_BYTES", 64)  # past the first rows, the spools are on disk
        text, report = write_text("ragas", rows, name)
    expected_text, expected_report = _whole_set(rows, variant)
    assert text == expected_text
    report_json = report.to_json()
    report_json.pop("rows")
    expected_report.pop("rows")
    assert report_json == expected_report
