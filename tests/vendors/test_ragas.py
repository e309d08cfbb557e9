"""Ragas samples: contexts as labels, run output in place, edits win (the exact round trips in every
variant: tests/test_every_format.py)."""
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


def test_regression_an_edited_reference_wins_and_is_said():
    # Native-only values (a text reference, reference contexts) are simply read as edited.
    got, _ = samples([{"id": "c1", "input": "How much?", "expected": "$1,000", "metadata": {"case": case(),
                                                                                             "referenceContexts": ["a"]}}])
    got[0]["reference"] = "$1,500"
    got[0]["reference_contexts"] = ["a", "b"]
    checked, report = read_text("ragas", jsonvalue.dumps(got[0]) + "\n")
    assert checked[0].row.expected == "$1,500" and checked[0].row.metadata["referenceContexts"] == ["a", "b"]
    # A value carried beside its native text: the edited text wins, and the read says so.
    got, _ = samples([{"id": "c1", "input": "How much?", "expected": {"usd": 1000}, "metadata": {"case": case()}}])
    got[0]["reference"] = "1500 USD"
    checked, report = read_text("ragas", jsonvalue.dumps(got[0]) + "\n")
    assert checked[0].row.expected == "1500 USD"
    assert "$.expected" in {p for p, _ in report.inferred.entries}


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
