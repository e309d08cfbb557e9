"""The format registry: names -> format objects, loaded lazily, and format detection.

A new format is one module exposing `FORMAT` and one `register` call. Third-party formats
arrive through the `evalconv.formats` entry-point group (off when EVALCONV_NO_PLUGINS is set).
"""
from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from importlib.util import find_spec

from .canonical.errors import UsageError
from .canonical.format import Format


class Registry:
    def __init__(self) -> None:
        self._targets: dict[str, str | Format] = {}
        self._fallback: set[str] = set()
        self.broken: dict[str, str] = {}  # format name -> why it could not be loaded

    def register(self, name: str, target: str | Format, *, fallback: bool = False) -> None:
        """`target` is a Format or a dotted path `module:ATTR` imported on first use.
        `fallback` formats are tried last when detecting (the canonical ones)."""
        self._targets[name] = target
        if fallback:
            self._fallback.add(name)

    def unregister(self, name: str) -> None:
        self._targets.pop(name, None)
        self._fallback.discard(name)

    def names(self) -> list[str]:
        return list(self._targets)

    def get(self, name: str) -> Format:
        target = self._targets.get(name)
        if target is None:
            raise UsageError(f"unknown format '{name}' (known: {', '.join(self._targets)})")
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            try:
                target = getattr(importlib.import_module(module), attr or "FORMAT")
            except Exception as err:  # a broken plugin must not take the working formats down
                self.broken[name] = f"{type(err).__name__}: {err}"
                raise UsageError(f"format '{name}' cannot be loaded ({self.broken[name]})") from None
            self._targets[name] = target
        return target

    def _loadable(self, names: list[str]) -> list[Format]:
        out = []
        for name in names:
            try:
                out.append(self.get(name))
            except UsageError:
                continue  # recorded in self.broken; `evalconv formats` shows it
        return out

    def all(self) -> list[Format]:
        """Every format that loads; the ones that do not are in `broken`."""
        return self._loadable(list(self._targets))

    def _detection_order(self) -> list[Format]:
        specific = [n for n in self._targets if n not in self._fallback]
        return self._loadable(specific + [n for n in self._targets if n in self._fallback])

    def detect(self, path: str | None, head: str) -> Format:
        """The extension narrows the candidates, the content decides among them."""
        order = self._detection_order()
        by_name = [f for f in order if path and f.matches_path(path)]
        if by_name:  # `.langsmith.jsonl` beats `.jsonl`: keep the formats with the longest suffix
            longest = {f.name: _suffix_length(f, path) for f in by_name}
            best = max(longest.values())
            by_name = [f for f in by_name if longest[f.name] == best]
        if len(by_name) == 1:
            return by_name[0]
        for fmt in by_name or order:
            if fmt.detect(head):
                return fmt
        if by_name:
            return by_name[-1]
        raise UsageError("cannot tell the format from the name or the content; "
                         f"name it with --from ({', '.join(self.names())})")


def _suffix_length(fmt: Format, path: str) -> int:
    lowered = path.lower()
    return max((len(e) for e in fmt.extensions if lowered.endswith(e)), default=0)


REGISTRY = Registry()
for _name, _target in (("csv", "evalconv.canonical.csv_format:FORMAT"),
                       ("json", "evalconv.canonical.json_format:JSON_FORMAT"),
                       ("jsonl", "evalconv.canonical.json_format:JSONL_FORMAT"),
                       ("parquet", "evalconv.canonical.parquet_format:FORMAT")):
    REGISTRY.register(_name, _target, fallback=True)
for _name, _vendor in (("promptfoo", "promptfoo"), ("deepeval", "deepeval"), ("langsmith", "langsmith"),
                       ("braintrust", "braintrust"), ("hf", "huggingface")):
    if find_spec(f"evalconv.vendors.{_vendor}") is not None:
        REGISTRY.register(_name, f"evalconv.vendors.{_vendor}:FORMAT")

if not os.environ.get("EVALCONV_NO_PLUGINS"):
    for _ep in entry_points(group="evalconv.formats"):
        REGISTRY.register(_ep.name, _ep.value)
