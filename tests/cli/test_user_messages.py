"""Issue 12 §1, §3-§5, through the CLI as a new user meets it: sheets from and for Excel, errors
that point the way, the terminal saying what matters, and never a traceback."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT, row, run_main
from evalconv import api
from evalconv.cli import INTERNAL_ERROR, cli

REQUIRED = ["id", "input", "expected", "case.caseId", "case.oracleType", "case.expectedBehavior", "case.provenance"]
CELLS = ["r-1", "Où est ma commande ; 日本?", "Lundi", "r-1", "reference-answer", "Donne la date.", "expert-authored"]


run = run_main  # the CLI in this process: exit code, stdout, stderr


def sheet(tmp_path, delimiter: str, *, name: str = "excel.csv", bom: bool = True) -> str:
    cells = [f'"{c}"' if delimiter in c else c for c in CELLS]
    text = delimiter.join(REQUIRED) + "\r\n" + delimiter.join(cells) + "\r\n"
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return str(path)


# ---------------------------------------------------------------- §3 sheets from and for Excel

@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_european_excel_sheet_is_read_by_its_header(delimiter, tmp_path, capsys):
    code, out, err = run([sheet(tmp_path, delimiter), "--to", "jsonl"], capsys)
    assert code == 0, err
    value = json.loads(out)
    assert value["input"] == CELLS[1] and value["metadata"]["case"]["oracleType"] == "reference-answer"


def test_delimiter_can_be_forced_and_a_wrong_one_is_named(tmp_path, capsys):
    path = sheet(tmp_path, ";")
    assert run([path, "--to", "jsonl", "--delimiter", ";"], capsys)[0] == 0
    code, _, err = run(["validate", path, "--delimiter", ","], capsys)
    assert code == 2 and "the delimiter looks wrong" in err and "--delimiter" in err
    piped = tmp_path / "piped.csv"
    piped.write_text("|".join(REQUIRED) + "\n" + "|".join(CELLS) + "\n", encoding="utf-8")
    code, _, err = run(["validate", str(piped)], capsys)
    assert code == 2 and "delimiter looks wrong" in err and err.count("\n") == 1
    assert run(["validate", str(piped), "--delimiter", "|"], capsys)[0] == 0
    code, _, err = run(["validate", str(piped), "--delimiter", "ab"], capsys)
    assert code == 2 and "--delimiter takes one character" in err


def test_excel_safe_output_has_a_bom_and_reads_back_identical(tmp_path, capsys):
    value = row("r-1", expected=("=SUM(A1) für 日本",))
    value["input"] = "Ça va? 🙂"
    value["metadata"]["reason"] = "-negative start"
    src = tmp_path / "set.jsonl"
    src.write_text(json.dumps(value, ensure_ascii=False) + "\n", encoding="utf-8")
    assert run([str(src), "--to", "csv", "--excel-safe", "-o", str(tmp_path / "x.csv")], capsys)[0] == 0
    data = (tmp_path / "x.csv").read_bytes()
    assert data.startswith(b"\xef\xbb\xbfid,input,expected,") and b"\r\n" in data
    assert "'=SUM(A1) für 日本".encode("utf-8") in data
    code, out, _ = run([str(tmp_path / "x.csv"), "--to", "jsonl"], capsys)
    assert code == 0 and json.loads(out) == value


# ---------------------------------------------------------------- §4 errors that point the way

def test_every_unknown_column_at_once_with_the_closest_name(tmp_path, capsys):
    path = tmp_path / "typos.csv"
    path.write_text("ID,input,case.caseId,case.oracle_type,case.expectedBehavior,case.provenance,"
                    "case.evalutor,notes\n", encoding="utf-8")
    code, _, err = run(["validate", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1
    for typo, meant in (("ID", "id"), ("case.oracle_type", "case.oracleType"), ("case.evalutor", "case.evaluator")):
        assert f"'{typo}' (did you mean '{meant}'?)" in err
    assert "4 unknown columns" in err and "'notes'" in err and "metadata.<key>" in err


def test_enum_values_get_did_you_mean(tmp_path, capsys):
    path = tmp_path / "enums.csv"
    path.write_text("id,input,case.caseId,case.oracleType,case.expectedBehavior,case.provenance\n"
                    "a,q,a,Rubric,x,expert-authored\nb,q,b,refrence-answer,x,Expert-Authored\n", encoding="utf-8")
    code, out, err = run(["validate", str(path)], capsys)
    assert code == 1
    assert "\"Rubric\" is not a valid oracleType (did you mean 'rubric'?)" in err
    assert "(did you mean 'reference-answer'?)" in err and "(did you mean 'expert-authored'?)" in err
    assert "2 rows, 3 errors, 0 warnings: INVALID" in out


@pytest.mark.parametrize("args, first", [(["init"], None), (["lint", "--to", "jsonl"], None),
                                         (["valdate", "x.csv"], "validate"), (["convrt", "x.csv"], "convert")])
def test_a_mistyped_command_is_not_taken_for_a_file(args, first, capsys):
    code, _, err = run(args, capsys)
    assert code == 2 and f"'{args[0]}' is neither a file or folder here nor a command" in err
    assert "Missing option" not in err and "no such file" not in err
    listed = err.split("the commands are ", 1)[1]
    assert all(name in listed for name in ("convert", "validate", "formats", "schema", "roundtrip", "stats"))
    assert listed.split(" (", 1)[0].split(", ") == sorted(cli.commands)  # one order, whatever was typed
    if first:
        assert f"(did you mean '{first}'?)" in err


def test_a_missing_file_is_still_a_missing_file(tmp_path, capsys):
    code, _, err = run([str(tmp_path / "gone.csv"), "--to", "jsonl"], capsys)
    assert code == 2 and "no such file" in err


def test_a_mistyped_format_names_the_closest_and_lists_all_sorted(capsys):
    """Issue 26 item 16: "known: ..." lists came in another order for each typo."""
    from evalconv.registry import REGISTRY

    lists = []
    for typo in ("promptfo", "jsnl"):
        code, _, err = run([str(ROOT / "docs" / "examples" / "support-sheet.csv"), "--to", typo], capsys)
        assert code == 2 and f"unknown format '{typo}' (did you mean" in err
        lists.append(err.split("(known: ", 1)[1].split(")", 1)[0])
    assert lists[0] == lists[1] == ", ".join(sorted(REGISTRY.names()))


def test_summary_lines_speak_plain_english(tmp_path, capsys):
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(row("a")) + "\n", encoding="utf-8")
    _, out, _ = run(["validate", str(src)], capsys)
    assert "1 row, 0 errors, 0 warnings: ok" in out
    _, _, err = run([str(src), "--to", "jsonl", "-o", str(tmp_path / "o.jsonl")], capsys)
    assert "1 row written" in err
    _, _, err = run([str(src), "--to", "deepeval", "-o", str(tmp_path / "o.deepeval.json")], capsys)
    assert "(s)" not in err and "1 rows" not in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**row("a"), "extra": 1}) + "\n", encoding="utf-8")
    _, _, err = run([str(bad), "--to", "jsonl", "-o", str(tmp_path / "b.jsonl")], capsys)
    assert "1 of 1 row invalid (1 error)" in err


def test_the_judge_message_says_what_to_do_in_this_projects_terms(tmp_path, capsys):
    src = tmp_path / "judge.jsonl"
    src.write_text(json.dumps(row("a", evaluator="llm-judge")) + "\n", encoding="utf-8")
    _, _, err = run(["validate", str(src)], capsys)
    assert "judge-needs-validation" in err and "judge-validation-report-builder" not in err
    assert "route to" not in err and "human labels" in err and "grade a sample" in err


# ---------------------------------------------------------------- §5 the terminal says what matters

def test_folder_conversion_prints_each_files_warnings(tmp_path, capsys):
    folder = tmp_path / "sets"
    folder.mkdir()
    rows = [row(f"j{i}", evaluator="llm-judge") for i in range(5)]
    (folder / "judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "clean.jsonl").write_text(json.dumps(row("c")) + "\n", encoding="utf-8")
    code, _, err = run([str(folder), "--to", "jsonl", "-o", str(tmp_path / "out")], capsys)
    assert code == 0
    assert "evalconv: judged.jsonl: 5 warnings" in err and "clean.jsonl: " not in err
    assert err.count("warning[judge-needs-validation]") == 3 and "... and 2 more warnings" in err


def test_promptfoo_says_on_stderr_how_many_tests_fail_until_a_person_grades_them(tmp_path, capsys):
    rows = [row(f"h{i}", oracle="expected-behavior-only", expected=(), evaluator="human-expert",
                reviewerExpertise="support lead") for i in range(2)] + [row("auto")]
    src = tmp_path / "set.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run([str(src), "--to", "promptfoo", "-o", str(tmp_path / "t.yaml"), "--report",
                        str(tmp_path / "r.json")], capsys)
    assert code == 0
    person, chosen = [line for line in err.splitlines() if line.startswith("evalconv: note:")]
    assert "promptfoo will fail 2 tests until a person grades them (h0, h1)" in person
    assert "1 row (auto) named no evaluator; promptfoo will grade it with exact-or-programmatic" in chosen
    assert json.loads((tmp_path / "r.json").read_text())["notices"] == \
        [line.removeprefix("evalconv: note: ") for line in (person, chosen)]


# ---------------------------------------------------------------- §1 the last guard

def _boom(*args, **kwargs):
    err = RuntimeError("an unexpected state")
    err.evalconv_source = "set.csv"
    raise err


def test_an_unexpected_exception_is_one_line_with_its_own_exit_code(monkeypatch, capsys):
    monkeypatch.setattr(api, "convert", _boom)
    monkeypatch.delenv("EVALCONV_DEBUG", raising=False)
    code, _, err = run([str(ROOT / "docs" / "examples" / "support-sheet.csv"), "--to", "jsonl"], capsys)
    assert code == INTERNAL_ERROR == 70
    assert err.startswith("evalconv: internal error while reading set.csv: RuntimeError: an unexpected state.")
    assert "bug in evalconv" in err and "--debug" in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback(how, monkeypatch, capsys):
    monkeypatch.setattr(api, "convert", _boom)
    args = [str(ROOT / "docs" / "examples" / "support-sheet.csv"), "--to", "jsonl"]
    if how == "flag":
        args.append("--debug")
    else:
        monkeypatch.setenv("EVALCONV_DEBUG", "1")
    code, _, err = run(args, capsys)
    assert code == INTERNAL_ERROR and "Traceback (most recent call last)" in err and "internal error" in err
