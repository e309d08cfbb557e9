"""Phoenix's own client takes what evalconv writes: `create_dataset(examples=...)` uploads it
(to a stand-in for the server, on an httpx MockTransport, offline), `get_dataset` gives it back
as Phoenix's `Dataset`, `to_dataframe()` reads it, `run_experiment(dry_run=...)` runs a stub task
on it, and Phoenix's own evaluator binding hands `case_check` what an experiment would."""
from __future__ import annotations

import base64
import inspect
import json

import pytest
from hypothesis import given, settings

import evalconv
from conftest import ROOT
from evalconv.canonical import jsonvalue
from evalconv.vendors.phoenix.evaluators import NOT_CHECKED, case_check
from interop import vendor_fixtures, vendor_module
from roundtrip_helpers import read_text
from strategies import any_format_rows

pytestmark = pytest.mark.interop
FIXTURES, MANIFEST = vendor_fixtures("phoenix")
GOLDEN = ROOT / "golden_roundtrips" / "support-agent.jsonl"

phoenix = vendor_module("phoenix.client", name="phoenix")


def _gid(kind: str, n: int) -> str:
    return base64.b64encode(f"{kind}:{n}".encode()).decode()


class StandIn:
    """The three routes create_dataset calls, answering as the Phoenix server does."""

    def __init__(self) -> None:
        self.payload: dict | None = None

    def __call__(self, request):
        import httpx
        path = request.url.path
        if path.endswith("arize_phoenix_version"):
            return httpx.Response(200, text="20.26.1")  # the client checks it before sending example ids
        if request.method == "POST" and path.endswith("/v1/datasets/upload"):
            self.payload = json.loads(request.content)
            return httpx.Response(200, json={"data": {"dataset_id": _gid("Dataset", 1),
                                                      "version_id": _gid("DatasetVersion", 1)}})
        if path.endswith("/examples"):
            p = self.payload
            ids = p.get("example_ids") or [None] * len(p["inputs"])
            examples = [{"id": ids[i] or _gid("DatasetExample", i + 1), "input": p["inputs"][i],
                         "output": (p.get("outputs") or [{}] * len(ids))[i],
                         "metadata": (p.get("metadata") or [{}] * len(ids))[i],
                         "updated_at": "2026-12-01T00:00:00+00:00"} for i in range(len(ids))]
            return httpx.Response(200, json={"data": {"version_id": _gid("DatasetVersion", 1), "examples": examples}})
        if path.endswith(f"/v1/datasets/{_gid('Dataset', 1)}"):
            return httpx.Response(200, json={"data": {"id": _gid("Dataset", 1), "name": self.payload["name"]}})
        return httpx.Response(404, json={"detail": f"no route {path}"})


def upload(path):
    import httpx
    from phoenix.client import Client

    examples = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    server = StandIn()
    client = Client(http_client=httpx.Client(base_url="http://phoenix.test",
                                             transport=httpx.MockTransport(server)))
    dataset = client.datasets.create_dataset(name="golden", examples=examples)
    return examples, server.payload, dataset


def _export(tmp_path, rows=None):
    out = tmp_path / "set.phoenix.jsonl"
    if rows is None:
        assert evalconv.convert(str(GOLDEN), str(out), to="phoenix").exit_code == 0
    else:
        evalconv.write(rows, str(out), "phoenix")
    return out


def test_phoenix_uploads_the_golden_export_and_gives_it_back(phoenix, tmp_path):
    examples, payload, dataset = upload(_export(tmp_path))
    assert len(dataset) == len(examples) == len(evalconv.read(str(GOLDEN)).rows)
    assert payload["example_ids"] == [e["id"] for e in examples]  # stable ids: the case ids
    frame = dataset.to_dataframe()
    assert list(frame.index) == [e["id"] for e in examples]
    for example, row in zip(dataset.examples, evalconv.read(str(GOLDEN)).rows):
        assert example["metadata"]["case"]["caseId"] == row.id
    refund = dataset.examples[0]
    assert refund["input"] == {"input": evalconv.read(str(GOLDEN)).rows[0].input}  # a text, wrapped


