"""The flags formats declare: their read options (`--delimiter`, `--allow-outside-refs`) on the
commands that read sets, their writer options (`--excel-safe`, `--config`) on `convert`. The
formats are loaded only when a command line is parsed."""
from __future__ import annotations

from typing import Any, ClassVar

import click

from ..registry import REGISTRY


class ReadFlags(click.Command):
    """A command with a flag for every read option a format declares (before `--help`)."""

    writes: ClassVar[bool] = False  # also a flag for every writer option
    _format_params: list[click.Parameter] | None = None

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if self._format_params is None:
            declared = dict(REGISTRY.declared_read_options())
            if self.writes:
                declared.update(REGISTRY.declared_options())
            self._format_params = [_flag(name, field.default, field.metadata) for name, field in declared.items()]
        params = super().get_params(ctx)
        return params[:-1] + self._format_params + params[-1:]  # --help stays last


class ReadAndWriteFlags(ReadFlags):
    writes = True


def _flag(name: str, default: Any, meta: Any) -> click.Option:
    if isinstance(default, bool):
        return click.Option([meta["flag"], name], is_flag=True, default=default, help=meta["help"])
    return click.Option([meta["flag"], name], default=default, metavar=meta["metavar"] or "VALUE",
                        help=meta["help"])
