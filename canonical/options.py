"""What a user tells a format: typed options declared on the format, each with its flag.

A writer's options are a `WriteOptions` subclass (`format.py`), a reader's a `ReadOptions`
subclass; both declare their fields with `option(...)`, and `typed` checks what was given
against them: the one place a name the format does not declare, or a value of the wrong type,
is refused. (Not in `format.py`: `source.Lines` carries a reader's options, and `format.py`
imports `source`.)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from .errors import UsageError

T = TypeVar("T")


def option(default: Any, *, flag: str, help: str, goes_with: str, metavar: str | None = None,
           writes_file: bool = False) -> Any:
    """Declare an option: a field of a `WriteOptions` or `ReadOptions` subclass with its
    command-line flag. `goes_with` finishes the sentence that refuses the flag for another format
    ("--excel-safe" + " guards CSV cells; it goes with a CSV output"). `writes_file`: the value is
    the path of another file the writer writes (checked like -o, and only for one file)."""
    return dataclasses.field(default=default, metadata={"flag": flag, "help": help, "goes_with": goes_with,
                                                        "metavar": metavar, "writes_file": writes_file})


@dataclass(frozen=True)
class ReadOptions:
    """What a reader is told besides its input (CSV: `--delimiter`; promptfoo:
    `--allow-outside-refs`). A format that reads with options of its own subclasses this with
    `option` fields and names it in `Format.read_options`; its reader takes them with
    `lines.told(TheOptions)`. Every field is an option: a value left at its default is not given."""

    @classmethod
    def declared(cls) -> dict[str, dataclasses.Field[Any]]:
        return {f.name: f for f in dataclasses.fields(cls)}

    def get(self, name: str, default: Any = None) -> Any:
        """`lines.options.get("delimiter")`: the contract before read options were typed, when
        an option not given was not there at all."""
        value = getattr(self, name, None)
        return default if value is None else value


def typed(kind: type[T], declared: dict[str, dataclasses.Field[Any]], owner: str, given: dict[str, Any],
          **fixed: Any) -> T:
    """`kind(**fixed, **given)`, once `given` names only `declared` options and each value has its
    field's type (one line each: "format 'csv' has no option 'x'", "--flag: 'yes' is not a bool")."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise UsageError(f"format '{owner}' has no option {', '.join(map(repr, unknown))}")
    hints = get_type_hints(kind)
    for name, value in given.items():
        if not is_a(value, hints[name]):
            raise UsageError(f"{declared[name].metadata['flag']}: {value!r} is not a {hints[name]}")
    return kind(**fixed, **given)


def is_a(value: Any, hint: Any) -> bool:
    allowed = getattr(hint, "__args__", (hint,))
    return any(value is None if kind is type(None) else
               isinstance(value, kind) and not (kind is int and isinstance(value, bool))
               for kind in allowed)
