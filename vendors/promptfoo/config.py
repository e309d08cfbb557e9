"""`--config PATH` (writer option `config`): a runnable promptfooconfig.yaml beside the tests.

It points at the tests file by a path relative to the config, has one prompt over the vars the
tests use (`{{input}}` for text inputs), and the offline `echo` provider as the placeholder the
user replaces with the target. It is written atomically when the tests writer closes.
"""
from __future__ import annotations

import os
import re
from typing import Any, Iterable

import yaml
from evalconv.atomic import AtomicOutput
from evalconv.canonical.errors import UsageError

_NAME = re.compile(r"[A-Za-z_]\w*\Z")
_GLOB = re.compile(r"[*?\[\]{}]")
_HEADER = """\
# promptfoo config written by evalconv. Before a real run, edit it:
#  - providers: `echo` only returns the prompt (it runs offline); put the model under test here.
#  - prompts: the one prompt shows the test's vars; shape it the way your application does.
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


def prompt_for(var_names: Iterable[str]) -> str:
    """`{{input}}` when every test has just `input`; else each var the tests use, labelled,
    as text (objects and lists as JSON), shown only where the test defines it."""
    names = list(dict.fromkeys(var_names))
    if names in ([], ["input"]):
        return "{{input}}"
    if names == ["messages"]:
        return "{{ messages | dump }}"  # a JSON chat: chat providers read it as the messages
    parts = []
    for name in names:
        if _NAME.match(name):
            shown = f"{{% if {name} is string %}}{{{{ {name} }}}}{{% else %}}{{{{ {name} | dump }}}}{{% endif %}}"
            label = "" if name == "input" else f"{name}: "
            parts.append(f"{{% if {name} is defined %}}{label}{shown}\n{{% endif %}}")
    return "".join(parts) or "{{input}}"


def config_text(config: str, tests_path: str, var_names: Iterable[str]) -> str:
    body: dict[str, Any] = {
        "description": f"evalconv export: {os.path.basename(tests_path)}",
        "prompts": [prompt_for(var_names)],
        "providers": ["echo"],
        "tests": [f"file://{_relative(tests_path, config)}"],
    }
    text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=1_000_000)
    text = text.replace("providers:\n- echo\n", "providers:\n- echo  # replace with the target, "
                        "e.g. openai:chat:gpt-4.1-mini\n")
    return _HEADER.format(config=os.path.basename(config)) + text


def write_config(config: str, tests_path: str, var_names: Iterable[str]) -> None:
    with AtomicOutput(config) as out:
        assert out.stream is not None
        out.stream.write(config_text(config, tests_path, var_names))
        out.commit()
