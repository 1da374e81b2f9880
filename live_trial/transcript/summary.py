"""A bounded view of one transcript record too long to parse whole (ARCHITECTURE invariant 9).

A Write of 48 MB, or its tool result, is one JSONL line. Parsing it whole costs about 8 ms per MB and as much memory
as the line, every time it is read; what the classifier, the launch check, the evaluator's index and the verdict need
from it is a few fields: ``type``, ``uuid``, ``parentUuid``, ``timestamp``, ``isSidechain``, ``isMeta``, ``subtype``,
``origin``, ``message.model`` / ``message.id`` / ``message.stop_reason``, the tool_use ids and names, the tool_result
ids and ``is_error``, and the first KBs of text. :func:`summarise` builds the record from the line's first bytes
(``head``, parsed forwards) and its last bytes (``tail``, parsed backwards from the closing ``}``): the 2.1.197 CLI
writes those fields before and after the one big string a record holds (``references/transcript-jsonl.md``,
"Over-long records"). Strings are cut to :data:`TEXT_KEEP_CHARS`; containers deeper than :data:`MAX_DEPTH` or past
:data:`MAX_ITEMS` entries are skipped (still parsed, never kept).

The middle of the line is never read here. What lies only there is missing from the summary (for example the
``uuid`` of a record holding two huge strings with the uuid between them); the summary never invents a field. The
record carries ``"_summary": {"bytes", "read", "start_read"}`` so a reader can tell it from a whole record.

No library does this: a streaming parser (``ijson``) has to read every byte of the line and cannot start from its
end; the two bounded windows are what keeps the cost independent of the line's length.
"""
from __future__ import annotations

import json
import re

TYPE_CHECKING = False          # typing is not imported at run time: ``live-trial status`` starts without it
if TYPE_CHECKING:
    from typing import Any

TEXT_KEEP_CHARS = 4096
MAX_DEPTH = 32
MAX_ITEMS = 256
SUMMARY_KEY = "_summary"

_WS = re.compile(rb"[ \t\r\n]*+")
_STR_BODY = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.S)
_NUM = re.compile(rb"-?(?:0|[1-9][0-9]{0,40})(?:\.[0-9]{1,40})?(?:[eE][+-]?[0-9]{1,4})?")
_SCALAR_CHARS = frozenset(b"0123456789+-.eEtrufalsn")
_LITERALS = {b"true": True, b"false": False, b"null": None}


class Malformed(ValueError):
    """The bytes are not the start (or the end) of a JSON object."""


def decode_string(body: bytes, *, cut: bool = False) -> str:
    """The text of a JSON string body (between its quotes), at most :data:`TEXT_KEEP_CHARS` characters.

    ``cut``: the body was cut by a window (an escape or a UTF-8 sequence may be cut at its end). Never raises: an
    undecodable body is decoded with replacement characters."""
    keep = body[:TEXT_KEEP_CHARS * 6 + 6]
    if len(keep) < len(body):
        cut = True
    for trim in range(0, 7 if cut else 1):
        piece = keep[:len(keep) - trim] if trim else keep
        try:
            text: str = json.loads(b'"' + piece + b'"')
            break
        except (ValueError, RecursionError):
            continue
    else:
        text = keep.decode("utf-8", "replace")
    return text[:TEXT_KEEP_CHARS]


def _skip_ws(data: bytes, pos: int) -> int:
    """The index of the first byte at or after ``pos`` that is no JSON whitespace."""
    m = _WS.match(data, pos)
    assert m is not None                 # it matches the empty string
    return m.end()


def _number(token: bytes) -> Any:
    try:
        return json.loads(token)
    except (ValueError, RecursionError):
        return None


