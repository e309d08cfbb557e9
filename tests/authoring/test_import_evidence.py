"""`evalconv import` onto schema version 2's evidence fields (issue 28): a team's columns become
contextRefs, targetTurn and permission (matched by name or by --map), cells such as `doc-7@v3`,
JSON lists and `(redacted)` are read, a row that fills one is version 2, and a cell that cannot be
read is one line naming the file, the row and the column. Sheets in CSV, JSONL, JSON and Parquet;
sets written in every canonical format."""
from __future__ import annotations

import json

import pytest
import yaml

from versioned_sets import CANONICAL, read_back, run

REDACTED, ABSENT, IRRELEVANT = ({"$evidence": m} for m in ("redacted", "absent", "irrelevant"))
# A team's sheet: its own column names, one per evidence part.
COLUMNS = ("question", "answer", "Source Doc", "Doc Version", "Span", "Caller Role", "Resource Scope",
           "Target Turn", "notes")
RECORDS = [
    ("How do refunds work?", "Within 30 days", "kb/refunds", "2024-05-01", "§2", "customer", "(redacted)", "", "a"),
    ("Show my invoices", "No", "kb/billing", "(Redacted)", "{\"start\": 3, \"end\": 9}", "guest", "own-orders", "",
     "b"),
    ("Plain question", "Yes", "", "", "", "", "", "", "c"),
    ("Turn two", "Sure", "kb/x", "v1", "(irrelevant)", "", "", "1", "d"),
]
# What each record's case holds of version 2 (None: the row stays version 1).
EXPECTED = [
    {"schemaVersion": 2, "contextRefs": [{"source": "kb/refunds", "snapshot": "2024-05-01", "span": "§2"}],
     "permission": {"callerRole": "customer", "resourceScope": REDACTED}},
    {"schemaVersion": 2, "contextRefs": [{"source": "kb/billing", "snapshot": REDACTED, "span": {"start": 3, "end": 9}}],
     "permission": {"callerRole": "guest", "resourceScope": "own-orders"}},
    None,
    {"schemaVersion": 2, "contextRefs": [{"source": "kb/x", "snapshot": "v1", "span": IRRELEVANT}], "targetTurn": 1},
]
V2_KEYS = ("schemaVersion", "contextRefs", "permission", "targetTurn")


