"""Safe YAML for promptfoo files: JSON values only, aliases that cannot explode, bounded nesting."""
from __future__ import annotations

import math
from typing import Any

import yaml
from evalconv.canonical import jsonvalue
from evalconv.canonical.errors import ReadError

# A test's value may nest as deep as canonical JSON allows, under the few levels of the file
# (list, test, vars or metadata, key).
MAX_DEPTH = jsonvalue.MAX_DEPTH + 8


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

    def __init__(self, stream: str) -> None:
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

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
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


_JSONLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
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
