"""`convert --contexts MANIFEST` (issue 28): a set whose context references do not resolve in
the sources a run can use is refused before it is exported to a tool, with validate's finding,
exit codes and one-line errors; a file, a folder, one core and two."""
from __future__ import annotations

import json

import pytest

import evalconv
from evalconv.canonical.contexts import load_contexts
from evalconv.canonical.errors import UsageError
from versioned_sets import CANONICAL, REDACTED, findings, refs, run, write_set

MANIFEST = '{"source": "kb/refunds", "snapshot": "2024-05-01"}\n{"source": "kb/shipping", "snapshot": "7"}\n'
RESOLVES = [refs("resolves", {"source": "kb/refunds", "snapshot": "2024-05-01"}),
            refs("redacted-known", {"source": "kb/shipping", "snapshot": REDACTED})]
UNRESOLVED = [refs("other-snapshot", {"source": "kb/refunds", "snapshot": "2023-01-01"}),
              refs("unknown-source", {"source": "kb/refund", "snapshot": "2024-05-01"})]


@pytest.fixture
def manifest(tmp_path):
    path = tmp_path / "sources.jsonl"
    path.write_text(MANIFEST, encoding="utf-8")
    return path


def _finding_lines(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if "error[evidence-unresolvable]" in line)


@pytest.mark.parametrize("fmt", CANONICAL)
def test_convert_refuses_a_set_whose_references_do_not_resolve_in_every_canonical_format(tmp_path, fmt, manifest):
    path = write_set(RESOLVES + UNRESOLVED, tmp_path / f"set.{fmt}")
    out = tmp_path / "out.jsonl"
    result = run("convert", path, "--to", "jsonl", "-o", out, "--contexts", manifest)
    assert result.exit_code == 1 and not out.exists()
    lines = _finding_lines(result.output)
    assert len(lines) == 2 and "nothing written: 2 of 4 rows invalid" in result.output
    # the finding is validate's, word for word
    validated = {(f["id"], f["code"], f["path"], f["message"]) for f in findings(path, "--contexts", manifest)}
    assert {(i, c) for i, c, _, _ in validated} == {("other-snapshot", "evidence-unresolvable"),
                                                    ("unknown-source", "evidence-unresolvable")}
    assert all(any(message in line for line in lines) for _, _, _, message in validated)
    # without the manifest nothing is resolved, and the set converts
    assert run("convert", path, "--to", "jsonl", "-o", out).exit_code == 0


@pytest.mark.parametrize("fmt", CANONICAL)
def test_keep_going_writes_the_resolving_rows_and_ledgers_the_others(tmp_path, fmt, manifest):
    path = write_set(RESOLVES + UNRESOLVED, tmp_path / f"set.{fmt}")
    out = tmp_path / f"out.{fmt}"
    result = run("convert", path, "-o", out, "--contexts", manifest, "--keep-going")
    assert result.exit_code == 1, result.output
    assert [r.id for r in evalconv.read(str(out)).rows] == ["resolves", "redacted-known"]
    ledger = [json.loads(line) for line in (tmp_path / f"out.{fmt}.rejected.jsonl").read_text("utf-8").splitlines()]
    assert [(e["id"], [f["code"] for f in e["findings"]]) for e in ledger] == [
        ("other-snapshot", ["evidence-unresolvable"]), ("unknown-source", ["evidence-unresolvable"])]


@pytest.mark.parametrize("fmt", CANONICAL)
def test_a_set_that_resolves_converts_as_without_the_manifest(tmp_path, fmt, manifest):
    path = write_set(RESOLVES, tmp_path / f"set.{fmt}")
    with_manifest, without = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("convert", path, "-o", with_manifest, "--contexts", manifest).exit_code == 0
    assert run("convert", path, "-o", without).exit_code == 0
    assert with_manifest.read_bytes() == without.read_bytes()


