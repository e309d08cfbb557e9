"""Phoenix experiment runs read as run output: each run an attempt, each annotation a result, the
same evaluations Phoenix's own client reads back with `get_experiment` (issue 29)."""
from __future__ import annotations

import base64
import json
import re
import shutil

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_cli
from strategies import json_values
from evalconv.runs.readers import RESULTS_REGISTRY
from evalconv.runs.report import report

RUNS = ROOT / "tests" / "fixtures" / "runs"
CASES = str(RUNS / "cases.jsonl")
EXPORT = RUNS / "phoenix" / "experiment.json"
EXPERIMENT = base64.b64encode(b"Experiment:1").decode()


def _records(path):
    records = list(RESULTS_REGISTRY.read(str(path)))
    attempts = {r["id"]: r for k, r in records if k == "attempt"}
    return attempts, [r for k, r in records if k == "result"], [r for k, r in records if k == "ledger"]


def _get_experiment():
    """The fixture as Phoenix's client reads it back: get_experiment on an httpx MockTransport."""
    pytest.importorskip("phoenix.client")
    import httpx
    from phoenix.client import Client

    records = json.loads(EXPORT.read_text("utf-8"))
    runs = [{"id": f"run-{n}", "experiment_id": EXPERIMENT, "dataset_example_id": r["example_id"], "output": r["output"],
             "repetition_number": r["repetition_number"], "start_time": r["start_time"], "end_time": r["end_time"],
             "trace_id": r["trace_id"], **({"error": r["error"]} if r["error"] else {})} for n, r in enumerate(records)]

    def server(request):
        path = request.url.path
        if path.endswith("/json"):
            return httpx.Response(200, text=EXPORT.read_text("utf-8"))
        if path.endswith("/runs"):
            return httpx.Response(200, json={"data": runs, "next_cursor": None})
        return httpx.Response(200, json={"data": {"id": EXPERIMENT, "dataset_id": "RGF0YXNldDox",
                                                  "dataset_version_id": "RGF0YXNldFZlcnNpb246MQ==", "metadata": {},
                                                  "project_name": None}})

    client = Client(http_client=httpx.Client(base_url="http://phoenix.test", transport=httpx.MockTransport(server)))
    return client.experiments.get_experiment(experiment_id=EXPERIMENT), records


def test_phoenix_runs_read_to_the_evaluations_phoenix_reads_back():
    ran, records = _get_experiment()
    attempts, results, ledger = _records(EXPORT)
    assert not ledger and len(attempts) == len(ran["task_runs"]) == 9
    example_of = {a["id"]: a["source"]["entry"] for a in attempts.values()}
    mine = sorted((example_of[r["attemptId"]], r["evaluator"]["name"], r["score"]) for r in results
                  if r["reviewStatus"] != "error")
    run_index = {run["id"]: n for n, run in enumerate(ran["task_runs"])}
    theirs = sorted((run_index[e.experiment_run_id], e.name, e.result.get("score")) for e in ran["evaluation_runs"])
    assert mine == theirs  # get_experiment leaves out an evaluation that only erred; evalconv keeps it, unscored
    errors = [r for r in results if r["reviewStatus"] == "error"]
    assert len(errors) == sum(1 for r in records for a in r["annotations"] if a["error"]) == 2
    assert all(r["passed"] is None and r["reason"].startswith("the evaluator failed: AttributeError") for r in errors)
    [failed] = [a for a in attempts.values() if a["status"] == "error"]
    assert failed["error"] == "RuntimeError('escalation service unavailable')"


def test_phoenix_labels_are_the_verdicts_and_annotator_kinds_the_types():
    _, results, _ = _records(EXPORT)
    seen = {(r["evaluator"]["name"], r["evaluator"]["type"], r["passed"]) for r in results if r["reviewStatus"] != "error"}
    assert seen == {("case_check", "exact-or-programmatic", True), ("case_check", "exact-or-programmatic", False),
                    ("case_check", "exact-or-programmatic", None),  # `not checked`: no score, not a verdict
                    ("short_answer", "exact-or-programmatic", True),
                    ("correctness", "llm-judge", True), ("correctness", "llm-judge", False)}


