"""The dataset card: README.md with the YAML header the Hub and `datasets.load_dataset` read
(configs, splits, features), then the columns, the starter rows and what was carried, in prose."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from evalconv.canonical.errors import ReadError
from evalconv.canonical.parquet_format import COLUMNS
from evalconv.canonical.safe_yaml import load_yaml
from evalconv.canonical.schema import row_schema

WRITTEN_BY = "written by evalconv"  # the atomic folder output replaces only folders that say so
DATA_DIR = "data"
SHOWN_IDS = 5

_TOP = {
    "id": "The case's id, unique in the set; equals `case.caseId`.",
    "input": "What the system under test receives, when it is text.",
    "input:json": "The input as JSON text, when it is not text (a conversation, variables, a number).",
    "expected": "The oracle's payload, when it is text. Empty (null) with `expected:json` empty too: no expected value.",
    "expected:json": "The expected value as JSON text, when it is not text (`null` included).",
    "metadata:json": "The row's other metadata, as a JSON object in text (keys verbatim).",
}


@dataclass
class CardStats:
    rows: int = 0
    num_bytes: int = 0  # the rows' size in Arrow, as `datasets` counts a split (`Table.nbytes`)
    starters: list[str] = field(default_factory=list)
    starter_count: int = 0
    placeholders: list[str] = field(default_factory=list)  # imported rows whose expected behaviour is a placeholder
    placeholder_count: int = 0
    carried: dict[str, int] = field(default_factory=dict)  # column -> rows that needed it


def _describe(column: str) -> str:
    if column in _TOP:
        return _TOP[column]
    definitions = row_schema()["definitions"]
    name = column.split(".", 1)[1]
    spec = definitions["caseProfile"]["properties"][name]
    ref = spec.get("$ref", "").split("/")[-1]
    text = spec.get("description") or definitions.get(ref, {}).get("description", "")
    values = spec.get("enum") or definitions.get(ref, {}).get("enum")
    if values:
        text += " One of: " + ", ".join(f"`{v}`" for v in values) + "."
    if name == "extensions":
        text += " JSON text."
    return text


def features() -> list[dict[str, Any]]:
    return [{"name": name, "list": "string"} if kind == "list" else {"name": name, "dtype": "string"}
            for name, kind in COLUMNS]


def render(title: str, split: str, data_file: str, stats: CardStats) -> str:
    header = {
        "pretty_name": title,
        "tags": ["evalconv", "evaluation", "golden-set"],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": split, "path": f"{DATA_DIR}/{split}-*"}]}],
        "dataset_info": {"features": features(),
                         "splits": [{"name": split, "num_bytes": stats.num_bytes, "num_examples": stats.rows}]},
    }
    out = ["---", yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000).rstrip(), "---", "",
           f"# {title}", "",
           f"An LLM evaluation golden set of {stats.rows} cases, {WRITTEN_BY} in its canonical Parquet "
           f"layout: `{data_file}`, split `{split}`. Each row is one case: `input`, `expected` and the "
           "case profile (`case.*`: what the case tests and how to grade it).", ""]
    if stats.starter_count:
        shown = ", ".join(f"`{i}`" for i in stats.starters)
        more = f" and {stats.starter_count - len(stats.starters)} more" if stats.starter_count > len(stats.starters) else ""
        out += ["## Starter rows", "",
                f"**{stats.starter_count} of the {stats.rows} rows "
                f"{'is a starter example' if stats.starter_count == 1 else 'are starter examples'}** "
                "(`case.provenance` is `starter-example` or `overlay-starter-needs-expert-validation`): "
                f"examples of the shape, not validated gold answers. Rows: {shown}{more}. Have a domain "
                "expert review or replace them before scores on this set are trusted.", ""]
    if stats.placeholder_count:
        shown = ", ".join(f"`{i}`" for i in stats.placeholders)
        more = (f" and {stats.placeholder_count - len(stats.placeholders)} more"
                if stats.placeholder_count > len(stats.placeholders) else "")
        out += ["## Rows without an expected behaviour", "",
                f"**{stats.placeholder_count} of the {stats.rows} rows "
                f"{'has' if stats.placeholder_count == 1 else 'have'} the placeholder expected behaviour "
                f"`evalconv import` wrote** (`case.expectedBehavior`): a reviewer must write what the system "
                f"should do before these rows grade anything. Rows: {shown}{more}.", ""]
    out += ["## Columns", "", "| column | type | what it holds |", "|---|---|---|"]
    types = {"text": "string", "json": "string (JSON)", "list": "list of strings"}
    out += [f"| `{name}` | {types[kind]} | {_describe(name)} |" for name, kind in COLUMNS]
    out += ["", "A missing value is null. `\"\"`, `[]` and `[\"\"]` are values, distinct from null.", ""]
    if stats.carried:
        out += ["## Carried as JSON text", "",
                "A dataset column has one type. These values were not text, so they are in a JSON-text "
                "column (parse it with `json.loads`); evalconv reads them back exactly:", ""]
        out += [f"- `{column}`: {stats.carried[column]} row(s)" for column, _ in COLUMNS if column in stats.carried]
        out.append("")
    out += ["## Reading it back", "",
            "```python", "import datasets", f'ds = datasets.load_dataset("path/to/this/folder", split="{split}")', "```",
            "", "```sh", "evalconv path/to/this/folder --to jsonl -o set.jsonl   # the canonical rows, exactly", "```", ""]
    return "\n".join(out)


def read_header(text: str) -> dict[str, Any] | None:
    """The YAML header of a card, or None when it has none (or not a mapping)."""
    if not text.startswith("---"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    try:  # the guarded loader: a header nested 100k levels deep is refused, not a RecursionError
        value = load_yaml(text[3:end], "README.md")[1]
    except ReadError:
        return None
    return value if isinstance(value, dict) else None