def test_what_phoenix_gives_back_reads_as_the_rows_evalconv_wrote(phoenix, tmp_path):
    _, _, dataset = upload(_export(tmp_path))
    text = "".join(jsonvalue.dumps(dict(e)) + "\n" for e in dataset.examples)  # the server's examples
    checked, report = read_text("phoenix", text)
    assert [c.row for c in checked] == evalconv.read(str(GOLDEN)).rows
    assert report.inferred.entries == {} and report.edited.entries == {}


def test_a_stub_task_runs_and_case_check_grades_it_as_phoenix_binds_it(phoenix, tmp_path):
    from phoenix.client.experiments import run_experiment
    from phoenix.client.resources.experiments.evaluators import (_bind_evaluator_signature, _default_eval_scorer,
                                                                 validate_evaluator_signature)

    _, _, dataset = upload(_export(tmp_path))
    rows = {r.id: r for r in evalconv.read(str(GOLDEN)).rows}

    def task(input, metadata):  # answers every case rightly: its reference, a member, the calls
        row = rows[metadata["case"]["caseId"]]
        if row.case["oracleType"] == "acceptable-set":
            return row.expected[-1]
        if row.case["oracleType"] == "expected-tool-calls":
            return {"tool_calls": row.expected}
        return row.expected if row.has_expected else ""

    ran = run_experiment(dataset=dataset, task=task, dry_run=len(dataset), print_summary=False)
    assert len(ran["task_runs"]) == len(dataset)
    sig = inspect.signature(case_check)
    validate_evaluator_signature(sig)
    verdicts = {}
    for example, run in zip(dataset.examples, ran["task_runs"]):
        bound = _bind_evaluator_signature(sig, output=run["output"], expected=example["output"],
                                          metadata=example["metadata"], input=example["input"], example=example)
        verdicts[example["id"]] = _default_eval_scorer(case_check(*bound.args, **bound.kwargs))
    checked = {i for i, v in verdicts.items() if v.get("score") is not None}
    assert checked == {"cs-refund-valid-receipt", "cs-return-window-phrasing", "cs-order-status-tool",
                       "cs-tricky-strings", "cs-extract-receipt"}
    assert {verdicts[i]["score"] for i in checked} == {1.0}
    assert all(verdicts[i]["label"] == NOT_CHECKED for i in set(verdicts) - checked)  # never a pass


def test_case_check_fails_wrong_answers():
    meta = {"case": {"caseId": "c", "oracleType": "acceptable-set", "expectedBehavior": "", "provenance": "imported"},
            "evalconv": {"output": "wrapped"}}
    assert case_check("sixty days", {"expected": ["60 days", "sixty days"]}, meta)["score"] == 1.0
    assert case_check("sixty", {"expected": ["60 days", "sixty days"]}, meta)["score"] == 0.0
    meta["case"]["oracleType"] = "expected-tool-calls"
    want = {"expected": [{"name": "lookup", "arguments": {"id": 1}}]}
    assert case_check({"tool_calls": [{"name": "lookup", "arguments": {"id": 1}}]}, want, meta)["score"] == 1.0
    assert case_check({"tool_calls": [{"name": "lookup", "arguments": {"id": 1.0}}]}, want, meta)["score"] == 0.0


@settings(max_examples=20, deadline=None)
@given(rows=any_format_rows())
def test_phoenix_uploads_every_export(phoenix, tmp_path_factory, rows):
    from hypothesis import assume

    from evalconv.canonical.errors import EvalconvError
    assume(rows)  # create_dataset refuses an empty dataset ("inputs must be non-empty")
    tmp = tmp_path_factory.mktemp("px")
    try:
        out = _export(tmp, rows)
    except EvalconvError:
        return
    examples, payload, dataset = upload(out)
    assert len(dataset) == len(rows) and payload["example_ids"] == [r.id for r in rows]
    assert all(isinstance(e["input"], dict) and isinstance(e["output"], dict) for e in dataset.examples)
    dataset.to_dataframe()


def test_files_phoenix_wrote_read_as_the_manifest_says(phoenix):
    for entry in MANIFEST["files"]:
        checked, report = read_text("phoenix", (FIXTURES / entry["path"]).read_text(encoding="utf-8"))
        rows = [c.row for c in checked]
        want = entry["recover"]
        assert None not in rows and len(rows) == entry["rows"], [c.findings for c in checked]
        if "ids" in want:
            assert [r.id for r in rows] == want["ids"]
        if "inputs" in want:
            assert [r.input for r in rows] == want["inputs"]
        if "expected" in want:
            assert [r.expected if r.has_expected else None for r in rows] == want["expected"]
        if "metadata" in want:
            assert [{k: v for k, v in r.metadata.items() if k != "case"} for r in rows] == want["metadata"]
        if "splits" in want:
            assert [r.case.get("extensions", {}).get("phoenix", {}).get("splits") for r in rows] == want["splits"]


