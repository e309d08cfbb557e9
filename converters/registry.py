"""The format registry: names -> format objects, loaded lazily; detection; writer options.

Formats are found, not listed: the canonical ones, every package under `evalconv.vendors` that
exposes `FORMAT`, and third-party formats from the `evalconv.formats` entry-point group (off when
EVALCONV_NO_PLUGINS is set). A format that fails to import, or whose `detect` raises, never takes
the others down.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import pkgutil
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable

from .canonical.errors import UsageError
from .canonical.format import Format, ReadOptions, WriteOptions
from .canonical.suggest import did_you_mean

CANONICAL = (("csv", "evalconv.canonical.csv_format:FORMAT"),
             ("json", "evalconv.canonical.json_format:JSON_FORMAT"),
             ("jsonl", "evalconv.canonical.json_format:JSONL_FORMAT"),
             ("parquet", "evalconv.canonical.parquet_format:FORMAT"))
VENDORS = "evalconv.vendors"


class Registry:
    def __init__(self) -> None:
        self._targets: dict[str, str | Format] = {}
        self._fallback: set[str] = set()
        self.broken: dict[str, str] = {}           # format name -> why it could not be loaded
        self.detect_failures: dict[str, str] = {}  # format name -> what its detect raised

    def register(self, name: str, target: str | Format, *, fallback: bool = False) -> None:
        """`target` is a Format or a dotted path `module:ATTR` imported on first use.
        `fallback` formats (the canonical ones; also a format's own `fallback`) are tried last."""
        self._targets[name] = target
        if fallback:
            self._fallback.add(name)

    def unregister(self, name: str) -> None:
        self._targets.pop(name, None)
        self._fallback.discard(name)

    def names(self) -> list[str]:
        return list(self._targets)

    def for_output(self, path: str) -> str | None:
        """The format an output's name says: the longest extension a writing format claims (the
        canonical format wins a tie), or None."""
        lowered = path.lower()
        best: tuple[int, int, str] | None = None
        for fmt in self.all():
            if not fmt.can_write:
                continue
            length = max((len(e) for e in fmt.extensions if lowered.endswith(e)), default=0)
            if length:
                canonical = 1 if fmt.name in ("csv", "json", "jsonl") else 0
                if best is None or (length, canonical) > best[:2]:
                    best = (length, canonical, fmt.name)
        return best[2] if best else None

    def _extension_owner(self, word: str) -> str | None:
        """The format a bare extension given as a format name belongs to (`--to yaml` -> promptfoo)."""
        word = word.strip().lower().lstrip(".")
        if not word or not word.replace("-", "").replace(".", "").isalnum():
            return None
        try:
            return self.for_output(f"x.{word}")
        except Exception:  # a broken plugin: no suggestion rather than a second error
            return None

    def get(self, name: str) -> Format:
        target = self._targets.get(name)
        if target is None:
            known = sorted(self._targets)  # the same list whatever was typed: the hint says which is closest
            owner = self._extension_owner(name)
            hint = (f"; .{name.lstrip('.').lower()} files are written by --to {owner}" if owner
                    else did_you_mean(name, known))
            raise UsageError(f"unknown format '{name}'{hint} (known: {', '.join(known)})")
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            try:
                target = getattr(importlib.import_module(module), attr or "FORMAT")
                if not isinstance(target, Format):
                    raise TypeError(f"{module}:{attr or 'FORMAT'} is not a Format")
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

    def _is_fallback(self, fmt: Format) -> bool:
        return fmt.fallback or fmt.name in self._fallback

    def _detection_order(self) -> list[Format]:
        loaded = self.all()
        return [f for f in loaded if not self._is_fallback(f)] + [f for f in loaded if self._is_fallback(f)]

    def confidence(self, fmt: Format, head: str) -> float:
        """`fmt.detect(head)`, guarded: a detect that raises counts as 0 and is recorded."""
        try:
            return float(fmt.detect(head))
        except Exception as err:  # a format's bug must not reach the user as a traceback
            self.detect_failures[fmt.name] = f"{type(err).__name__}: {err}"
            return 0.0

    def detect(self, path: str | None, head: str) -> Format:
        """The extension narrows the candidates, the content decides among them: the most
        confident one wins, the earlier one (specific before canonical) on a tie."""
        order = self._detection_order()
        by_name = [f for f in order if path and f.matches_path(path)]
        if by_name and path:  # `.langsmith.jsonl` beats `.jsonl`: keep the formats with the longest suffix
            longest = {f.name: _suffix_length(f, path) for f in by_name}
            best = max(longest.values())
            by_name = [f for f in by_name if longest[f.name] == best]
        if len(by_name) == 1:
            return by_name[0]
        scored = [(self.confidence(fmt, head), -i, fmt) for i, fmt in enumerate(by_name or order)]
        confidence, _, chosen = max(scored, key=lambda s: s[:2], default=(0.0, 0, None))
        if chosen is not None and confidence > 0:
            return chosen
        if by_name:
            return by_name[-1]
        from .canonical.csv_format import looks_like_sheet, own_sheet  # lazily: start-up stays fast

        if looks_like_sheet(head):  # a TSV, or a sheet under a name evalconv does not know
            raise UsageError(own_sheet(path or "-"))
        raise UsageError("cannot tell the format from the name or the content; "
                         f"name it with --from ({', '.join(self.names())})")

    def declared_options(self) -> dict[str, dataclasses.Field[Any]]:
        """Every writer option some format declares, by name (the command line's format flags)."""
        return self._declared(lambda fmt: fmt.options.declared())

    def declared_read_options(self) -> dict[str, dataclasses.Field[Any]]:
        """Every read option some format declares, by name (`--delimiter`, `--allow-outside-refs`)."""
        return self._declared(lambda fmt: fmt.read_options.declared())

    def _declared(self, of: Callable[[Format], dict[str, dataclasses.Field[Any]]]) -> dict[str, dataclasses.Field[Any]]:
        out: dict[str, dataclasses.Field[Any]] = {}
        for fmt in self.all():
            for name, declared in of(fmt).items():
                out.setdefault(name, declared)
        return out

    def split_options(self, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """`given` as (read options, writer options): a name some format reads with is a read option."""
        reading = self.declared_read_options() if given else {}
        return ({k: v for k, v in given.items() if k in reading},
                {k: v for k, v in given.items() if k not in reading})

    def writer_options(self, fmt: Format, path: str | None, given: dict[str, Any]) -> WriteOptions:
        """`fmt`'s typed options for writing to `path`. An option left at its default is not
        given; one the format does not declare is refused in the words of the format that does."""
        passed = _own(fmt, fmt.options.declared(), self.declared_options, given, passing_over=False)
        return fmt.make_options(path, **passed)

    def reader_options(self, fmt: Format, given: dict[str, Any], *, source: str | None = None,
                       passing_over: bool = False) -> ReadOptions:
        """What `fmt`'s reader is told, typed; checked as `writer_options` checks a writer's, each
        refusal one line naming `source`. `passing_over`: the input is one file of a folder, and
        an option another format reads with is meant for the folder's files of that format."""
        try:
            passed = _own(fmt, fmt.read_options.declared(), self.declared_read_options, given,
                          passing_over=passing_over)
            return fmt.make_read_options(**passed)
        except UsageError as err:
            raise UsageError(err.message, source=source) from None

    def check_read_values(self, given: dict[str, Any]) -> None:
        """Refuse a read option no format declares, or a value its format would refuse, before
        any input is opened (the command line: one line, whatever the inputs are)."""
        declared = self.declared_read_options()
        for name, value in given.items():
            if name not in declared:
                raise UsageError(f"no format reads with an option '{name}'")
            if value != declared[name].default:
                owner = next(f for f in self.all() if name in f.read_options.declared())
                owner.make_read_options(**{name: value})


def _own(fmt: Format, own: dict[str, dataclasses.Field[Any]],
         everywhere: Callable[[], dict[str, dataclasses.Field[Any]]], given: dict[str, Any], *,
         passing_over: bool) -> dict[str, Any]:
    """The options of `given` that `fmt` declares (`own`). Another format's option at its default
    is not given; set, it is refused in that format's words (`passing_over`: left out)."""
    passed = {}
    for name, value in given.items():
        if name in own:
            passed[name] = value
            continue
        elsewhere = everywhere().get(name)
        if elsewhere is None:
            raise UsageError(f"format '{fmt.name}' has no option '{name}'")
        if value != elsewhere.default and not passing_over:
            raise UsageError(f"{elsewhere.metadata['flag']} {elsewhere.metadata['goes_with']}")
    return passed


def _suffix_length(fmt: Format, path: str) -> int:
    lowered = path.lower()
    return max((len(e) for e in fmt.extensions if lowered.endswith(e)), default=0)


def vendor_packages() -> list[str]:
    """The packages under evalconv.vendors (not the `_`-prefixed shared helpers), by name."""
    try:
        vendors = importlib.import_module(VENDORS)
    except ImportError:
        return []
    return sorted(m.name for m in pkgutil.iter_modules(vendors.__path__) if m.ispkg and not m.name.startswith("_"))


@functools.lru_cache(maxsize=1)
def _installed_entry_points() -> Any:  # EntryPoints (SelectableGroups before Python 3.12: the same select())
    return entry_points()


def plugin_entry_points(group: str) -> list[EntryPoint]:
    """The installed packages' entry points in `group` (none when EVALCONV_NO_PLUGINS is set), read
    once a process for the formats and the harness readers alike (each read scans every package)."""
    if os.environ.get("EVALCONV_NO_PLUGINS"):
        return []
    return list(_installed_entry_points().select(group=group))


REGISTRY = Registry()
for _name, _target in CANONICAL:
    REGISTRY.register(_name, _target, fallback=True)
for _vendor in vendor_packages():  # a package name's `_` is the format name's `-` (pydantic_evals: pydantic-evals)
    REGISTRY.register(_vendor.replace("_", "-"), f"{VENDORS}.{_vendor}:FORMAT")

for _ep in plugin_entry_points("evalconv.formats"):
    REGISTRY.register(_ep.name, _ep.value)
