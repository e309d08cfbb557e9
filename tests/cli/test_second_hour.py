"""The newcomer's second hour, through the CLI (issue 26, items 8, 9, 12, 13 and 16)."""
from __future__ import annotations

import json

from conftest import run_cli

SHEET = ("question,answer,oracle,tags,colors\n"
         "Which team?,refunds; billing,acceptable-set,a; b,red; blue; yellow\n"
         "Which team?,shipping,reference-answer,x,green\n"
         "What is 2+2?,4,reference-answer,,\n")


def _rows(path):
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


# ---------------------------------------------------------------- 8. list cells

def test_import_list_sep_splits_semicolon_lists(tmp_path, capsys):
    sheet = tmp_path / "messy.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "set.jsonl"
    code, err = run_cli(["import", str(sheet), "-o", str(out), "--list-sep", ";", "--list-sep", "colors=;"], capsys)
    assert code == 0, err
    first, second, _ = _rows(out)
    assert first["expected"] == ["refunds", "billing"]
    assert first["metadata"]["tags"] == ["a", "b"]
    assert first["metadata"]["colors"] == ["red", "blue", "yellow"]
    assert second["expected"] == "shipping"  # a reference answer is one text, never split
    assert "lists: colors split at ';' in 1 cell" in err and "lists: answer split at ';' in 1 cell" in err


def test_import_without_list_sep_says_how_to_split_a_semicolon_list(tmp_path, capsys):
    sheet = tmp_path / "messy.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "set.jsonl"
    code, err = run_cli(["import", str(sheet), "-o", str(out)], capsys)
    assert code == 0, err
    assert _rows(out)[0]["expected"] == ["refunds; billing"]
    assert "--list-sep 'answer=;'" in err and "--list-sep 'tags=;'" in err
    # and the flag it names does what it says
    code, err = run_cli(["import", str(sheet), "-o", str(out), "--force", "--list-sep", "answer=;"], capsys)
    assert code == 0 and _rows(out)[0]["expected"] == ["refunds", "billing"]


def test_list_sep_for_a_column_the_sheet_lacks_is_a_usage_error(tmp_path, capsys):
    sheet = tmp_path / "messy.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    code, err = run_cli(["import", str(sheet), "-o", str(tmp_path / "s.jsonl"), "--list-sep", "coolors=;"], capsys)
    assert code == 2 and "did you mean 'colors'" in err and not (tmp_path / "s.jsonl").exists()
    code, err = run_cli(["import", str(sheet), "-o", str(tmp_path / "s.jsonl"), "--list-sep", ";",
                         "--list-sep", ","], capsys)
    assert code == 2 and "COLUMN=SEP" in err


def test_list_sep_words_name_separators(tmp_path, capsys):
    sheet = tmp_path / "s.csv"
    sheet.write_text("question,tags\nQ?,a\tb\n", encoding="utf-8")
    out = tmp_path / "set.jsonl"
    code, err = run_cli(["import", str(sheet), "-o", str(out), "--list-sep", "tab"], capsys)
    assert code == 0, err
    assert _rows(out)[0]["metadata"]["tags"] == ["a", "b"]


def test_acceptable_set_as_one_pipe_cell_says_how_to_write_the_list(tmp_path, capsys):
    sheet = tmp_path / "set.csv"
    sheet.write_text("id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"
                     "r2,I was charged twice,refunds|billing,r2,acceptable-set,Routes it,expert-authored\n",
                     encoding="utf-8")
    code, err = run_cli(["validate", str(sheet)], capsys)
    assert code == 0 and "warning[expected-shape]" in err
    assert 'expected:json' in err and '["refunds","billing"]' in err  # the cell syntax of docs/csv-spec.md
    fixed = tmp_path / "fixed.csv"
    fixed.write_text("id,input,expected:json,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"
                     'r2,I was charged twice,"[""refunds"",""billing""]",r2,acceptable-set,Routes it,expert-authored\n',
                     encoding="utf-8")
    code, err = run_cli(["validate", str(fixed)], capsys)
    assert code == 0 and "expected-shape" not in err


# ---------------------------------------------------------------- 9. repeated inputs

