"""`--eval-definition PATH`: the eval that grades the items, written beside them.

A JSON document of two parts, each what the SDK takes:
- `eval`: `client.evals.create(**doc["eval"])`: a custom data source whose item schema is
  what evalconv writes, and the testing criteria graders.py chooses for the set;
- `run`: `client.evals.runs.create(eval_id, **doc["run"])`: a completions run whose prompt is
  the item reference `item.messages` (the model sees the messages, never item.expected or the
  case profile), reading the uploaded items file (`file-REPLACE` until it is uploaded).
It is written atomically once the items file is in place.
"""
from __future__ import annotations

import os
from typing import Any

from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import UsageError
from evalconv.canonical.format import SideFiles

from .fields import PROMPT_FIELD
from .graders import Families, testing_criteria

RUN_MODEL = "gpt-4.1-mini"  # the system under test: a placeholder the user replaces
FILE_ID = "file-REPLACE"    # the id `client.files.create(file=..., purpose="evals")` gives the items file

ITEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        PROMPT_FIELD: {"type": "array", "items": {"type": "object", "properties": {
            "role": {"type": "string"}, "content": {"type": "string"}}, "required": ["role", "content"]}},
        "expected": {},
        "metadata": {"type": "object"},
    },
    "required": ["id", PROMPT_FIELD, "metadata"],
}


def check_definition_option(definition: str | None, items_path: str | None, variant: str) -> None:
    if not definition:
        return
    if variant != "items":
        raise UsageError("--eval-definition goes with Evals API items (.jsonl), not the legacy registry file",
                         field="eval_definition")
    if items_path is None:
        raise UsageError("--eval-definition needs the items in a file (-o PATH): the run reads them",
                         field="eval_definition")
    if os.path.abspath(definition) == os.path.abspath(items_path):
        raise UsageError("--eval-definition names the items file itself; give the definition its own path",
                         source=definition, field="eval_definition")


def definition(items_path: str, families: Families) -> tuple[dict[str, Any], list[str]]:
    """The eval and run documents, and what the user must be told about the criteria."""
    criteria, notes = testing_criteria(families)
    name = os.path.basename(items_path)
    doc = {
        "eval": {
            "name": f"evalconv: {name}"[:256],
            "data_source_config": {"type": "custom", "item_schema": ITEM_SCHEMA, "include_sample_schema": True},
            "testing_criteria": criteria,
            "metadata": {"written_by": "evalconv", "items_file": name[:512]},
        },
        "run": {
            "name": f"{name} run"[:256],
            "data_source": {
                "type": "completions",
                "model": RUN_MODEL,
                "input_messages": {"type": "item_reference", "item_reference": f"item.{PROMPT_FIELD}"},
                "source": {"type": "file_id", "id": FILE_ID},
            },
        },
    }
    return doc, notes


def write_definition(path: str, items_path: str, families: Families, files: SideFiles) -> list[str]:
    doc, notes = definition(items_path, families)
    files.write_text(path, jsonvalue.dumps(doc, indent=True) + "\n")  # with the items file, or not at all
    return notes
