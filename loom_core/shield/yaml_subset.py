"""A small, bounded reader for the YAML that policy files use.

Policy files are YAML, but PyYAML is not a dependency of ours (nor of
loom-harness). This reads the subset a policy needs -- nested block mappings,
block lists of scalars (also at the key's own indentation), plain, single- and
double-quoted scalars, comments, ``[]``/``{}`` -- and rejects everything else
with the line number instead of guessing. Scalars stay strings (``min: 2`` is
``"2"``); the policy layer converts.

One deliberate departure from YAML, shared with loom-harness's own fallback
reader: an unquoted list item ``- after Read(*.env*): deny *`` is the string
it looks like, not a one-key mapping, because that is how people write
sequence rules. It also accepts what loom-harness's reader accepts that YAML
would reject, such as a plain ``- *`` (YAML reads ``*`` as an alias).
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 16

_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX = {"x": 2, "u": 4, "U": 8}


class YamlSubsetError(ValueError):
    """Text outside the subset; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def _double(s: str, line: int) -> tuple[str, str]:
    """Decode a double-quoted scalar starting at s[0] == '"'; return (value, rest)."""
    out: list[str] = []
    i = 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return "".join(out), s[i + 1 :]
        if c == "\\":
            nxt = s[i + 1 : i + 2]
            if nxt in _HEX:
                digits = s[i + 2 : i + 2 + _HEX[nxt]]
                try:
                    out.append(chr(int(digits, 16)))
                except ValueError:
                    raise YamlSubsetError(line, f"bad escape \\{nxt}{digits}") from None
                i += 2 + _HEX[nxt]
                continue
            if nxt not in _ESCAPES:
                raise YamlSubsetError(line, f"unknown escape \\{nxt} in a double-quoted string")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(c)
        i += 1
    raise YamlSubsetError(
        line, "unterminated double-quoted string (quotes must close on the same line)"
    )


def _single(s: str, line: int) -> tuple[str, str]:
    out, i = [], 1
    while i < len(s):
        if s[i] == "'":
            if s[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), s[i + 1 :]
        out.append(s[i])
        i += 1
    raise YamlSubsetError(
        line, "unterminated single-quoted string (quotes must close on the same line)"
    )


def _strip_comment(s: str) -> str:
    """A plain scalar ends at `` #`` (a ``#`` glued to text is part of it)."""
    pos = s.find(" #")
    return (s[:pos] if pos != -1 else s).rstrip()


def _scalar(s: str, line: int) -> Any:
    """One scalar value (never empty here)."""
    if s[0] in "\"'":
        value, rest = (_double if s[0] == '"' else _single)(s, line)
        rest = rest.strip()
        if rest and not rest.startswith("#"):
            raise YamlSubsetError(line, f"unexpected text after a quoted string: {rest!r}")
        return value
    s = _strip_comment(s)
    if s in ("[]", "{}"):
        return [] if s == "[]" else {}
    if s[0] in "[{":
        raise YamlSubsetError(
            line, "flow-style [..]/{..} collections are not supported; write one '- item' per line"
        )
    if s[0] in "|>":
        raise YamlSubsetError(line, "block scalars (| and >) are not supported")
    if s[0] in "&!%@`":
        raise YamlSubsetError(line, f"{s[0]!r} cannot start a plain value; quote it")
    return s


def _split_key(content: str, line: int) -> tuple[str, str]:
    """``key: value`` -> (key, value text). Colons without a following space stay in the key."""
    if content[0] in "\"'":
        key, rest = (_double if content[0] == '"' else _single)(content, line)
        rest = rest.lstrip()
        if not rest.startswith(":"):
            raise YamlSubsetError(line, "expected ':' after a quoted key")
        return key, rest[1:].strip()
    for i, c in enumerate(content):
        if c == ":" and (i + 1 == len(content) or content[i + 1] in " \t"):
            return content[:i].rstrip(), content[i + 1 :].strip()
        if c == "#" and i and content[i - 1] == " ":
            break
    raise YamlSubsetError(line, f"expected 'key: value' or '- item', got {content!r}")


class _Reader:
    def __init__(self, text: str) -> None:
        self.lines: list[tuple[int, int, str]] = []  # (line number, indent, content)
        for number, raw in enumerate(text.splitlines(), 1):
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if stripped in ("---", "...") and not self.lines:
                continue
            body = raw.lstrip(" ")
            if body.startswith("\t"):
                raise YamlSubsetError(number, "tabs cannot indent YAML; use spaces")
            self.lines.append((number, len(raw) - len(body), body.rstrip()))
        self.i = 0

    def block(self, indent: int, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise YamlSubsetError(self.lines[self.i][0], f"nesting deeper than {MAX_DEPTH} levels")
        if _is_item(self.lines[self.i][2]):
            return self.items(indent)
        return self.mapping(indent, depth)

    def items(self, indent: int) -> list[Any]:
        out: list[Any] = []
        while self.i < len(self.lines):
            number, ind, content = self.lines[self.i]
            if ind != indent or not _is_item(content):
                break
            value = content[1:].strip()
            if not value or value.startswith("#"):
                raise YamlSubsetError(
                    number,
                    "nested lists or mappings inside a list are not "
                    "supported; put the value after '- '",
                )
            out.append(_scalar(value, number))
            self.i += 1
        return out

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.i < len(self.lines):
            number, ind, content = self.lines[self.i]
            if ind < indent:
                break
            if ind > indent:
                raise YamlSubsetError(number, "unexpected indentation")
            if _is_item(content):
                raise YamlSubsetError(
                    number, f"list item where a 'key: value' was expected: {content!r}"
                )
            key, value = _split_key(content, number)
            if key in out:
                raise YamlSubsetError(number, f"duplicate key {key!r}")
            self.i += 1
            if value and not value.startswith("#"):
                out[key] = _scalar(value, number)
                continue
            nxt = self.lines[self.i] if self.i < len(self.lines) else None
            if nxt is not None and (nxt[1] > indent or (nxt[1] == indent and _is_item(nxt[2]))):
                out[key] = self.block(nxt[1], depth + 1)
            else:
                out[key] = None
        return out


def _is_item(content: str) -> bool:
    return content == "-" or content.startswith("- ")


def parse_yaml_subset(text: str) -> Any:
    """The document as dicts, lists and strings; ``{}`` for an empty one.

    Raises ``YamlSubsetError`` (a ``ValueError`` with ``.line``) on anything
    outside the subset.
    """
    reader = _Reader(text)
    if not reader.lines:
        return {}
    first = reader.lines[0]
    if first[1] != 0:
        raise YamlSubsetError(first[0], "the document must start at column 1")
    value = reader.block(0, 0)
    if reader.i < len(reader.lines):
        number, _ind, content = reader.lines[reader.i]
        raise YamlSubsetError(number, f"unexpected line {content!r} (check its indentation)")
    return value
