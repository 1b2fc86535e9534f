"""Structured inputs from a fuzzer's bytes: choices read off the bytes, a mutator of JSON trees, a TOML writer.

The coverage-guided fuzzer mutates bytes; a target in structured mode reads its choices from them through ``Draw``
(past the end every choice is the first), so the same bytes always give the same document, and a byte the fuzzer
flips changes one choice. ``mutate`` applies a few such choices to a valid document (a replay record, a checkpoint
config, a recipe, a request body): values from ``PALETTE`` (the edges: huge, negative, NaN, wrong types, odd
text), numbers and text from the bytes, keys dropped or added, lists cut or grown, one part copied over another.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any, Sequence

#: Values a mutation puts in place of a part: the edges of every type a parser meets.
PALETTE: tuple[Any, ...] = (
    0, 1, -1, 2, 3, 4, 5, 6, 7, 10, 15, 20, 60, 79, 255, 256, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -2**63 - 1,
    10**30, 10**4000, 0.5, -0.0, 1.5, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan,
    "", " ", "0", "1", "-1", "x", "Wiz", "Jes", "Ah", "Tc", "2d", "Zz", "h", "s", "standard", "amigo", "open", "hidden",
    "both", "bid", "play", "relu", "tanh", "rule", "random", "net", "ppo", "net-v3", "pimc", "search", "é", "\x00",
    "\ud800", "\U0001f0a1", "../x", "/dev/null", ".", "x" * 300, None, True, False, [], {}, [0], [[]], [None], {"": 0},
)

#: Keys a mutation adds to an object: the palette's values as text.
KEYS = tuple(str(value) for value in PALETTE if not isinstance(value, (list, dict)))


class Draw:
    """Choices read from bytes, in order; past the end every choice is 0."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def byte(self) -> int:
        """The next byte (0 past the end)."""
        value = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return value

    def below(self, n: int) -> int:
        """An integer 0 to ``n - 1`` (two bytes)."""
        return (self.byte() << 8 | self.byte()) % n if n > 1 else 0

    def choice(self, options: Sequence[Any]) -> Any:
        """One of ``options``."""
        return options[self.below(len(options))]

    def chunk(self, limit: int) -> bytes:
        """Up to ``limit`` bytes, their count read first."""
        size = min(self.byte(), limit)
        part = self.data[self.pos:self.pos + size]
        self.pos += size
        return part

    def integer(self) -> int:
        """A signed integer of 1 to 8 bytes."""
        return int.from_bytes(self.chunk(8) or b"\0", "little", signed=True)

    def text(self, limit: int = 40) -> str:
        """Text of up to ``limit`` bytes, any bytes that are not UTF-8 as U+FFFD."""
        return self.chunk(limit).decode("utf-8", "replace")

    def number(self) -> float:
        """A float of 8 bytes: any, NaN and the infinities among them."""
        return struct.unpack("<d", self.chunk(8).ljust(8, b"\0"))[0]


def _children(node: Any) -> list:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return list(range(len(node)))
    return []


def _pick(doc: Any, draw: Draw) -> tuple[Any, Any]:
    """A container of ``doc`` and a key or index in it (None when the root itself is picked), walking down from the root:
    one step further three times in four."""
    parent, key, node = None, None, doc
    while _children(node) and draw.byte() % 4:
        parent, key = node, draw.choice(_children(node))
        node = node[key]
    return parent, key


def _value(doc: Any, draw: Draw, old: Any) -> Any:
    kind = draw.byte() % 8
    if kind == 0:
        return draw.integer()
    if kind == 1:
        return draw.text()
    if kind == 2:  # a part of the document somewhere else
        parent, key = _pick(doc, draw)
        return json.loads(json.dumps(doc if parent is None else parent[key]))
    if kind == 3 and isinstance(old, int) and not isinstance(old, bool):
        return old + draw.choice((-1, 1, -2, 2, 100))
    if kind == 4:
        return [old]
    if kind == 5:
        return draw.number()
    value = draw.choice(PALETTE)
    return json.loads(json.dumps(value)) if isinstance(value, (list, dict)) else value  # a copy: later steps change it


def mutate(doc: Any, draw: Draw, steps: int = 4) -> Any:
    """``doc`` (a JSON tree, changed in place) after 1 to ``steps`` mutations read from ``draw``."""
    for _ in range(1 + draw.byte() % steps):
        parent, key = _pick(doc, draw)
        if parent is None:
            doc = _value(doc, draw, doc)
            continue
        op = draw.byte() % 6
        if op == 0:  # drop it
            del parent[key]
        elif op == 1 and isinstance(parent, list):  # one more of it, or the list cut after it
            parent.insert(key, json.loads(json.dumps(parent[key]))) if draw.byte() % 2 else parent.__delitem__(slice(key + 1, None))
        elif op == 1:  # a key it did not have
            parent[draw.text(12) if draw.byte() % 8 == 0 else draw.choice(KEYS)] = _value(doc, draw, None)
        else:
            parent[key] = _value(doc, draw, parent[key])
    return doc


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are TOML's; a lone surrogate makes the file invalid, as it should
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None) + "}"
    return '""'


def toml(doc: Any) -> str:
    """A TOML text of a JSON tree's top-level keys (tables inline; TOML has no null, so a None is left out)."""
    if not isinstance(doc, dict):
        return f"value = {_toml_value(doc)}\n"
    return "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in doc.items() if v is not None)