class CSVStandIn:
    """The server's side of `create_dataset(csv_file_path=...)`: the upload's form and its gzip
    file as the client sends them; the examples the server then holds (its CSV upload reads every
    cell as text, under the column's own name)."""

    def __init__(self) -> None:
        self.form: dict[str, list[str]] = {}
        self.csv = b""

    def __call__(self, request):
        import gzip
        from email.parser import BytesParser

        import httpx
        path = request.url.path
        if path.endswith("arize_phoenix_version"):
            return httpx.Response(200, text="20.26.1")
        if request.method == "POST" and path.endswith("/v1/datasets/upload"):
            head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
            for part in BytesParser().parsebytes(head + request.content).get_payload():
                name = part.get_param("name", header="content-disposition")
                data = part.get_payload(decode=True)
                if name == "file":
                    self.csv = gzip.decompress(data)
                else:
                    self.form.setdefault(name, []).append(data.decode())
            return httpx.Response(200, json={"data": {"dataset_id": _gid("Dataset", 1),
                                                      "version_id": _gid("DatasetVersion", 1)}})
        if path.endswith("/examples"):
            import csv
            import io
            records = list(csv.DictReader(io.StringIO(self.csv.decode("utf-8"), newline="")))
            examples = [{"id": r["example_id"], **{kind: {k: r[k] for k in self.form.get(f"{kind}_keys[]", [])}
                                                   for kind in ("input", "output", "metadata")},
                         "updated_at": "2026-12-01T00:00:00+00:00"} for r in records]
            return httpx.Response(200, json={"data": {"version_id": _gid("DatasetVersion", 1), "examples": examples}})
        if path.endswith(f"/v1/datasets/{_gid('Dataset', 1)}"):
            return httpx.Response(200, json={"data": {"id": _gid("Dataset", 1), "name": self.form["name"][0]}})
        return httpx.Response(404, json={"detail": f"no route {path}"})


def test_phoenix_uploads_the_csv_export_layout_evalconv_writes(phoenix, tmp_path):
    """Issue 29: the CSV variant. Phoenix's client reads the file's header itself, checks the keys
    against it (no duplicate columns, every key a column, at least one row) and sends the file as
    it is; evalconv reads the same file back to the rows that went out."""
    import csv

    import httpx
    from phoenix.client import Client

    out = tmp_path / "set.phoenix.csv"
    assert evalconv.convert(str(GOLDEN), str(out), to="phoenix").exit_code == 0
    header = next(csv.reader(out.open(encoding="utf-8", newline="")))
    keys = {kind: [c for c in header if c.startswith(f"{kind}_")] for kind in ("input", "output", "metadata")}
    server = CSVStandIn()
    client = Client(http_client=httpx.Client(base_url="http://phoenix.test", transport=httpx.MockTransport(server)))
    dataset = client.datasets.create_dataset(name="golden", csv_file_path=out, input_keys=keys["input"],
                                             output_keys=keys["output"], metadata_keys=keys["metadata"],
                                             example_id_key="example_id")
    assert server.csv == out.read_bytes()  # the file as evalconv wrote it
    assert server.form["example_id_key"] == ["example_id"]
    assert sorted(server.form["input_keys[]"]) == sorted(keys["input"])
    rows = evalconv.read(str(GOLDEN)).rows
    assert [e["id"] for e in dataset.examples] == [r.id for r in rows]
    refund = dataset.examples[0]  # the server keeps the column names as keys, cells as text
    assert refund["input"]["input_input"] == rows[0].input and refund["output"]["output_expected"] == rows[0].expected
    dataset.to_dataframe()
    assert evalconv.read(str(out), from_="phoenix").rows == rows
    with pytest.raises(ValueError, match="not found|not in|missing|[Kk]eys"):  # the client checks keys against the header
        client.datasets.create_dataset(name="golden", csv_file_path=out, input_keys=["input_nope"])
