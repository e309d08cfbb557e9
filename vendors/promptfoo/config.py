"""`--config PATH` (writer option `config`): a runnable promptfooconfig.yaml beside the tests.

It points at the tests file by a path relative to the config, has one prompt over the vars the
tests use (`{{input}}` for text inputs), and the offline `echo` provider as the placeholder the
user replaces with the target. It is written once the tests file is complete, as a side file
(`Format.committed`), published with the tests file or not at all.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable

import yaml
from evalconv.canonical.errors import UsageError
from evalconv.canonical.format import SideFiles

_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_GLOB = re.compile(r"[*?\[\]{}]")
_HEADER = """\
# promptfoo config written by evalconv. Before a real run, edit it:
#  - providers: `echo` only returns the prompt (it runs offline); put the model under test here.
#  - prompts: the one prompt passes each test's input exactly (text as is, a chat as its role
#    messages, an object as JSON); shape it the way your application does.
#  - llm-rubric / factuality / trajectory checks need a grader (defaultTest.options.provider)
#    and trajectory checks need tracing; tests marked by evalconv as needing a person always fail.
# Run: promptfoo eval -c {config}
"""


def check_config_option(config: str | None, tests_path: str | None) -> None:
    if not config:
        return
    if tests_path is None:
        raise UsageError("--config needs the tests in a file (-o PATH): the config must point at them",
                         field="config")
    if os.path.abspath(config) == os.path.abspath(tests_path):
        raise UsageError("--config names the tests file itself; give the config its own path",
                         source=config, field="config")
    if _GLOB.search(_relative(tests_path, config)):
        raise UsageError("the tests path holds glob characters (* ? [ ] { }), which promptfoo would expand",
                         source=tests_path, field="config")


def _relative(tests_path: str, config: str) -> str:
    folder = os.path.dirname(os.path.abspath(config))
    return os.path.relpath(os.path.abspath(tests_path), folder).replace(os.sep, "/")


def prompt_for(var_names: Iterable[str], shapes: Iterable[str] = ()) -> str:
    """One prompt that shows each test's input exactly, whatever else is in the set: a text input
    as itself (`{{input}}`), a chat input (`messages` only) as the JSON list of its messages, which
    chat providers send as role messages, and an object input as its JSON object. Tests choose
    their branch by the vars they define, so no test needs a prompt label; nothing is added
    around the input (no label, no trailing newline)."""
    names = list(dict.fromkeys(var_names))
    kinds = set(shapes) or {_shape(names)}
    if kinds == {"text"}:
        return "{{input}}"
    if kinds == {"chat"}:
        return "{{ messages | dump }}"  # a JSON chat: chat providers read it as the messages
    shown = [n for n in names if _NAME.match(n)]
    branches = []
    if "chat" in kinds:
        branches.append((_only("messages", shown), "{{ messages | dump }}"))
    if "text" in kinds:
        branches.append((_only("input", shown), "{% if input is string %}{{ input }}{% else %}"
                         "{{ input | dump }}{% endif %}"))
    whole = "{{ {" + ", ".join(f'"{n}": {n}' for n in shown) + "} | dump }}"
    if len(branches) == 0:
        return whole
    out = "".join(f"{{% {'if' if i == 0 else 'elif'} {cond} %}}{body}" for i, (cond, body) in enumerate(branches))
    return out + ("{% else %}" + whole if "object" in kinds else "") + "{% endif %}"


def _only(name: str, names: list[str]) -> str:
    return " and ".join([f"{name} is defined"] + [f"{n} is not defined" for n in names if n != name])


def _shape(names: list[str]) -> str:
    return "text" if names in ([], ["input"]) else "chat" if names == ["messages"] else "object"


def shape_of(var_names: Iterable[str]) -> str:
    """'text' (vars `input` only), 'chat' (`messages` only) or 'object'."""
    return _shape(list(var_names))


def config_text(config: str, tests_path: str, var_names: Iterable[str], shapes: Iterable[str] = ()) -> str:
    body: dict[str, Any] = {
        "description": f"evalconv export: {os.path.basename(tests_path)}",
        "prompts": [prompt_for(var_names, shapes)],
        "providers": ["echo"],
        "tests": [f"file://{_relative(tests_path, config)}"],
    }
    text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=1_000_000)
    text = text.replace("providers:\n- echo\n", "providers:\n- echo  # replace with the target, "
                        "e.g. openai:chat:gpt-4.1-mini\n")
    return _HEADER.format(config=os.path.basename(config)) + text


def write_config(files: SideFiles, config: str, tests_path: str, var_names: Iterable[str],
                 shapes: Iterable[str] = ()) -> None:
    files.write_text(config, config_text(config, tests_path, var_names, shapes))
