"""The one YAML loader for every file evalconv reads (promptfoo files, dataset cards, sheet maps):
JSON values only, aliases that cannot explode, bounded nesting, errors as one located line."""
from __future__ import annotations

import math
import re
from contextlib import contextmanager
from typing import Any, Hashable, Iterable, Iterator

import yaml
from . import jsonvalue
from .errors import ReadError

# A value may nest as deep as canonical JSON allows, under the few levels of a file (a promptfoo
# file: list, test, vars or metadata, key).
MAX_DEPTH = jsonvalue.MAX_DEPTH + 8


def iter_yaml_list(lines: Iterable[str], source: str) -> Iterator[tuple[int, Any]]:
    """(line, value) for each item of a YAML file that is one top-level list, read and built a
    test at a time: memory holds one test, not the file. libyaml parses (C, iterative); the
    careful Python composer builds each item, so nesting stays bounded and aliases checked."""
    loader = (_ItemLoader if _C_LOADER else _JSONLoader)(_CheckedText(lines, source))
    try:
        with _as_read_errors(source):
            loader.get_event()  # stream start
            if loader.check_event(yaml.StreamEndEvent):
                return
            loader.get_event()  # document start
            if not loader.check_event(yaml.SequenceStartEvent):
                raise ReadError("expected a YAML list of tests", source=source, line=1)
            loader.get_event()
            while not loader.check_event(yaml.SequenceEndEvent):
                node = loader.compose_node(None, None)
                _check_expansion(node, source)
                yield node.start_mark.line + 1, loader.construct_document(node)
            loader.get_event()  # sequence end
            loader.get_event()  # document end
            if not loader.check_event(yaml.StreamEndEvent):
                raise ReadError("a promptfoo tests file holds one YAML document", source=source,
                                line=loader.peek_event().start_mark.line + 1)
    finally:
        loader.dispose()


class _CheckedText:
    """Lines as a file for the YAML parser, refused at once (with the line) where they hold a
    character YAML does not allow, as PyYAML's own reader would."""

    _NOT_YAML = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")

    def __init__(self, lines: Iterable[str], source: str) -> None:
        self._lines, self._source = iter(lines), source
        self._buffer, self._number = "", 0

    def read(self, size: int = -1) -> str:
        while size < 0 or len(self._buffer) < size:
            line = next(self._lines, None)
            if line is None:
                break
            self._number += 1
            bad = self._NOT_YAML.search(line)
            if bad:
                raise ReadError(f"invalid YAML: character U+{ord(bad.group()):04X} is not allowed in YAML",
                                source=self._source, line=self._number)
            self._buffer += line
        if size < 0:
            size = len(self._buffer)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


@contextmanager
def _as_read_errors(source: str) -> Iterator[None]:
    try:
        yield
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).split("\n", 1)[0]
        if "maximum nesting depth" in problem:  # libyaml's own limit, met before ours
            problem = f"nesting is too deep (more than {MAX_DEPTH} levels)"
        raise ReadError(f"invalid YAML: {problem}", source=source,
                        line=mark.line + 1 if mark else None) from None
    except RecursionError:  # a backstop: compose_node stops at MAX_DEPTH first
        raise ReadError("invalid YAML: nesting is too deep", source=source) from None


def load_yaml(text: str, source: str) -> tuple[Any, Any]:
    loader = None
    try:
        # libyaml is many times faster and lighter, but composes on the C stack: only for text
        # whose nesting a C-level event scan has bounded; anything odd goes the careful way.
        loader = _CJSONLoader(text) if _C_LOADER and _nesting_within_bounds(text) else _JSONLoader(text)
        node = loader.get_single_node()
        if node is not None:
            _check_expansion(node, source)
        return node, (loader.construct_document(node) if node is not None else None)
    except yaml.reader.ReaderError as err:
        line = text.count("\n", 0, err.position) + 1
        char = err.character if isinstance(err.character, int) else ord(err.character[:1] or "\0")
        raise ReadError(f"invalid YAML: character U+{char:04X} is not allowed in YAML",
                        source=source, line=line) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err).split("\n", 1)[0]
        raise ReadError(f"invalid YAML: {problem}", source=source,
                        line=mark.line + 1 if mark else None) from None
    except RecursionError:  # a backstop: compose_node stops at MAX_DEPTH first
        raise ReadError("invalid YAML: nesting is too deep", source=source) from None
    finally:
        if loader is not None:
            loader.dispose()


