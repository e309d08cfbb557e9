"""`evalconv import SHEET`: messy sheets a team already has, through the CLI."""
from __future__ import annotations

import json

import evalconv
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from evalconv.canonical.admissibility import OMITTED_FIELDS
from evalconv.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def sheet(tmp_path, text: str, name: str = "sheet.csv", bom: bool = False):
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def imported(tmp_path, src, *args):
    out = tmp_path / "out.jsonl"
    result = run("import", src, "-o", out, "--force", *args)  # tests import again over their out.jsonl
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return result, rows


MESSY = ("Question ,Expected Output,SCORE,Notes,Customer Segment\r\n"
         "How long is the refund window?,30 days,5,from the FAQ,retail\r\n"
         ",,,,\r\n"
         "\r\n"
         "Do you ship to Canada?,\"Yes, for $15\",3,,wholesale\r\n"
         "Do you ship to Canada?,No,1,asked twice,\r\n")


def test_a_messy_sheet_imports_with_nothing_lost(tmp_path):
    result, rows = imported(tmp_path, sheet(tmp_path, MESSY, bom=True))
    assert result.exit_code == 0, result.output
    assert len(rows) == 3
    first = rows[0]
    assert first["input"] == "How long is the refund window?" and first["expected"] == "30 days"
    assert first["metadata"]["notes"] == "from the FAQ"
    assert first["metadata"]["Customer Segment"] == "retail"
    assert first["metadata"]["SCORE"] == "5"
    case = first["metadata"]["case"]
    assert case["caseId"] == first["id"] and case["provenance"] == "imported"
    assert case["oracleType"] == "reference-answer"
    assert "reviewer" in case["expectedBehavior"] and "Imported" in case["expectedBehavior"]
    assert rows[2]["metadata"]["notes"] == "asked twice" and "Customer Segment" not in rows[2]["metadata"]
    assert "2 blank rows skipped" in result.stderr
    assert "matched: Question -> input, Expected Output -> expected, Notes -> metadata.notes" in result.stderr
    assert "defaulted: oracleType: reference-answer" in result.stderr
    assert "flagged: SCORE is kept in user metadata" in result.stderr and OMITTED_FIELDS["score"] in result.stderr
    assert evalconv.validate([str(tmp_path / "out.jsonl")]).valid


def test_ids_are_slugs_with_a_short_hash_unique_and_stable(tmp_path):
    src = sheet(tmp_path, MESSY)
    _, rows = imported(tmp_path, src)
    ids = [r["id"] for r in rows]
    assert ids[0].startswith("how-long-is-the-refund-window-") and len(ids[0].rsplit("-", 1)[1]) == 6
    assert len(set(ids)) == 3 and ids[2] == ids[1] + "-2"
    _, again = imported(tmp_path, src)
    assert [r["id"] for r in again] == ids


def test_a_given_id_column_is_used(tmp_path):
    _, rows = imported(tmp_path, sheet(tmp_path, "case_id,prompt,ideal\ncs-1,Hi?,Hello\n,Bye?,Goodbye\n"))
    assert rows[0]["id"] == "cs-1" and rows[1]["id"].startswith("bye-")


def test_a_sheet_with_no_answer_column_is_behavior_only(tmp_path):
    result, rows = imported(tmp_path, sheet(tmp_path, "prompt;category\nSummarise the call;summary\n", "s.csv"))
    assert result.exit_code == 0, result.output
    assert rows[0]["metadata"]["case"]["oracleType"] == "expected-behavior-only"
    assert "expected" not in rows[0] and rows[0]["metadata"]["category"] == "summary"


@pytest.mark.parametrize("name", sorted(OMITTED_FIELDS))
def test_every_refused_name_is_kept_and_flagged(tmp_path, name):
    result, rows = imported(tmp_path, sheet(tmp_path, f"question,answer,{name}\nQ?,A,3\n"))
    assert result.exit_code == 0
    assert rows[0]["metadata"][name] == "3"
    assert f"flagged: {name}" in result.stderr and OMITTED_FIELDS[name] in result.stderr


