"""Sets at schema versions 1 and 2 written in every canonical format, and the CLI run on them."""
from __future__ import annotations

import json

from click.testing import CliRunner

from conftest import row
from evalconv.canonical.row import Row
from evalconv.cli import cli
from evalconv.registry import REGISTRY
from evalconv.reports import LossReport

CANONICAL = ("csv", "json", "jsonl", "parquet")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write_set(values: list[dict], path) -> str:
    """Rows written with the format's own writer, unchecked (so a set may hold invalid rows)."""
    fmt = REGISTRY.get(path.suffix[1:])
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = fmt.open_writer(out, LossReport(fmt.name, str(path)), fmt.make_options(str(path)))
        for value in values:
            writer.write(Row.from_json(value))
        writer.close()
    return str(path)


def read_back(path) -> list[dict]:
    result = run(path, "--to", "jsonl")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.split("\n") if line.strip()]


def v2(row_id: str = "cs-1", **case_extra) -> dict:
    return row(row_id, schemaVersion=2, **case_extra)


def findings(path, *extra) -> list[dict]:
    result = run("validate", path, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)["files"][0]
    return data["errors"] + data["warnings"]


EVIDENCE_ROW = v2("ev", contextRefs=[{"source": "kb|refunds", "snapshot": "2024-05-01", "span": {"start": 3, "end": 9}},
                                     {"source": "kb\\x", "snapshot": {"$evidence": "redacted"}, "span": "§2"}],
                  targetTurn=2, permission={"callerRole": "customer", "resourceScope": {"$evidence": "irrelevant"}},
                  linkedConcerns=["permission"])
EVIDENCE_ROW["input"] = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                                      {"role": "assistant", "content": {"$evidence": "redacted"}}]}


REDACTED = {"$evidence": "redacted"}


def refs(row_id: str, *references: dict) -> dict:
    """A version-2 row that names these context references."""
    return v2(row_id, contextRefs=list(references))