@pytest.mark.parametrize("text, words", [
    ('{"source": "kb"}\n', "sources.jsonl:1: snapshot: the entry for 'kb' needs its snapshot"),
    ("source,title\nkb,x\n", "sources.jsonl:1: a CSV contexts manifest needs the columns source and snapshot"),
])
@pytest.mark.parametrize("folder", [False, True])
def test_regression_convert_with_a_bad_manifest_is_one_line_and_writes_nothing(tmp_path, text, words, folder):
    listing = tmp_path / "sources.jsonl"
    listing.write_text(text, encoding="utf-8")
    (tmp_path / "in").mkdir()
    source = write_set(RESOLVES, tmp_path / "in" / "set.csv")
    out = tmp_path / ("outdir" if folder else "out.jsonl")
    result = run("convert", tmp_path / "in" if folder else source, "--to", "jsonl", "-o", out, "--contexts", listing)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def test_regression_an_output_on_the_manifest_is_refused(tmp_path, manifest):
    source = write_set(RESOLVES, tmp_path / "set.csv")
    before = manifest.read_bytes()
    result = run("convert", source, "--to", "jsonl", "-o", manifest, "--contexts", manifest)
    assert result.exit_code == 2 and manifest.read_bytes() == before


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_folder_conversion_checks_each_file_against_the_manifest(tmp_path, manifest, jobs):
    folder = tmp_path / "sets"
    folder.mkdir()
    for fmt in CANONICAL:
        write_set(RESOLVES, folder / f"good-{fmt}.{fmt}")
        write_set(RESOLVES + UNRESOLVED, folder / f"bad-{fmt}.{fmt}")
    summary = tmp_path / "summary.json"
    result = run("convert", folder, "--to", "jsonl", "-o", tmp_path / "out", "--contexts", manifest,
                 "-j", jobs, "--summary", summary)
    assert result.exit_code == 1
    status = {f["source"]: f["status"] for f in json.loads(summary.read_text("utf-8"))["files"]}
    assert status == {**{f"good-{fmt}.{fmt}": "ok" for fmt in CANONICAL},
                      **{f"bad-{fmt}.{fmt}": "invalid" for fmt in CANONICAL}}
    assert "error[evidence-unresolvable]" in result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(f"good-{fmt}.jsonl" for fmt in CANONICAL)


def test_contexts_with_the_dask_engine_is_refused_as_validate_refuses_it(tmp_path, manifest):
    source = write_set(RESOLVES, tmp_path / "set.parquet")
    with pytest.raises(UsageError, match="--contexts is checked in one process"):
        evalconv.convert(source, str(tmp_path / "o.jsonl"), to="jsonl", engine=object(),
                         contexts=load_contexts(str(manifest)))


@pytest.mark.parametrize("to", ["jsonl", "csv", "parquet", "ragas"])
def test_convert_with_the_manifest_on_two_cores_as_on_one(tmp_path, small_chunks, manifest, to):
    values = []
    for i in range(300):
        value = json.loads(json.dumps((RESOLVES + UNRESOLVED)[i % 4]))
        value["id"] = value["metadata"]["case"]["caseId"] = f"{value['id']}-{i}"
        values.append(value)
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    contexts = load_contexts(str(manifest))
    results = {}
    for jobs in (1, 2):
        out = tmp_path / f"out-{jobs}.{to if to != 'ragas' else 'ragas.jsonl'}"
        result = evalconv.convert(str(path), str(out), to=to, jobs=jobs, keep_going=True, contexts=contexts)
        data = result.to_json()
        for key in ("output", "ledger"):
            data.pop(key)
        data["loss"].pop("output", None)
        results[jobs] = (data, out.read_bytes(), (tmp_path / f"{out.name}.rejected.jsonl").read_bytes())
    assert results[1] == results[2]
    data = results[1][0]
    assert data["written"] == 150 and data["rejected"] == 150
    assert {f["code"] for f in data["errors"]} == {"evidence-unresolvable"}