def test_import_names_the_rows_that_repeat_an_input(tmp_path, capsys):
    sheet = tmp_path / "messy.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "set.jsonl"
    report = tmp_path / "import.json"
    code, err = run_cli(["import", str(sheet), "-o", str(out), "--report", str(report)], capsys)
    assert code == 0, err
    ids = [r["id"] for r in _rows(out)]
    assert "repeated input: 1 input is on more than one row" in err
    assert f"row 1 ({ids[0]}), row 2 ({ids[1]})" in err and ids[2] not in err.split("repeated input")[1].split("\n")[1]
    assert json.loads(report.read_text("utf-8"))["repeatedInputs"] == [[{"row": 1, "id": ids[0]}, {"row": 2, "id": ids[1]}]]


def test_import_without_repeats_says_nothing_of_them(tmp_path, capsys):
    sheet = tmp_path / "s.csv"
    sheet.write_text("question,answer\nA?,1\nB?,2\n", encoding="utf-8")
    code, err = run_cli(["import", str(sheet), "-o", str(tmp_path / "s.jsonl")], capsys)
    assert code == 0 and "repeated" not in err


# ---------------------------------------------------------------- 9. --by misspelt

def _starter_set(tmp_path, capsys):
    path = tmp_path / "set.csv"
    assert run_cli(["new", "customer-support", "-o", str(path)], capsys)[0] == 0
    return path


def test_stats_by_a_misspelt_field_is_a_usage_error_with_did_you_mean(tmp_path, capsys):
    path = _starter_set(tmp_path, capsys)
    html = tmp_path / "page.html"
    for given, meant in (("metadata.sevrity", "metadata.severity"), ("case.severity", "metadata.severity"),
                         ("metadata.oracleType", "case.oracleType")):
        code, err = run_cli(["stats", str(path), "--by", given, "--html", str(html)], capsys)
        assert code == 2 and f"did you mean '{meant}'" in err and "no row has this field" in err, (given, err)
        assert not html.exists()


def test_stats_by_a_bare_word_gets_the_field_it_names(tmp_path, capsys):
    path = _starter_set(tmp_path, capsys)
    code, err = run_cli(["stats", str(path), "--by", "severity"], capsys)
    assert code == 2 and "did you mean 'metadata.severity'" in err


def test_stats_by_a_field_only_the_rows_hold_is_suggested_from_them(tmp_path, capsys):
    sheet = tmp_path / "s.csv"
    sheet.write_text("question,colors\nQ1?,red\nQ2?,blue\n", encoding="utf-8")
    out = tmp_path / "set.jsonl"
    assert run_cli(["import", str(sheet), "-o", str(out)], capsys)[0] == 0
    code, err = run_cli(["stats", str(out), "--by", "metadata.colours"], capsys)
    assert code == 2 and "did you mean 'metadata.colors'" in err
    code, _ = run_cli(["stats", str(out), "--by", "metadata.colors"], capsys)
    assert code == 0


def test_stats_by_a_known_field_no_row_holds_is_still_a_slice(tmp_path, capsys):
    path = _starter_set(tmp_path, capsys)
    from evalconv.cli import main

    try:
        main(["stats", str(path), "--by", "case.retirementCondition", "--format", "json"])
    except SystemExit as done:
        assert done.code == 0
    assert set(json.loads(capsys.readouterr().out)["slices"]["case.retirementCondition"]) == {"(none)"}


def test_report_by_a_misspelt_field_is_a_usage_error_with_did_you_mean():
    from click.testing import CliRunner
    from conftest import ROOT
    from evalconv.cli import cli

    runs = ROOT / "tests" / "fixtures" / "runs"
    out = CliRunner().invoke(cli, ["report", str(runs / "promptfoo" / "results.json"), "--cases",
                                   str(runs / "cases.jsonl"), "--by", "metadata.sevrity"])
    assert out.exit_code == 2 and "did you mean 'metadata.severity'" in out.output
    out = CliRunner().invoke(cli, ["report", str(runs / "promptfoo" / "results.json"), "--cases",
                                   str(runs / "cases.jsonl"), "--by", "severity"])
    assert out.exit_code == 2 and "did you mean 'metadata.severity'" in out.output


# ---------------------------------------------------------------- 12. every command that writes prints the notices

def _notes(err):
    return sorted(line for line in err.splitlines() if line.startswith("evalconv: note: "))


