"""Safe, bounded YAML loading that keeps line numbers (for findings that point at a line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from compat._text import strip_quoted
from compat.errors import InputError

MAX_BYTES = 4 * 1024 * 1024
MAX_DOCUMENTS = 500
MAX_NODES = 200_000
"""Values built from the YAML graph, aliases counted every time they are used (no billion laughs)."""


class YMap(dict):  # type: ignore[type-arg]
    """A mapping with the line of each key (1-based) and of the mapping itself."""

    line: int = 0
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class YList(list):  # type: ignore[type-arg]
    """A sequence with its line and the line of each item."""

    line: int = 0
    item_lines: list[int]


class _Builder:
    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.count = 0
        self.ctor = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise InputError(f"{self.origin}: more than {MAX_NODES} YAML values (aliases expanded); not read")
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            self.ctor.flatten_mapping(node)  # `<<: *anchor` merge keys, as Compose files use them
            out = YMap()
            out.line = line
            out.key_lines = {}
            for k, v in node.value:
                key = self.build(k)
                if isinstance(key, (dict, list)):
                    key = f"<complex key, line {k.start_mark.line + 1}>"  # e.g. an unfilled {{TEMPLATE}}
                skey = str(key)
                out[skey] = self.build(v)
                out.key_lines[skey] = k.start_mark.line + 1
            return out
        if isinstance(node, yaml.SequenceNode):
            seq = YList()
            seq.line = line
            seq.item_lines = []
            for item in node.value:
                seq.append(self.build(item))
                seq.item_lines.append(item.start_mark.line + 1)
            return seq
        if isinstance(node, yaml.ScalarNode):
            if node.tag.endswith(":int") and len(node.value) > 40:
                return node.value  # a 4300-digit "integer" stays text
            try:
                return self.ctor.construct_object(node, deep=True)
            except yaml.YAMLError:
                return node.value
        return None


def load_documents(path: Path, what: str) -> list[Any]:
    """Every YAML document of `path` as YMap/YList/scalars; InputError (one line) for anything unreadable."""
    from compat.inputs import read_bytes

    data = read_bytes(str(path), what, MAX_BYTES)  # the one capped reader: FIFOs, devices, huge files refused
    if b"\x00" in data:
        raise InputError(f"{str(path)!r} is a binary file, not a {what}")
    text = data.decode("utf-8", errors="replace")
    b = _Builder(str(path))
    docs: list[Any] = []
    try:
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):
            if len(docs) >= MAX_DOCUMENTS:
                raise InputError(f"{str(path)!r} has more than {MAX_DOCUMENTS} YAML documents; not read")
            docs.append(None if node is None else b.build(node))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}{where}: not valid YAML ({strip_quoted(problem)})") from None
    except RecursionError:
        raise InputError(f"{path}: YAML nested too deeply; not read") from None
    return docs