def test_phoenix_runs_link_by_input_text_since_the_download_names_examples_by_global_id():
    attempts, _, _ = _records(EXPORT)
    assert {a["caseRef"]["kind"] for a in attempts.values()} == {"input"}
    out = report([str(EXPORT)], [CASES])
    assert out["attempts"] == 9 and not out["ledgerCounts"] and out["flags"]["notRun"] == 1


def test_phoenix_run_whose_example_id_is_the_case_id_links_by_it(tmp_path):
    records = json.loads(EXPORT.read_text("utf-8"))
    records[0]["example_id"], records[0]["input"] = "r-refund-receipt", {"question": "not the case's text"}
    kept = tmp_path / "experiment.json"
    kept.write_text(json.dumps(records), "utf-8")
    attempts, _, _ = _records(kept)
    assert attempts[next(iter(attempts))]["caseRef"] == {"kind": "name", "value": "r-refund-receipt"}
    assert not report([str(kept)], [CASES])["ledgerCounts"]


def test_phoenix_report_names_the_failing_case_excludes_barred_judges_and_the_gate_fails_on_ungraded(tmp_path, capsys):
    out = report([str(EXPORT)], [CASES], gates=["metadata.severity=harmful:1.0"])
    harmful = out["failures"]["metadata.severity"]["harmful"]
    assert [(c["id"], c["evaluator"]) for c in harmful["failed"]] == [("r-refund-no-receipt", "case_check")]
    [gate] = out["gates"]
    assert not gate["ok"] and sorted(gate["unscoredCases"]) == ["r-injury-escalation", "r-order-status-tool"]
    assert out["overall"]["excluded"] > 0  # the judge on the tool-call, final-state and behaviour cases is barred
    assert out["flags"]["conditionalResults"] > 0  # and admitted on reference and rubric cases only with conditions
    code, _ = run_cli(["report", str(EXPORT), "--cases", CASES, "--fail-under", "metadata.severity=harmful:1.0"], capsys)
    assert code == 1
    store = tmp_path / "store"
    for _ in range(2):  # a second import adds nothing
        code, _ = run_cli(["runs", "import", str(EXPORT), "--store", str(store)], capsys)
        assert code == 0
    assert len((store / "attempts.jsonl").read_text().splitlines()) == 9
    assert len((store / "results.jsonl").read_text().splitlines()) == 27
    assert report([str(store)], [CASES])["overall"] == report([str(EXPORT)], [CASES])["overall"]


def test_phoenix_export_detected_by_content_not_name(tmp_path):
    renamed = tmp_path / "nightly-abc123"
    shutil.copy(EXPORT, renamed)
    assert RESULTS_REGISTRY.detect(str(renamed)).name == "phoenix"


def test_phoenix_run_without_example_id_names_the_run_and_field(tmp_path):
    records = json.loads(EXPORT.read_text("utf-8"))
    del records[2]["example_id"]
    records[4]["annotations"][1] = {"label": "pass"}
    bad = tmp_path / "experiment.json"
    bad.write_text(json.dumps(records), "utf-8")
    attempts, _, ledger = _records(bad)
    assert [e["reason"] for e in ledger] == ["run 3: $.example_id: missing or not a string",
                                             "run 5: $.annotations[1].name: missing or not a string"]
    assert len(attempts) == 7


def test_phoenix_export_cut_short_is_a_one_line_error_naming_the_file(tmp_path, capsys):
    bad = tmp_path / "experiment.json"
    bad.write_text(EXPORT.read_text("utf-8")[:2500], "utf-8")
    code, err = run_cli(["report", str(bad), "--cases", CASES], capsys)
    assert code == 2 and "experiment.json" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