class _Forward:
    """Parse a prefix of a JSON object, keeping what it holds up to the cut."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.root: dict[str, Any] | None = None
        # frames: [container (dict | list | None when skipped), key awaiting its value, is_object]
        self.stack: list[list[Any]] = []

    def attach(self, value: Any) -> None:
        frame = self.stack[-1]
        container = frame[0]
        if isinstance(container, dict):
            if len(container) < MAX_ITEMS or frame[1] in container:
                container[frame[1]] = value
        elif isinstance(container, list) and len(container) < MAX_ITEMS:
            container.append(value)

    def run(self) -> None:
        data, n = self.data, len(self.data)
        pos = _skip_ws(data, 0)
        if pos >= n or data[pos] != 0x7B:                       # "{"
            raise Malformed("the record does not start with '{'")
        expect = "value"                                         # value | key | after
        while True:
            pos = _skip_ws(data, pos)
            if pos >= n:
                return
            c = data[pos]
            if expect == "after":
                if c == 0x2C:                                    # ","
                    expect = "key" if self.stack[-1][2] else "value"
                    pos += 1
                elif c in (0x7D, 0x5D):                          # "}" "]"
                    if (c == 0x7D) != self.stack[-1][2]:
                        raise Malformed("brackets do not match")
                    self.stack.pop()
                    pos += 1
                    if not self.stack:
                        return
                else:
                    raise Malformed(f"unexpected byte {c:#x} after a value")
                continue
            if expect == "key":
                if c == 0x7D and self.stack[-1][2]:              # "{}" or a trailing "}"
                    expect = "after"
                    continue
                if c != 0x22:
                    raise Malformed("an object key is not a string")
                body = _STR_BODY.match(data, pos + 1)
                assert body is not None                              # it matches the empty string
                if body.end() >= n:
                    return                                       # cut inside the key
                key = decode_string(body.group())
                pos = _skip_ws(data, body.end() + 1)
                if pos >= n:
                    return
                if data[pos] != 0x3A:
                    raise Malformed("no ':' after an object key")
                self.stack[-1][1] = key
                pos += 1
                expect = "value"
                continue
            # a value
            if c in (0x7B, 0x5B):                                # "{" "["
                is_obj = c == 0x7B
                skipped = len(self.stack) >= MAX_DEPTH or (self.stack and self.stack[-1][0] is None)
                container: Any = None if skipped else ({} if is_obj else [])
                if self.stack:
                    if container is not None:
                        self.attach(container)
                else:
                    self.root = container
                self.stack.append([container, None, is_obj])
                pos += 1
                expect = "key" if is_obj else "value"
                if not is_obj:
                    after = _skip_ws(data, pos)
                    if after < n and data[after] == 0x5D:       # "[]"
                        expect = "after"
                continue
            if not self.stack:
                raise Malformed("a scalar at the top level")
            if c == 0x22:
                body = _STR_BODY.match(data, pos + 1)
                assert body is not None                              # it matches the empty string
                closed = body.end() < n and data[body.end()] == 0x22
                if self.stack[-1][0] is not None:
                    self.attach(decode_string(body.group(), cut=not closed))
                if not closed:
                    return
                pos = body.end() + 1
            else:
                m = _NUM.match(data, pos)
                if m and m.end() > pos:
                    token = m.group()
                    if m.end() >= n:
                        return                                   # a number cut by the window
                    value = _number(token)
                    pos = m.end()
                else:
                    word = next((w for w in _LITERALS if data.startswith(w, pos)), None)
                    if word is None:
                        if n - pos < 5:
                            return
                        raise Malformed(f"unexpected byte {c:#x} where a value starts")
                    value, pos = _LITERALS[word], pos + len(word)
                if self.stack[-1][0] is not None:
                    self.attach(value)
            expect = "after"

    def open_path(self) -> list[tuple[Any, bool]]:
        """``[(container, is_object)]`` of the containers still open at the cut, root first."""
        return [(f[0], f[2]) for f in self.stack]


class _Backward:
    """Parse a suffix of a JSON object backwards from its closing ``}``, keeping the complete members it holds."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        # frames: [members (dict, or list in reverse order), is_object, value awaiting its key, has pending value]
        self.stack: list[list[Any]] = []

    def _give(self, value: Any) -> None:
        frame = self.stack[-1]
        if frame[1]:
            frame[2], frame[3] = value, True
        elif len(frame[0]) < MAX_ITEMS:
            frame[0].append(value)

    def _string_start(self, close: int) -> int:
        """Index of the opening quote of the string whose closing quote is at ``close``; -1 when cut."""
        data = self.data
        end = close
        while True:
            q = data.rfind(b'"', 0, end)
            if q <= 0:
                return -1                                        # no quote, or one the window may have cut off
            k = q
            while k > 0 and data[k - 1] == 0x5C:                # backslashes before the quote
                k -= 1
            if k == 0:
                return -1                                        # the run reaches the window's start: unknown
            if (q - k) % 2 == 0:
                return q
            end = k

    def run(self) -> None:
        data = self.data
        pos = len(data.rstrip(b" \t\r\n"))
        if pos == 0 or data[pos - 1] != 0x7D:
            raise Malformed("the record does not end with '}'")
        expect = "value"                                         # value | colon | key | sep
        while pos > 0:
            while pos > 0 and data[pos - 1] in b" \t\r\n":
                pos -= 1
            if pos == 0:
                return
            c = data[pos - 1]
            if expect == "sep":                                  # before a value (or a key) comes "," or the opener
                if c == 0x2C:
                    pos -= 1
                    expect = "value"
                    continue
                if c in (0x7B, 0x5B):
                    frame = self.stack.pop()
                    if (c == 0x7B) != frame[1]:
                        raise Malformed("brackets do not match")
                    members = frame[0] if frame[1] else frame[0][::-1]
                    pos -= 1
                    if not self.stack:
                        return
                    self._give(members)
                    expect = "colon" if self.stack[-1][1] else "sep"
                    continue
                raise Malformed(f"unexpected byte {c:#x} before a value")
            if expect == "colon":
                if c != 0x3A:
                    raise Malformed("no ':' before an object member's value")
                pos -= 1
                expect = "key"
                continue
            if expect == "key":
                if c != 0x22:
                    raise Malformed("an object key is not a string")
                start = self._string_start(pos - 1)
                if start < 0:
                    return
                frame = self.stack[-1]
                key = decode_string(data[start + 1:pos - 1])
                if frame[3] and key not in frame[0] and len(frame[0]) < MAX_ITEMS:
                    frame[0][key] = frame[2]
                frame[2], frame[3] = None, False
                pos = start
                expect = "sep"
                continue
            # a value, read from its last byte
            if c in (0x7D, 0x5D):                                # "}" "]": a container ends here
                is_obj = c == 0x7D
                pos -= 1
                self.stack.append([{} if is_obj else [], is_obj, None, False])
                j = pos
                while j > 0 and data[j - 1] in b" \t\r\n":
                    j -= 1
                if j > 0 and data[j - 1] == (0x7B if is_obj else 0x5B):      # empty container
                    frame = self.stack.pop()
                    pos = j - 1
                    if not self.stack:
                        return
                    self._give(frame[0])
                    expect = "colon" if self.stack[-1][1] else "sep"
                continue
            if not self.stack:
                raise Malformed("a scalar after the record's end")
            if c == 0x22:
                start = self._string_start(pos - 1)
                if start < 0:
                    return
                self._give(decode_string(data[start + 1:pos - 1]))
                pos = start
            else:
                j = pos
                while j > 0 and data[j - 1] in _SCALAR_CHARS:
                    j -= 1
                if j == 0:
                    return
                token = data[j:pos]
                value = _LITERALS[token] if token in _LITERALS else _number(token)
                if token not in _LITERALS and value is None:
                    raise Malformed("a token that is no JSON value")
                self._give(value)
                pos = j
            expect = "colon" if self.stack[-1][1] else "sep"

    def frames(self) -> list[tuple[Any, bool]]:
        """``[(members, is_object)]`` of the containers open at the window's start, root first; a list's members
        are its last items in file order."""
        return [(dict(reversed(f[0].items())) if f[1] else f[0][::-1], f[1]) for f in self.stack]


