"""A group's commands imported when first named, so `evalconv runs sql` does not load every command.

Names and order are known without importing: `--help`, did-you-mean and shell completion list
the same commands as before; looking one up (`group.commands[name]`) imports its module.
"""
from __future__ import annotations

import importlib
from typing import Iterator, MutableMapping

import click


class LazyCommands(MutableMapping[str, click.Command]):
    """Command name -> the command; `"module:attr"` (relative to evalconv.cli) until first looked up."""

    def __init__(self, targets: dict[str, str]) -> None:
        self._found: dict[str, str | click.Command] = dict(targets)

    def __getitem__(self, name: str) -> click.Command:
        found = self._found[name]
        if isinstance(found, str):
            module, _, attr = found.partition(":")
            found = getattr(importlib.import_module(module, __package__), attr)
            assert isinstance(found, click.Command), found
            self._found[name] = found
        return found

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._found[name] = command

    def __delitem__(self, name: str) -> None:
        del self._found[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)