def test_new_to_promptfoo_prints_the_notices_convert_prints(tmp_path, capsys):
    for family, expect in (("customer-support", "until a person grades them"), ("tool-using-agent", "tracing")):
        sheet = tmp_path / f"{family}.csv"
        assert run_cli(["new", family, "-o", str(sheet)], capsys)[0] == 0
        code, converted = run_cli([str(sheet), "--to", "promptfoo", "-o", str(tmp_path / f"{family}-c.yaml")], capsys)
        assert code == 0
        code, made = run_cli(["new", family, "--to", "promptfoo", "-o", str(tmp_path / f"{family}-n.yaml")], capsys)
        assert code == 0
        assert _notes(made) == _notes(converted) and any(expect in n for n in _notes(made)), (family, made)


def test_import_to_promptfoo_prints_the_notices_convert_prints(tmp_path, capsys):
    sheet = tmp_path / "messy.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    code, _ = run_cli(["import", str(sheet), "-o", str(tmp_path / "set.jsonl")], capsys)
    assert code == 0
    code, converted = run_cli([str(tmp_path / "set.jsonl"), "--to", "promptfoo", "-o", str(tmp_path / "c.yaml")], capsys)
    code2, imported = run_cli(["import", str(sheet), "--to", "promptfoo", "-o", str(tmp_path / "i.yaml")], capsys)
    assert code == code2 == 0
    assert _notes(imported) == _notes(converted) and _notes(imported)


def test_regression_imported_harmful_and_high_severities_are_warned_and_a_stats_gap(tmp_path, capsys):
    """Issue 26 item 9: imported severities `Harmful` and `high` validated clean while `stats` said
    there were no harmful cases. Now import and validate warn, naming the nearest documented value,
    and stats lists them beside the severities they leave empty."""
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("question,answer,severity\nCan I get a refund?,Yes within 30 days,Harmful\n"
                     "Where is my order?,Check the tracking page,high\n"
                     "How do I reset my password?,Use the sign-in link,cosmetic\n", encoding="utf-8")
    out = tmp_path / "set.jsonl"
    code, err = run_cli(["import", str(sheet), "-o", str(out)], capsys)
    assert code == 0 and "severity -> metadata.severity" in err
    for said in (err, run_cli(["validate", str(out)], capsys)[1]):
        assert "warning[off-vocabulary]: severity 'Harmful' is not one of cosmetic, wrong-answer, harmful: " \
               "did you mean 'harmful'?" in said
        assert "severity 'high' is not one of cosmetic, wrong-answer, harmful: did you mean 'harmful'?" in said
        assert "'cosmetic' is not one of" not in said
    from evalconv.cli import main

    try:
        main(["stats", str(out), "--format", "json"])
    except SystemExit as done:
        assert done.code == 0
    gaps = {g["code"]: g for g in json.loads(capsys.readouterr().out)["gaps"] if g["code"] in
            ("off-vocabulary", "missing-severity")}
    assert gaps["off-vocabulary"]["values"] == {"Harmful": 1, "high": 1}
    assert gaps["off-vocabulary"]["slice"] == "metadata.severity" and gaps["off-vocabulary"]["count"] == 2
    assert "'Harmful' (1; did you mean 'harmful'?)" in gaps["off-vocabulary"]["message"]
    assert "2 rows hold another severity" in gaps["missing-severity"]["message"]
    code, err = run_cli(["stats", str(out), "--fail-on", "off-vocabulary"], capsys)
    assert code == 1 and "gate failed: --fail-on off-vocabulary" in err
    code, err = run_cli(["stats", str(out), "--by", "severity"], capsys)
    assert code == 2 and "did you mean 'metadata.severity'" in err


def test_a_gate_of_true_or_a_documented_value_is_no_off_vocabulary_gap(tmp_path, capsys):
    rows = [{"id": f"g-{i}", "input": "Q?", "expected": "A", "metadata": {
        "gate": gate, "severity": "harmful", "case": {"caseId": f"g-{i}", "oracleType": "reference-answer",
                                                      "expectedBehavior": "Answers.", "provenance": "expert-authored"}}}
            for i, gate in enumerate([True, False, "release", "trend"])]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from evalconv.cli import main

    try:
        main(["stats", str(path), "--format", "json"])
    except SystemExit:
        pass
    assert "off-vocabulary" not in {g["code"] for g in json.loads(capsys.readouterr().out)["gaps"]}