def test_oracle_type_option_and_acceptable_set_lists(tmp_path):
    src = sheet(tmp_path, "question,answers\nWhich queue?,billing|refunds\n")
    result, rows = imported(tmp_path, src, "--oracle-type", "acceptable-set", "--map",
                            _map(tmp_path, {"answers": "expected"}))
    assert result.exit_code == 0, result.output
    assert rows[0]["expected"] == ["billing", "refunds"]
    assert "from --map: answers -> expected" in result.stderr


def test_oracle_type_per_row_from_a_column(tmp_path):
    src = sheet(tmp_path, "question,answer,Oracle Type,criteria\nQ1,A1,reference answer,\nQ2,,rubric,says hi|says bye\n")
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 0, result.output
    assert [r["metadata"]["case"]["oracleType"] for r in rows] == ["reference-answer", "rubric"]
    assert rows[1]["metadata"]["case"]["evaluationCriteria"] == ["says hi", "says bye"]


def test_a_bad_oracle_type_cell_fails_with_the_line_and_writes_nothing(tmp_path):
    src = sheet(tmp_path, "question,answer,oracle\nQ1,A1,reference-answer\nQ2,A2,vibes\n")
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 1 and rows == []
    assert f"{src}:3: row 2" in result.stderr and "$.metadata.case.oracleType" in result.stderr


def test_duplicate_given_ids_fail(tmp_path):
    result, _ = imported(tmp_path, sheet(tmp_path, "id,question\nx,Q1\nx,Q2\n"))
    assert result.exit_code == 1 and "duplicate-id" in result.stderr


def test_a_barred_evaluator_column_fails_with_the_reason(tmp_path):
    result, _ = imported(tmp_path, sheet(tmp_path, "question,rubric,grader\nQ,be kind,exact or programmatic\n"),
                         "--oracle-type", "rubric")
    assert result.exit_code == 1 and "a string comparison cannot read a criterion" in result.stderr


def test_no_input_column_is_a_usage_error(tmp_path):
    result, _ = imported(tmp_path, sheet(tmp_path, "foo,bar\n1,2\n"))
    assert result.exit_code == 2 and "no input column" in result.stderr and "--suggest-map" in result.stderr


def _map(tmp_path, mapping) -> str:
    path = tmp_path / "map.yaml"
    path.write_text(json.dumps(mapping), encoding="utf-8")
    return str(path)


def test_suggest_map_prints_a_map_the_import_takes_back(tmp_path):
    src = sheet(tmp_path, "Prompt Text,Gold,difficulty,why\nQ?,A,2,Regression: x\n")
    suggested = run("import", src, "--suggest-map")
    assert suggested.exit_code == 0
    text = suggested.stdout
    assert "Gold: expected" in text and "why: metadata.reason" in text and "flagged:" in text
    edited = tmp_path / "map.yaml"
    mapping = yaml.safe_load(text)
    assert mapping["Prompt Text"] == "metadata['Prompt Text']"
    mapping["Prompt Text"] = "input"
    edited.write_text(yaml.safe_dump(mapping), encoding="utf-8")
    assert run("import", src).exit_code == 2  # no column is named like an input
    result, rows = imported(tmp_path, src, "--map", edited)
    assert result.exit_code == 0, result.output
    assert rows[0]["input"] == "Q?" and rows[0]["metadata"]["reason"] == "Regression: x"


def test_a_map_naming_a_missing_column_or_a_refused_field_is_exit_2(tmp_path):
    src = sheet(tmp_path, "question,score\nQ,1\n")
    result, _ = imported(tmp_path, src, "--map", _map(tmp_path, {"answer": "expected"}))
    assert result.exit_code == 2 and "the sheet does not have" in result.stderr
    result, _ = imported(tmp_path, src, "--map", _map(tmp_path, {"score": "case.score"}))
    assert result.exit_code == 2 and OMITTED_FIELDS["score"] in result.stderr