def _csv_cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def write_sheet(tmp_path, kind: str, columns=COLUMNS, records=RECORDS, name: str = "team"):
    """The sheet as a team keeps it: CSV, JSONL or a JSON array (text cells; a JSON sheet's blank
    cells left out), or a Parquet file (an integer column for the target turn)."""
    path = tmp_path / f"{name}.{kind}"
    if kind == "csv":
        path.write_text("\r\n".join(",".join(_csv_cell(c) for c in cells) for cells in [columns, *records]) + "\r\n",
                        encoding="utf-8")
    elif kind in ("jsonl", "json"):
        objects = [{k: v for k, v in zip(columns, cells) if v != ""} for cells in records]
        path.write_text("".join(json.dumps(o) + "\n" for o in objects) if kind == "jsonl" else json.dumps(objects),
                        encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        data = {c: [cells[i] or None for cells in records] for i, c in enumerate(columns)}
        if "Target Turn" in data:
            data["Target Turn"] = [int(v) if v else None for v in data["Target Turn"]]
        pq.write_table(pa.table(data), path)
    return path


def imported(tmp_path, src, fmt: str = "jsonl", *args):
    out = tmp_path / f"out.{fmt}"
    result = run("import", src, "-o", out, "--force", *args)
    return result, (read_back(out) if out.exists() else [])


def v2_part(value: dict) -> dict | None:
    case = value["metadata"]["case"]
    part = {k: case[k] for k in V2_KEYS if k in case}
    return part or None


@pytest.mark.parametrize("sheet_kind", ["csv", "jsonl", "json", "parquet"])
@pytest.mark.parametrize("fmt", CANONICAL)
def test_a_teams_evidence_columns_become_version_2_fields_in_every_canonical_format(tmp_path, sheet_kind, fmt):
    result, rows = imported(tmp_path, write_sheet(tmp_path, sheet_kind), fmt)
    assert result.exit_code == 0, result.output
    assert [v2_part(r) for r in rows] == EXPECTED
    assert [r["metadata"]["notes"] for r in rows] == ["a", "b", "c", "d"]
    assert "Source Doc -> metadata.case.contextRefs.source" in result.stderr
    assert "defaulted: schemaVersion: 2 (the row fills a version-2 field" in result.stderr and "on 3 rows" in result.stderr
    validated = run("validate", tmp_path / f"out.{fmt}")
    assert validated.exit_code == 0, validated.output


def test_suggest_map_names_the_evidence_columns_and_the_map_comes_back(tmp_path):
    src = write_sheet(tmp_path, "csv")
    suggested = run("import", src, "--suggest-map")
    assert suggested.exit_code == 0
    mapping = yaml.safe_load(suggested.stdout)
    assert mapping == {"question": "input", "answer": "expected", "Source Doc": "case.contextRefs.source",
                       "Doc Version": "case.contextRefs.snapshot", "Span": "case.contextRefs.span",
                       "Caller Role": "case.permission.callerRole", "Resource Scope": "case.permission.resourceScope",
                       "Target Turn": "case.targetTurn", "notes": "metadata.notes"}
    map_file = tmp_path / "map.yaml"
    map_file.write_text(suggested.stdout, encoding="utf-8")
    result, rows = imported(tmp_path, src, "jsonl", "--map", map_file)
    assert result.exit_code == 0 and [v2_part(r) for r in rows] == EXPECTED


@pytest.mark.parametrize("sheet_kind", ["csv", "jsonl", "json", "parquet"])
def test_the_map_names_a_teams_own_columns_and_whole_reference_cells(tmp_path, sheet_kind):
    columns = ("Prompt", "Docs", "Who", "Allowed", "Turn", "Perm")
    records = [("Q1", "doc-7@v3|kb/refunds@(redacted)", "admin", "", "", ""),
               ("Q2", '["doc-1@v1", {"source": "kb", "snapshot": "2", "span": {"start": 1, "end": 4}}]', "", "", "", ""),
               ("Q3", '{"source": "kb/one", "snapshot": "(absent) is text in JSON"}', "reader", "kb-only", "", ""),
               ("Q4", "", "", "", "", '{"callerRole": "agent", "resourceScope": {"$evidence": "irrelevant"}}'),
               ("Q5", "doc-9@2024@05", "", "tenant-1", "", '{"callerRole": "agent"}')]
    src = write_sheet(tmp_path, sheet_kind, columns, records)
    map_file = tmp_path / "map.json"
    map_file.write_text(json.dumps({"Prompt": "input", "Docs": "case.contextRefs", "Who": "case.permission.callerRole",
                                    "Allowed": "case.permission.resourceScope", "Perm": "case.permission"}), "utf-8")
    result, rows = imported(tmp_path, src, "jsonl", "--map", map_file)
    assert result.exit_code == 1  # Q1's permission has no resource scope: validate's finding
    assert "permission-without-scope" in result.output and "row 1" in result.output
    records = [records[i] for i in range(1, 5)]
    src = write_sheet(tmp_path, sheet_kind, columns, records, name="rest")
    result, rows = imported(tmp_path, src, "jsonl", "--map", map_file)
    assert result.exit_code == 0, result.output
    assert [v2_part(r) for r in rows] == [
        {"schemaVersion": 2, "contextRefs": [{"source": "doc-1", "snapshot": "v1"},
                                             {"source": "kb", "snapshot": "2", "span": {"start": 1, "end": 4}}]},
        {"schemaVersion": 2, "contextRefs": [{"source": "kb/one", "snapshot": "(absent) is text in JSON"}],
         "permission": {"callerRole": "reader", "resourceScope": "kb-only"}},
        {"schemaVersion": 2, "permission": {"callerRole": "agent", "resourceScope": IRRELEVANT}},
        {"schemaVersion": 2, "contextRefs": [{"source": "doc-9@2024", "snapshot": "05"}],
         "permission": {"callerRole": "agent", "resourceScope": "tenant-1"}},
    ]


def test_a_whole_reference_cell_with_markers_and_a_list_separator(tmp_path):
    src = write_sheet(tmp_path, "csv", ("question", "context refs"), [("Q", "a@(absent); b@( Irrelevant ); c@3")])
    result, rows = imported(tmp_path, src, "jsonl", "--list-sep", "context refs=;")
    assert result.exit_code == 1 and "evidence-without-snapshot" in result.output  # a@(absent)
    src = write_sheet(tmp_path, "csv", ("question", "context refs"), [("Q", "b@( Irrelevant ); c@3")], name="ok")
    result, rows = imported(tmp_path, src, "jsonl", "--list-sep", "context refs=;")
    assert result.exit_code == 0, result.output
    assert rows[0]["metadata"]["case"]["contextRefs"] == [{"source": "b", "snapshot": IRRELEVANT},
                                                         {"source": "c", "snapshot": "3"}]


@pytest.mark.parametrize("column, cell, words", [
    ("context refs", "@v3", "column 'context refs': the reference '@v3' names no source before '@'"),
    ("context refs", "doc-7@", "column 'context refs': the reference 'doc-7@' has nothing after '@'"),
    ("context refs", "[oops", "column 'context refs': not valid JSON"),
    ("context refs", "[1]", None),  # JSON of the wrong shape: the schema's finding
    ("target turn", "three", "column 'target turn': 'three' is not a whole number"),
    ("target turn", "2.5", "column 'target turn': '2.5' is not a whole number"),
    ("schema version", "v2", "column 'schema version': 'v2' is not a whole number: write 2 or 1"),
    ("snapshot", "v3", "column 'Source Doc': a reference needs its source (snapshot is filled in this row)"),
])
@pytest.mark.parametrize("fmt", CANONICAL)
def test_regression_a_malformed_evidence_cell_is_one_line_naming_file_row_and_column(tmp_path, column, cell, words,
                                                                                     fmt):
    good = {"context refs": ("", "kb@1"), "target turn": ("", "1"), "schema version": ("", "2"), "snapshot": ("kb", "2")}
    src = write_sheet(tmp_path, "csv", ("id", "question", "Source Doc", column),
                      [("ok-1", "Q", *good[column]), ("bad-1", "Q2", "", cell)])
    out = tmp_path / f"out.{fmt}"
    result = run("import", src, "-o", out)
    assert result.exit_code == 1 and not out.exists() and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if ": error[" in line]
    assert len(errors) == 1
    if words is None:
        assert "error[schema]" in errors[0] and "row 2 (bad-1)" in errors[0]
    else:
        assert errors[0].startswith(f"{src}:3: row 2 (bad-1) $.metadata.case.") and "error[parse]" in errors[0]
        assert words in errors[0]