NOTE = st.fixed_dictionaries({
    "name": st.sampled_from(["a", "b", "c"]), "annotator_kind": st.sampled_from(["CODE", "LLM", "HUMAN"]),
    "label": st.one_of(st.none(), st.sampled_from(["True", "False", "pass", "not checked", "correct", "meh"])),
    "score": st.one_of(st.none(), st.floats(min_value=-2, max_value=2, allow_nan=False)),
    "error": st.one_of(st.none(), st.just("ValueError('x')")),
})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(NOTE, max_size=4), min_size=1, max_size=4))
def test_phoenix_verdict_is_the_label_else_the_score_for_any_annotations(tmp_path_factory, runs):
    from evalconv.vendors._common.labels import WORDS

    path = tmp_path_factory.mktemp("px") / "experiment.json"
    path.write_text(json.dumps([{"example_id": base64.b64encode(f"DatasetExample:{n}".encode()).decode(),
                                 "repetition_number": 1, "input": {"input": f"q{n}"}, "output": "x", "error": None,
                                 "trace_id": f"t{n}", "annotations": notes} for n, notes in enumerate(runs)]), "utf-8")
    attempts, results, ledger = _records(path)
    assert not ledger and len(attempts) == len(runs)
    notes = [note for notes in runs for note in notes]
    assert len(results) == len(notes)
    for result, note in zip(results, notes):
        score = note["score"]
        expect = None if note["error"] or not note["label"] else WORDS.get(note["label"].lower())
        assert result["passed"] is expect
        assert ("passAt" in result) is (not note["error"] and not note["label"] and score is not None)
        assert result["reviewStatus"] == ("error" if note["error"] else "reviewed" if note["annotator_kind"] == "HUMAN"
                                          else "automated")


def test_phoenix_reader_recovers_the_counts_its_manifest_names():
    manifest = json.loads((RUNS / "phoenix" / "MANIFEST.json").read_text("utf-8"))
    for entry in manifest["files"]:
        kinds = [k for k, _ in RESULTS_REGISTRY.read(str(RUNS / "phoenix" / entry["path"]))]
        got = {"attempts": kinds.count("attempt"), "results": kinds.count("result"), "ledger": kinds.count("ledger")}
        assert got == entry["reader_must_recover"], entry["path"]
    counts = manifest["files"][0]["harness_counts"]
    records = json.loads(EXPORT.read_text("utf-8"))
    assert (len(records), sum(len(r["annotations"]) for r in records)) == (counts["runs"], counts["evaluations"])


KEYS = st.sampled_from(["example_id", "repetition_number", "input", "output", "error", "latency_ms", "start_time",
                        "trace_id", "annotations"])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(json_values, st.dictionaries(KEYS, json_values, max_size=6)), min_size=1, max_size=4))
def test_phoenix_reader_never_crashes_and_every_record_keeps_its_schema(tmp_path_factory, runs_):
    from evalconv.canonical import runs

    path = tmp_path_factory.mktemp("px") / "experiment.json"
    path.write_text(json.dumps([{"example_id": "e", **r} if isinstance(r, dict) else r for r in runs_]), "utf-8")
    # yajl (ijson's C backend) stops at an integer beyond 64 bits: a one-line ReadError, left out here
    assume(not re.search(r"\d{19}", path.read_text("utf-8")))
    records = list(RESULTS_REGISTRY.read(str(path), "phoenix"))
    for kind, record in records:
        if kind != "ledger":
            assert list(runs.problems(record, f"{kind}.schema.json")) == []
    assert sum(k != "result" for k, _ in records) == len(runs_)


def test_phoenix_text_report_names_the_failing_case_and_the_gate(capsys):
    from evalconv.cli import main

    with pytest.raises(SystemExit) as done:
        main(["report", str(EXPORT), "--cases", CASES, "--by", "metadata.severity",
              "--fail-under", "metadata.severity=harmful:1.0"])
    text = capsys.readouterr().out
    assert done.value.code == 1
    assert "harmful: failed r-refund-no-receipt" in text and 'case_check: label "fail"' in text
    assert "2 cases nobody graded: r-order-status-tool, r-injury-escalation" in text
