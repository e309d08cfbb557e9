"""Every hint names a flag that exists and does what it says (issue 26: after 50 warnings convert
said "use --format json or --report for all", but convert has no --format and its report holds no
warnings)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import click
import pytest

import evalconv

from conftest import ROOT, row, run_cli
from evalconv.cli import cli
from evalconv.cli.common import SHOWN_PER_KIND

CLI = ROOT / "converters" / "cli"
HINT = re.compile(r"(?:for all|lists them all)")


def _flags(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def _hints() -> list[tuple[str, str]]:
    """(module, text) of every string in the command modules that tells how to see all of something."""
    found = []
    for path in sorted(CLI.glob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node)}
        for node in ast.walk(tree):
            if id(node) not in docstrings and isinstance(node, ast.Constant) and isinstance(node.value, str) and HINT.search(node.value):
                found.append((path.stem, node.value))
    return found


def _command_of(module: str) -> click.Command:
    name = {"import_": "import", "info": "formats", "batch": "convert"}.get(module, module)
    return cli.commands[name]


def test_there_are_hints_to_check():
    assert len(_hints()) >= 4


@pytest.mark.parametrize("module,hint", _hints())
def test_every_hint_names_flags_its_command_has(module, hint):
    named = re.search(r"evalconv (\w+)", hint)
    command = cli.commands[named.group(1)] if named else _command_of(module)
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", hint):
        assert flag in _flags(command), f"{module}: {hint!r} names {flag}, which `{command.name}` does not have"


def _many_warnings(write_jsonl) -> Path:
    rows = [row(f"b-{i}", oracle="expected-behavior-only", expected=("An answer",)) for i in range(SHOWN_PER_KIND + 5)]
    return write_jsonl(rows)


def test_convert_hint_after_many_warnings_leads_to_all_of_them(write_jsonl, tmp_path, capsys):
    source = _many_warnings(write_jsonl)
    code, err = run_cli([str(source), "--to", "jsonl", "-o", str(tmp_path / "out.jsonl")], capsys)
    assert code == 0 and "5 more warnings" in err and "evalconv validate FILE --format json" in err
    listed = evalconv.validate([str(source)]).to_json()  # what `validate --format json` prints
    assert json.dumps(listed).count('"expected-on-behavior-only"') == SHOWN_PER_KIND + 5


def test_validate_hint_names_its_own_format_flag(write_jsonl, capsys):
    code, err = run_cli(["validate", str(_many_warnings(write_jsonl))], capsys)
    assert "... and 5 more warnings (--format json lists them all)" in err
