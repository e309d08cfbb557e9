"""evalconv.to_dataframe / from_dataframe (issue 19): identity, dtypes that keep the set's meaning,
hand-built frames read the obvious way and validated, and the pandas pitfalls docs/pandas.md names."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from strategies import row_sets
from parquet_samples import DISTINCTIONS

GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"


def test_importing_evalconv_does_not_import_pandas():
    code = "import sys, evalconv; evalconv.read; print('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@settings(max_examples=300)
@given(rows=row_sets())
def test_identity_property(rows):
    back = evalconv.from_dataframe(evalconv.to_dataframe(rows))
    assert back.log.errors == []
    assert back.rows == rows  # Row equality is type-strict: 1 != 1.0, absent != null


def test_dtypes_keep_absent_null_and_empty_apart():
    df = evalconv.to_dataframe(DISTINCTIONS).set_index("id")
    assert df["input"].dtype == "string" and df["case.scenario"].dtype == "string"
    assert df["case.linkedConcerns"].dtype == object
    assert df.loc["absent", "expected"] is pd.NA and df.loc["absent", "expected:json"] is pd.NA
    assert df.loc["null", "expected:json"] == "null"
    assert df.loc["empty", "expected"] == "" and df.loc["empty", "input"] == ""
    assert df.loc["lists", "case.unacceptableBehavior"] == [] and df.loc["lists", "case.evaluationCriteria"] == [""]
    assert df.loc["numbers", "expected:json"] == "1.0"
    assert df.loc["text-that-looks-typed", "input"] == "007"
    assert not any(isinstance(v, float) and math.isnan(v) for v in df.to_numpy().ravel())  # no NaN anywhere
    assert df.loc["keys", "metadata.c|d"] == "x"  # plain-text metadata gets its own column
    assert json.loads(df.loc["keys", "metadata:json"]) == {"a.b": 1, "": None, "nested": {"k": [1.5, "2"]}}


def test_columns_are_the_canonical_csvs_and_only_those_used():
    df = evalconv.to_dataframe(evalconv.read(str(GOLDEN)).rows)
    assert list(df.columns[:5]) == ["id", "input", "input:json", "expected", "expected:json"]
    plain = evalconv.to_dataframe([DISTINCTIONS[0]])
    assert list(plain.columns) == ["id", "input", "case.caseId", "case.oracleType", "case.expectedBehavior",
                                   "case.provenance"]


def test_a_hand_built_frame_reads_the_obvious_way():
    df = pd.DataFrame({
        "id": ["a", "b", "c"],
        "input": ["What is 2+2?", "Capital of France?", np.nan],
        "input:json": [np.nan, np.nan, '{"messages": []}'],
        "expected": [4, np.nan, "Paris"],
        "case.caseId": ["a", "b", "c"],
        "case.oracleType": ["reference-answer", " reference-answer ", "reference-answer"],
        "case.expectedBehavior": ["Adds.", "Names it.", "Answers."],
        "case.provenance": ["expert-authored"] * 3,
        "case.linkedConcerns": ["math|arithmetic", np.nan, ["geo"]],
        "metadata.reason": ["smoke", None, np.nan],
        "metadata.weight": [1.5, np.nan, 2.0],
    })
    result = evalconv.from_dataframe(df)
    assert result.log.errors == []
    a, b, c = (r.to_json() for r in result.rows)
    assert a["expected"] == 4 and type(a["expected"]) is int  # a numpy int64 is the number 4
    assert a["metadata"] == {"case": {**a["metadata"]["case"]}, "reason": "smoke", "weight": 1.5}
    assert a["metadata"]["case"]["linkedConcerns"] == ["math", "arithmetic"]
    assert "expected" not in b and b["metadata"]["case"]["oracleType"] == "reference-answer"  # NaN = blank
    assert "linkedConcerns" not in b["metadata"]["case"] and set(b["metadata"]) == {"case"}
    assert c["input"] == {"messages": []} and c["metadata"]["case"]["linkedConcerns"] == ["geo"]


def test_a_hand_built_frame_is_validated_like_any_input():
    df = pd.DataFrame({"id": ["a", "b"], "input": ["q", "q"], "case.caseId": ["a", "x"],
                       "case.oracleType": ["reference-answer", "guess"], "case.expectedBehavior": [".", "."],
                       "case.provenance": ["expert-authored", "expert-authored"],
                       "expected": [pd.Timestamp("2026-01-01"), "ok"]})
    result = evalconv.from_dataframe(df)
    assert result.rows == []
    codes = {(f.row, f.code, f.path) for f in result.log.errors}
    assert (1, "schema", "$.expected") in codes  # a date is not JSON
    assert (2, "id-mismatch", "$.metadata.case.caseId") in codes
    assert (2, "schema", "$.metadata.case.oracleType") in codes


@pytest.mark.parametrize("columns, message", [
    (["id", "input", "case.caseId", "case.oracleType", "case.expectedBehavior"], "case.provenance"),
    (["id", "input", "case.caseId", "case.oracleType", "case.expectedBehavior", "case.provenance", "notes"],
     "unknown column 'notes'"),
])
def test_a_frame_with_the_wrong_columns_is_one_clear_error(columns, message):
    with pytest.raises(evalconv.ReadError) as err:
        evalconv.from_dataframe(pd.DataFrame({c: ["x"] for c in columns}))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_pitfalls_in_docs_pandas_md_are_real(tmp_path):
    """What docs/pandas.md warns about happens with pandas' defaults, so the page stays true."""
    from parquet_samples import sample_row
    rows = [sample_row("a", input="007", expected="NA"), sample_row("b", input="0042", expected=None),
            sample_row("c", input="1", expected=1), sample_row("d", input="2")]
    jsonl, csv = tmp_path / "set.jsonl", tmp_path / "set.csv"
    evalconv.write(rows, str(jsonl), "jsonl")
    evalconv.write(rows, str(csv), "csv")

    naive = pd.read_json(jsonl, lines=True).set_index("id")
    assert naive.loc["a", "input"] == 7 and naive.loc["b", "input"] == 42   # "007" -> 7
    assert math.isnan(naive.loc["d", "expected"])                          # absent -> NaN
    written = naive.reset_index().to_json(orient="records", lines=True).splitlines()
    assert json.loads(written[3])["expected"] is None                      # ... and back out as null

    sheet = pd.read_csv(csv).set_index("id")
    assert sheet.loc["a", "input"] == 7                                     # "007" -> 7
    assert math.isnan(sheet.loc["a", "expected"])                           # the text "NA" -> NaN
    assert sheet.loc["c", "expected:json"] == 1.0 and sheet["expected:json"].dtype == float  # 1 -> 1.0

    big = tmp_path / "big.jsonl"
    evalconv.write([r for r in DISTINCTIONS if r.id == "big"], str(big), "jsonl")
    with pytest.raises(ValueError, match="too big"):                        # past 64 bits: no frame at all
        pd.read_json(big, lines=True)

    import pyarrow as pa
    mixed = tmp_path / "mixed.jsonl"  # text inputs and a chat input in one set
    evalconv.write([sample_row("t", input="Hi?"), sample_row("m", input={"messages": [{"role": "user", "content": "Hi?"}]})],
                   str(mixed), "jsonl")
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError), match="column input"):  # no Parquet file at all
        pd.read_json(mixed, lines=True, dtype=False).to_parquet(tmp_path / "mixed.parquet", index=False)
    assert not (tmp_path / "mixed.parquet").exists()

    kept = evalconv.to_dataframe(evalconv.read(str(jsonl)).rows).set_index("id")  # the way that keeps it
    assert kept.loc["a", "input"] == "007" and kept.loc["a", "expected"] == "NA"
    assert kept.loc["d", "expected"] is pd.NA and kept.loc["b", "expected:json"] == "null"
    assert evalconv.from_dataframe(kept.reset_index()).rows == rows