def _merge(head_path: list[tuple[Any, bool]], tail_frames: list[tuple[Any, bool]]) -> None:
    """Add the tail's complete members to the head's open containers they belong to (matched by depth and kind)."""
    for depth, (members, is_obj) in enumerate(tail_frames):
        if depth >= len(head_path):
            return
        container, head_obj = head_path[depth]
        if head_obj != is_obj or container is None:
            return
        if is_obj:
            for key, value in members.items():
                if len(container) < MAX_ITEMS or key in container:
                    container[key] = value
        else:
            container.extend(members[:max(0, MAX_ITEMS - len(container))])


def summarise(head: bytes | None, tail: bytes, length: int) -> dict[str, Any] | None:
    """The record of an over-long JSONL line, from its first bytes ``head`` (None when the line's start was not
    read) and its last bytes ``tail`` (up to the line's end, without the newline). ``length``: the line's length in
    bytes. Returns a dict with :data:`SUMMARY_KEY` ``{"bytes": length, "read": bytes used, "start_read": bool}``,
    or None when the bytes are not those of a JSON object. Never raises; costs O(len(head) + len(tail))."""
    try:
        back = _Backward(tail)
        back.run()
        frames = back.frames()
        if head is not None:
            fwd = _Forward(head)
            fwd.run()
            root = fwd.root if isinstance(fwd.root, dict) else None
            if root is None:
                return None
            _merge(fwd.open_path(), frames)
        else:
            if not frames or not frames[0][1]:
                return None
            root = dict(frames[0][0])
    except (Malformed, RecursionError):
        return None
    root[SUMMARY_KEY] = {"bytes": length, "read": len(head or b"") + len(tail), "start_read": head is not None}
    return root
