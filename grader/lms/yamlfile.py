"""A YAML file someone else wrote (a Gradescope export's submission_metadata.yml), read within bounds.

YAML lets a file name a value once and repeat it by alias: a list of 80,000 aliases of one person, named
again by 14,000 entries, is 840 KB on disk and a billion values once written out. PyYAML builds an alias
as the same object, but whoever walks what it built (the grader, building one student per submitter) walks
the billion. So before anything is built, the parser's events are counted as the document would be with
every alias written out (`bounded`: MOST_VALUES, MOST_DEPTH); the document is then composed into nodes (no
value built yet: a node is shared by its aliases, as in the file), and each entry the reader wants is built
on its own (`built`), so that one entry that cannot be (a time that is none, an int of 5,000 digits) is
that entry's problem, not the file's. Only the safe constructor ever builds a value: `!!python/...` tags
are refused.
"""

from __future__ import annotations

from typing import Any

from grader.errors import BadMetadata

MOST_VALUES = 500_000
"""The most values a document may hold once every alias in it is written out (a class of thousands writes
tens of thousands)."""
MOST_DEPTH = 50
"""The most collections nested in one another (the composer and the constructor recurse)."""


def _loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, where PyYAML has it: the same rules


def bounded(text: str) -> None:
    """BadMetadata when `text`, every alias written out, would hold more than MOST_VALUES values or nest more than
    MOST_DEPTH deep (or is not YAML): counted from the parser's events, before anything is built."""
    import yaml

    sizes: dict[str, int] = {}
    opened: list[tuple[str | None, list[int]]] = [(None, [0])]
    try:
        for event in yaml.parse(text, Loader=_loader()):
            if isinstance(event, yaml.CollectionStartEvent):
                opened.append((event.anchor, [1]))
                if len(opened) > MOST_DEPTH:
                    raise BadMetadata(f"nested more than {MOST_DEPTH} deep")
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, (size,) = opened.pop()
            elif isinstance(event, yaml.AliasEvent):
                anchor, size = None, sizes.get(event.anchor or "", 1)
            elif isinstance(event, yaml.ScalarEvent):
                anchor, size = event.anchor, 1
            else:
                continue
            if anchor is not None:
                sizes[anchor] = size
            opened[-1][1][0] += size
            if opened[-1][1][0] > MOST_VALUES:
                raise BadMetadata(f"holds more than {MOST_VALUES:,} values once its aliases are written out")
    except yaml.YAMLError as exc:
        raise BadMetadata(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None


def mapping(text: str) -> dict[str, Any]:
    """The top-level mapping of a YAML text, bounded first: each key that is text, and its value's node (built by
    `built`); BadMetadata when the text is none."""
    import yaml

    bounded(text)
    try:
        root = yaml.compose(text, Loader=_loader())
    except (yaml.YAMLError, RecursionError) as exc:
        raise BadMetadata(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(root, yaml.MappingNode):
        raise BadMetadata("not a mapping of submission folders")
    return {key.value: value for key, value in root.value if isinstance(key, yaml.ScalarNode)}


def built(node: Any) -> object:
    """The value of one node of a document `mapping` read, built by the safe constructor alone; BadMetadata when
    it cannot be (a time that is none, an int too long to read, a key that cannot be one)."""
    import yaml

    try:
        return yaml.constructor.SafeConstructor().construct_document(node)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # ValueError: an int of more than 4,300 digits, a date that is none (2026-13-45)
        raise BadMetadata(f"cannot be read ({type(exc).__name__}: {str(exc)[:200]})") from None