MAX_EXPANSION = 1_000_000  # values after aliases are expanded, beyond 10 per written value


def _check_expansion(root: Any, source: str) -> None:
    """Refuse YAML whose aliases expand to far more values than it writes (a billion laughs)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise ReadError("invalid YAML: an alias refers to the node that contains it", source=source,
                            line=node.start_mark.line + 1)
        active.add(key)
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else []
        sizes[key] = 1 + sum(size(child) for child in children)
        active.discard(key)
        return sizes[key]

    total = size(root)
    if total > MAX_EXPANSION and total > 10 * len(sizes):
        raise ReadError(f"invalid YAML: its aliases expand to {total:,} values from {len(sizes):,} "
                        "written ones (an alias bomb?)", source=source)


class _JSONLoader(yaml.SafeLoader):
    """Safe YAML that builds JSON values only: dates stay the text they were written as (js-yaml
    would make Date objects of them), keys become strings as in JavaScript, and binary, sets,
    ordered maps, NaN and infinities are errors with their line. The pure-Python loader, never
    the C one (`CSafeLoader` recurses on the C stack and can crash the process on deep nesting);
    nesting deeper than MAX_DEPTH is refused with its line whatever the recursion limit."""

    def __init__(self, stream: str | _CheckedText) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, f"nesting is too deep (more than {MAX_DEPTH} "
                                                  "levels)", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Hashable, Any]:  # str keys (`_js_key`)
        self.flatten_mapping(node)  # `<<` merge keys
        return {_js_key(self.construct_object(k, deep=deep), k): self.construct_object(v, deep=deep)
                for k, v in node.value}

    def construct_yaml_float(self, node: Any) -> float:
        value = yaml.constructor.SafeConstructor.construct_yaml_float(self, node)
        if not math.isfinite(value):
            raise yaml.constructor.ConstructorError(None, None, f"{node.value} is not a JSON number",
                                                    node.start_mark)
        return value

    def refuse(self, node: Any) -> None:
        raise yaml.constructor.ConstructorError(None, None, f"a {node.tag.rsplit(':', 1)[-1]} value "
                                                "is not a JSON value", node.start_mark)


def _as_text(loader: _JSONLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


_JSONLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_text)
_JSONLoader.add_constructor("tag:yaml.org,2002:float", _JSONLoader.construct_yaml_float)
for _tag in ("binary", "set", "omap", "pairs"):
    _JSONLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _JSONLoader.refuse)


_C_LOADER = hasattr(yaml, "CSafeLoader")


def _nesting_within_bounds(text: str) -> bool:
    """Does libyaml parse this text, nesting no deeper than MAX_DEPTH? (Events only: the parser
    is iterative, it is composing nodes that recurses.)"""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return False
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return False  # the pure-Python loader says what is wrong, with its usual message
    return True


if _C_LOADER:
    from yaml._yaml import CParser  # libyaml's parser (what yaml.cyaml's loaders are built on)

    class _ItemLoader(CParser, _JSONLoader):
        """libyaml's events under _JSONLoader's composer and constructors, an item at a time."""

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._depth = 0

    class _CJSONLoader(yaml.CSafeLoader):
        """libyaml's parser with the same JSON-only construction as _JSONLoader."""

        yaml_constructors = _JSONLoader.yaml_constructors
        construct_mapping = _JSONLoader.construct_mapping
        construct_yaml_float = _JSONLoader.construct_yaml_float
        refuse = _JSONLoader.refuse


def _js_key(key: Any, node: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, (int, float)):
        return str(key)
    raise yaml.constructor.ConstructorError(None, None, "a mapping key must be text", node.start_mark)