def test_a_version_1_sheet_stays_version_1_and_schema_version_writes_it_everywhere(tmp_path):
    src = write_sheet(tmp_path, "csv", ("question", "scope", "doc_id"), [("Q", "billing", "d-1")])
    result, rows = imported(tmp_path, src)
    assert result.exit_code == 0
    (value,) = rows
    assert "schemaVersion" not in value["metadata"]["case"]  # a bare "scope" or "doc_id" is not evidence
    assert value["metadata"]["scope"] == "billing" and value["metadata"]["doc_id"] == "d-1"
    result, rows = imported(tmp_path, src, "jsonl", "--schema-version", "2")
    assert result.exit_code == 0 and rows[0]["metadata"]["case"]["schemaVersion"] == 2


def test_schema_version_1_with_evidence_columns_is_refused_by_the_validator_naming_the_version(tmp_path):
    src = write_sheet(tmp_path, "csv", ("question", "context refs"), [("Q", "kb@1")])
    result, _ = imported(tmp_path, src, "jsonl", "--schema-version", "1")
    assert result.exit_code == 1 and "is a field of schema version 2" in result.output


def test_a_map_to_a_part_that_is_not_one_is_refused(tmp_path):
    src = write_sheet(tmp_path, "csv", ("question", "doc"), [("Q", "kb")])
    map_file = tmp_path / "map.yaml"
    map_file.write_text("doc: case.contextRefs.version\n", encoding="utf-8")
    result = run("import", src, "--map", map_file)
    assert result.exit_code == 2 and "column 'doc': 'case.contextRefs.version' is not a case-profile field" in result.output