def test_provenance_option_and_vendor_output(tmp_path):
    src = sheet(tmp_path, "question,answer\nQ?,A\n")
    out = tmp_path / "tests.yaml"
    result = run("import", src, "--provenance", "expert-authored", "--to", "promptfoo", "-o", out)
    assert result.exit_code == 0, result.output
    back = evalconv.read(str(out), from_="promptfoo").rows
    assert back[0].case["provenance"] == "expert-authored"


def test_a_jsonl_sheet_keeps_its_values(tmp_path):
    src = sheet(tmp_path, '{"prompt": {"q": 1}, "target": [1, 2], "extra": true}\n\n', "s.jsonl")
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 0, result.output
    assert rows[0]["input"] == {"q": 1} and rows[0]["expected"] == [1, 2] and rows[0]["metadata"]["extra"] is True


def test_a_ragged_row_is_located(tmp_path):
    src = sheet(tmp_path, "question,answer\nQ,A,surprise\n")
    result, _ = imported(tmp_path, src)
    assert result.exit_code == 2 and f"{src}:2:" in result.stderr and "Traceback" not in result.output


def test_two_columns_with_one_name_are_refused(tmp_path):
    result, _ = imported(tmp_path, sheet(tmp_path, "question,notes,notes\nQ,a,b\n"))
    assert result.exit_code == 2 and "two columns are named 'notes'" in result.stderr


def test_a_json_array_sheet_imports_and_a_json_scalar_is_refused(tmp_path):
    result, rows = imported(tmp_path, sheet(tmp_path, '[{"question": "Q?", "answer": "A"}]', "s.json"))
    assert result.exit_code == 0 and rows[0]["expected"] == "A"
    result, _ = imported(tmp_path, sheet(tmp_path, '[1, 2]', "t.json"))
    assert result.exit_code == 2 and "JSON object" in result.stderr


# ---- wide sheets (issue 23): work linear in the cells, counted, never timed

class _Counted(str):
    """A column name that counts how often it is compared: a list searched per key (the quadratic
    loop a 10k-key sheet hit) compares it with every column before it; a dict about once."""
    compared = 0

    def __eq__(self, other):
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _wide_work(tmp_path, monkeypatch, columns: int, rows: int, sparse: bool) -> tuple[int, int, int]:
    """(name comparisons, target parses, cells visited) to read, plan, build the rows of and
    suggest a map for a JSONL sheet `columns` wide: every row all keys, or (sparse) its own 20."""
    from evalconv.authoring import sheet_import

    def loads(line):  # the sheet's records, with counted keys (new objects each row, as a parser makes)
        number = int(json.loads(line)["row"])
        keys = range(number * 20, number * 20 + 20) if sparse else range(columns)
        return {_Counted("question"): "Q?", **{_Counted(f"k{c}"): c for c in keys}}

    parses, cells = [0], [0]
    real_parse, real_cell = sheet_import.paths.parse, sheet_import._cell

    def parse(path):
        parses[0] += 1
        return real_parse(path)

    def cell(*args):
        cells[0] += 1
        return real_cell(*args)

    monkeypatch.setattr(sheet_import.jsonvalue, "loads", loads)
    monkeypatch.setattr(sheet_import.paths, "parse", parse)
    monkeypatch.setattr(sheet_import, "_cell", cell)
    path = tmp_path / f"wide-{columns}-{sparse}.jsonl"
    path.write_text("".join(json.dumps({"row": r}) + "\n" for r in range(rows)))
    _Counted.compared = 0
    sheet = sheet_import.read_sheet(str(path))
    cmap = sheet_import.plan(sheet, None)
    built = list(sheet_import.sheet_rows(sheet, cmap, source=str(path)))
    sheet_import.suggested_map(cmap)
    assert len(built) == rows
    return _Counted.compared, parses[0], cells[0]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_wide_sheet_import_work_is_linear_in_the_cells(tmp_path, monkeypatch, sparse):
    """50 rows x 10k keys of JSONL took 22.7 s: every key was looked up in a list of the columns,
    every cell parsed its column's target path again, and a sparse row visited every column."""
    rows = 10 if not sparse else 200
    small = _wide_work(tmp_path, monkeypatch, 500, rows, sparse)
    large = _wide_work(tmp_path, monkeypatch, 2000, rows if not sparse else rows * 4, sparse)
    cells_large = 2001 * rows if not sparse else 21 * rows * 4  # with the question
    for work_small, work_large in zip(small, large):
        assert work_large <= 4.5 * max(work_small, 1)  # 4x the cells, 4x the work (quadratic: 16x)
    compared, parses, cells = large
    assert compared <= 3 * cells_large and cells <= cells_large
    assert parses <= (2001 if not sparse else 20 * rows * 4 + 1)  # once a column, not once a cell


_NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)


@settings(max_examples=300)
@given(names=st.lists(_NAMES, min_size=1, max_size=8, unique_by=lambda n: n.strip() or n))
def test_the_suggested_map_reads_back_as_the_map_for_any_column_names(names):
    """The map is written without a YAML dump per column (90 us each: 90 s for a 1M-column
    header); whatever the names, YAML must read it back as the same map."""
    from evalconv.authoring import sheet_import

    cmap = sheet_import.column_map(names)
    back = yaml.safe_load(sheet_import.suggested_map(cmap)) or {}
    want = {c: (t[2:].replace("metadata.case.", "case.", 1) if t.startswith("$.") else t)
            for c, t in cmap.targets.items()}
    assert back == want


# ---- bounded cells: the sheet importer takes what the CSV and JSON readers take, no more

CAP = 1024  # MAX_LINE_BYTES (64 MiB) patched small: the same code path, kilobytes not gigabytes


@pytest.fixture
def small_cap(monkeypatch):
    import csv as csv_module

    from evalconv.authoring import dataset_sheet
    from evalconv.canonical import source

    monkeypatch.setattr(source, "MAX_LINE_BYTES", CAP)
    monkeypatch.setattr(dataset_sheet, "MAX_LINE_BYTES", CAP)
    from evalconv.authoring import sheet_import

    monkeypatch.setattr(sheet_import, "MAX_LINE_BYTES", CAP)
    old = csv_module.field_size_limit(CAP)
    yield
    csv_module.field_size_limit(old)


@pytest.mark.parametrize("name, text, where", [
    ("big.jsonl", '{"question": "q?"}\n{"question": "' + "x" * 2 * CAP + '"}\n', ":2: line is longer than"),
    ("big.csv", "question,answer\nq?,a\nq2?," + "y" * 2 * CAP + "\n", ":3: line is longer than"),
    ("multi.csv", "question,answer\nq?,\"" + ("z" * 100 + "\n") * 20 + "\"\n", ":2: a cell is larger than"),
])
def test_a_sheet_cell_larger_than_the_cap_is_refused_with_its_line(tmp_path, small_cap, name, text, where):
    """A sheet with a 2 GiB cell was read whole and peaked at about 15 GB."""
    src = sheet(tmp_path, text, name)
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 2 and f"{src}{where}" in result.stderr and not rows
    assert not (tmp_path / "out.jsonl").exists()


def test_a_parquet_cell_larger_than_the_cap_is_refused_naming_column_and_row(tmp_path, small_cap):
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "big.parquet"
    pq.write_table(pa.table({"question": ["q1?", "q2?", "q3?"], "answer": ["a", "b" * 2 * CAP, "c"]}), src)
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 2 and not rows
    assert f"{src}: answer: a cell of {2 * CAP:,} bytes (row 2) is larger than the" in result.stderr
