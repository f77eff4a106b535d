"""Safe YAML reading for the matrix: the C safe loader where present, and a depth limit against stack overflow."""

from __future__ import annotations

from typing import Any

MAX_YAML_DEPTH = 1000


def load_yaml(text: str) -> Any:
    """YAML text with the safe loader (the C one where present); yaml.YAMLError for bad or too deep input."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if _yaml_too_deep(text, loader):
        raise yaml.YAMLError(f"nested more than {MAX_YAML_DEPTH} levels deep")
    return yaml.load(text, Loader=loader)


def _yaml_too_deep(text: str, loader: Any) -> bool:
    """Whether collections nest deeper than MAX_YAML_DEPTH. libyaml's composer recurses in C, and some 30,000
    nested `[` overflow the stack: a segfault, not an exception. Each level needs a flow bracket or an
    indentation column, so counting clears every real file; the rest are measured on the parser's events
    (no recursion there)."""
    import yaml

    longest = max((len(line) for line in text.splitlines()), default=0)
    if longest + text.count("[") + text.count("{") < MAX_YAML_DEPTH:
        return False
    depth = 0
    for ev in yaml.parse(text, Loader=loader):
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                return True
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    return False
