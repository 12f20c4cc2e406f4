"""JSON decoding for import files that refuses, with the field named, what would hurt us.

The standard library's decoder accepts NaN, Infinity and -Infinity (not JSON; PostgreSQL's
jsonb refuses them later, mid-import), turns a number such as 1e999 into infinity, raises a bare
ValueError on an integer of more than 4,300 digits (Python's int-from-str limit) and a
RecursionError on nesting deeper than Python's recursion limit. Here the number hooks put a
`Refused` marker in place of such a value, so the record decodes and `refused_in` can name the
field it sits in; nesting too deep raises `NestingTooDeep` with the path to where it starts.
"""

import json
import math
from collections.abc import Iterator
from typing import Any

# No field of any format needs a number this long; Python itself stops at 4,300 digits.
MAX_INT_DIGITS = 1000
# Levels of lists and objects inside each other that stored JSON (metadata) may have.
MAX_DEPTH = 64
# How far `nesting_path` follows a nesting to name where it starts.
_PATH_SCAN_DEPTH = 200


class Refused:
    """Stands in a decoded record for a number we do not accept; `message` says why."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message

    def __repr__(self) -> str:
        return f"Refused({self.message!r})"


class NestingTooDeep(ValueError):
    def __init__(self, path: list):
        self.path = path
        super().__init__(nesting_message())


def nesting_message(depth: int | None = None) -> str:
    if depth is None:
        return (
            "is nested too deeply (lists or objects inside each other, deeper than any "
            "record needs); nothing of it was read"
        )
    return f"is nested more than {depth} levels deep (lists or objects inside each other)"


class SafeDecoder:
    """`json.JSONDecoder` with hooks for numbers; `flagged` tells whether the last decode put
    any `Refused` marker in its value (only then is the value walked to find them)."""

    def __init__(self):
        self.flagged = False
        self._decoder = json.JSONDecoder(
            parse_int=self._int, parse_float=self._float, parse_constant=self._constant
        )

    def _int(self, digits: str):
        if len(digits) - digits.startswith("-") > MAX_INT_DIGITS:
            self.flagged = True
            count = len(digits) - digits.startswith("-")
            return Refused(
                f"a number of {count} digits is too long to read (at most {MAX_INT_DIGITS})"
            )
        return int(digits)

    def _float(self, spelled: str):
        value = float(spelled)
        if math.isinf(value):
            self.flagged = True
            return Refused(f"{spelled[:40]} is too large a number (it reads as infinite)")
        return value

    def _constant(self, name: str):
        self.flagged = True
        return Refused(f"{name} is not a number JSON allows: write a finite number or null")

    def raw_decode(self, text: str, pos: int = 0) -> tuple[Any, int]:
        """As `JSONDecoder.raw_decode`; raises NestingTooDeep for nesting Python cannot follow."""
        self.flagged = False
        try:
            return self._decoder.raw_decode(text, pos)
        except RecursionError:
            raise NestingTooDeep(nesting_path(text, pos)) from None

    def loads(self, text: str) -> Any:
        """As `json.loads` (whitespace around the value allowed)."""
        start = len(text) - len(text.lstrip())
        value, end = self.raw_decode(text, start)
        if text[end:].strip():
            raise json.JSONDecodeError("Extra data", text, end)
        return value


def _step(text: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{text}[{key}]"
    return f"{text}.{key}" if text else str(key)


def path_text(path: list, prefix: str = "") -> str:
    """A path as the error messages spell fields: `claims[0].labels[1].quote`."""
    text = prefix
    for key in path:
        text = _step(text, key)
    return text


def refused_in(value: Any, limit: int = 5) -> list[tuple[list, str]]:
    """(field path, message) of the `Refused` markers in `value`, the first `limit` of them."""
    found: list[tuple[list, str]] = []
    stack: list[tuple[Any, list]] = [(value, [])]
    while stack and len(found) < limit:
        node, path = stack.pop()
        if isinstance(node, Refused):
            found.append((path, node.message))
        elif isinstance(node, dict):
            stack.extend((child, [*path, key]) for key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((child, [*path, i]) for i, child in reversed(list(enumerate(node))))
    return found


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> list | None:
    """The path to the first container nested deeper than `limit`, or None."""
    stack: list[tuple[Any, list]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict | list):
            if len(path) >= limit:
                return path
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend(
                (child, [*path, key]) for key, child in items if isinstance(child, dict | list)
            )
    return None


def run_start(path: list) -> list:
    """A deep path cut to where its nesting starts: `pile[1].text[0][0][0]…` → `pile[1].text`,
    `metadata.a.a.a…` → `metadata` (hostile nesting repeats one step)."""
    path = list(path)
    if len(path) >= 2 and path[-1] == path[-2]:
        step = path[-1]
        while path and path[-1] == step:
            path.pop()
    return path[:12]


def nesting_path(text: str, pos: int, limit: int = _PATH_SCAN_DEPTH) -> list:
    """The field path (from the value at `pos`) where nesting deeper than `limit` starts.

    Only called after a decode failed, so a plain character scan is fast enough.
    """
    stack: list[list] = []  # per open container: [is_object, key or index, expecting a key]
    for kind, token in _tokens(text, pos):
        if kind == "string":
            if stack and stack[-1][0] and stack[-1][2]:
                stack[-1][1], stack[-1][2] = token, False
        elif kind == "open":
            if len(stack) >= limit:
                break
            stack.append([True, None, True] if token == "{" else [False, 0, False])
        elif kind == "close":
            if stack:
                stack.pop()
            if not stack:
                return []
        elif kind == "comma" and stack:
            if stack[-1][0]:
                stack[-1][2] = True
            else:
                stack[-1][1] += 1
    return run_start([entry[1] for entry in stack[:-1]])


def _tokens(text: str, pos: int) -> Iterator[tuple[str, str]]:
    i, n = pos, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            raw = text[i : j + 1]
            try:
                token = json.loads(raw)
            except ValueError:
                token = raw[1:-1]
            yield "string", token
            i = j + 1
            continue
        if char in "[{":
            yield "open", char
        elif char in "]}":
            yield "close", char
        elif char == ",":
            yield "comma", char
        i += 1
