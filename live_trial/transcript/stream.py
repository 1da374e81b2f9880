r"""Reading a transcript forwards in one pass, with memory bounded by a constant (ARCHITECTURE invariant 9).

:class:`Pass` reads a file from a byte offset in chunks of :data:`CHUNK_BYTES`, hands each chunk to ``on_chunk``
(to hash while reading) and yields the records of its complete lines, in file order. A line up to
:data:`LONG_RECORD_BYTES` is parsed whole (:func:`parse_line`); a longer one is never held: its first and last
:data:`SUMMARY_HEAD_BYTES` / :data:`SUMMARY_TAIL_BYTES` are kept while the rest streams past, and the record is
their :func:`~live_trial.transcript.summary.summarise`. ``select(line) -> bool`` skips lines without parsing them
(e.g. only lines that can hold an assistant record). Memory: one chunk, one line of at most
:data:`LONG_RECORD_BYTES`, two windows, and the records the caller keeps.

Every transcript byte this package reads goes through :func:`open_transcript`, which counts it in
:data:`COUNTER` (the suite bounds reads by bytes, benchmarks/status.py prints the bytes of an idle poll tick).

A record is refused (counted as malformed, never raised) when it is not a JSON object, is nested deeper than
:data:`MAX_RECORD_DEPTH` or holds an integer of more than 4300 digits; a lone surrogate (``\ud800`` escape) in a
string is replaced by its escape text, so text from a transcript can always be written as UTF-8.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator

from live_trial.transcript.records import KNOWN_TYPES, is_ignored
from live_trial.transcript.summary import summarise

TYPE_CHECKING = False          # typing is not imported at run time: ``live-trial status`` starts without it
if TYPE_CHECKING:
    from typing import Any, Protocol

CHUNK_BYTES = 256 << 10
LONG_RECORD_BYTES = 1 << 20
SUMMARY_HEAD_BYTES = 64 << 10
SUMMARY_TAIL_BYTES = 64 << 10
MAX_RECORD_DEPTH = 100
#: A line of at least this many bytes is checked by walking its parsed record (:func:`check_record`), at most
#: SHAPE_NODE_BUDGET nodes of it; a shorter one, or one with more nodes, from its bytes.
SHAPE_MIN_BYTES = 8 << 10
SHAPE_NODE_BUDGET = 4096

#: A lone surrogate can come from a ``\\udXXX`` escape or from raw bytes ED A0..BF (json.loads decodes bytes with
#: "surrogatepass").
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]|\xed[\xa0-\xbf]")
_NEWLINES = re.compile(rb"\n+")


class ReadCounter:
    """Bytes read from transcript files by this process (``bytes``); reset it to measure one step."""

    def __init__(self) -> None:
        self.bytes = 0


COUNTER = ReadCounter()


class CountedFile:
    """A binary file whose reads are counted in :data:`COUNTER`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fh = open(path, "rb")

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (all when -1)."""
        data = self._fh.read(n)
        COUNTER.bytes += len(data)
        return data

    def seek(self, offset: int) -> None:
        """Move to byte ``offset``."""
        self._fh.seek(offset)

    def size(self) -> int:
        """The file's size in bytes now."""
        return os.fstat(self._fh.fileno()).st_size

    def close(self) -> None:
        """Close the file."""
        self._fh.close()

    def __enter__(self) -> CountedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_transcript(path: str | os.PathLike[str]) -> CountedFile:
    """Open a transcript for reading (counted). Raises OSError."""
    return CountedFile(path)


if TYPE_CHECKING:                 # for annotations only
    class Tally(Protocol):
        """What a read skipped: lines that are no record, records of unknown type, the first problem."""

        skipped_malformed: int
        skipped_unknown: int
        first_error: str | None


#: At most this many distinct unknown record types are named in a read's ``unknown_types``; the rest count under "…".
UNKNOWN_NAMES_MAX = 8
#: The ``type`` values of what a record holds (content blocks, ``message.type``) rather than of a record: a line that
#: names only these and record types is no unknown record (:func:`names_unknown_type`).
BLOCK_TYPES = frozenset({"message", "text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image",
                         "document", "server_tool_use", "web_search_tool_result", "base64", "url", "file",
                         "tool_reference"})
_TYPE_VALUE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,64})"')


def names_unknown_type(text: bytes) -> bool:
    """True when ``text`` holds a ``"type":"X"`` whose X is neither a record type the reader knows nor a content
    block's (:data:`BLOCK_TYPES`): a ``select`` for :class:`Pass` that parses only the lines that may be records of
    an unknown type (it holds for any text containing a line it holds for, as :class:`Pass` requires). Attachment
    kinds are not listed, so attachment lines are parsed too; an unknown record naming no such X is missed, never
    invented."""
    for m in _TYPE_VALUE.finditer(text):
        kind = m.group(1).decode("utf-8", "replace")
        if kind not in KNOWN_TYPES and kind not in BLOCK_TYPES:
            return True
    return False


def _name_unknown(tally: Tally, kind: object) -> None:
    """Count a skipped unknown record under its type in ``tally.unknown_types`` when the tally keeps names."""
    names = getattr(tally, "unknown_types", None)
    if names is None:
        return
    key = kind if isinstance(kind, str) and 0 < len(kind) <= 64 else "(no type)"
    if key not in names and len(names) >= UNKNOWN_NAMES_MAX:
        key = "…"
    names[key] = names.get(key, 0) + 1


def _malformed(tally: Tally, offset: int, why: str) -> None:
    tally.skipped_malformed += 1
    tally.first_error = tally.first_error or f"byte {offset}: {why}"


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node)
    return deepest


def scrub_text(text: str) -> str:
    r"""``text`` with each lone surrogate replaced by its ``\udXXX`` escape text (valid UTF-8 afterwards)."""
    if not _has_lone_surrogate(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def scrub(value: Any) -> Any:
    """``value`` (parsed JSON) with :func:`scrub_text` applied to every string and key."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub_text(k): scrub(v) for k, v in value.items()}
    return value


def _has_lone_surrogate(text: str) -> bool:
    if text.isascii():                 # a flag of the string: no scan
        return False
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _shape(value: Any) -> tuple[int, bool] | None:
    """``(nesting depth, whether a string or key holds a lone surrogate)`` of parsed JSON ``value``, exactly, or None
    once more than :data:`SHAPE_NODE_BUDGET` nodes were visited (the caller then bounds it from the bytes)."""
    deepest, lone, budget = 0, False, SHAPE_NODE_BUDGET
    stack = [(value, 1)]
    while stack:
        node, d = stack.pop()
        budget -= 1
        if budget < 0:
            return None
        if isinstance(node, str):
            lone = lone or _has_lone_surrogate(node)
        elif isinstance(node, dict):
            deepest = max(deepest, d)
            for key, v in node.items():
                lone = lone or _has_lone_surrogate(key)
                stack.append((v, d + 1))
        elif isinstance(node, list):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in node)
    return deepest, lone


def check_record(rec: Any, raw: bytes, offset: int, tally: Tally) -> dict[str, Any] | None:
    r"""``rec`` when it is a transcript record (a JSON object whose ``type`` is known, nested at most
    :data:`MAX_RECORD_DEPTH` deep), lone surrogates escaped; else None, counted in ``tally``. A record of a type the
    harness knows and does not read (:data:`~live_trial.transcript.records.IGNORED_TYPES`: 2.1.332's copies of the
    API requests and its bookkeeping) is None and counted nowhere.

    A short line is bounded from ``raw`` first (its brackets, its escape and ED bytes: a few scans of under
    :data:`SHAPE_MIN_BYTES`). A longer one is nearly always a tool result or a Write, one long string in a few dozen
    nodes, where those scans would cost more than the parse (a tool output's many ``\n`` escapes slow the search for
    ``\u``): it is checked by walking its nodes once, up to :data:`SHAPE_NODE_BUDGET` of them, and bounded from its
    bytes only past that. The byte bound counts one more level than the brackets in ``raw``: a summary made from a
    line's last bytes alone does not hold the record's opening brace."""
    if not isinstance(rec, dict):
        _malformed(tally, offset, f"a JSON {type(rec).__name__}, not an object")
        return None
    if is_ignored(rec):
        return None
    shape = _shape(rec) if len(raw) >= SHAPE_MIN_BYTES else None
    if shape is None:
        too_deep = raw.count(b"{") + raw.count(b"[") + 1 > MAX_RECORD_DEPTH and _depth(rec) > MAX_RECORD_DEPTH
        lone = (b"\\u" in raw or b"\xed" in raw) and _SURROGATE_ESCAPE.search(raw) is not None
    else:
        too_deep, lone = shape[0] > MAX_RECORD_DEPTH, shape[1]
    if too_deep:
        _malformed(tally, offset, f"nested deeper than {MAX_RECORD_DEPTH} levels")
        return None
    if not isinstance(rec.get("type"), str) or rec["type"] not in KNOWN_TYPES:
        tally.skipped_unknown += 1
        _name_unknown(tally, rec.get("type"))
        return None
    if lone:
        scrubbed: dict[str, Any] = scrub(rec)
        return scrubbed
    return rec


def parse_line(raw: bytes, offset: int, tally: Tally) -> dict[str, Any] | None:
    """The record of one complete line (without its newline) starting at byte ``offset``, or None (counted).

    NUL bytes: a line of NULs is one malformed line; a hole of NULs and then a record (a file that was extended
    while another process wrote it) keeps the last piece, uncounted (an over-long line likewise)."""
    line = raw.strip(b"\x00 \t\r\n")
    if not line:
        if b"\x00" in raw:
            _malformed(tally, offset, "a run of NUL bytes")
        return None
    if b"\x00" in line:
        line = line.rsplit(b"\x00", 1)[-1].strip()
    try:
        rec = json.loads(line)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        _malformed(tally, offset, f"{type(exc).__name__}: {str(exc)[:120]}")
        return None
    return check_record(rec, line, offset, tally)


def parse_long(head: bytes | None, tail: bytes, length: int, offset: int, tally: Tally) -> dict[str, Any] | None:
    """The summary record of an over-long line (``head`` None when its start was not read), or None (counted)."""
    head = head.lstrip(b"\x00 \t\r\n") if head is not None else None
    tail = tail.rstrip(b"\x00 \t\r\n")
    rec = summarise(head, tail, length)
    if rec is None:
        _malformed(tally, offset, f"a line of {length} bytes that is no JSON object")
        return None
    return check_record(rec, (head or b"") + tail, offset, tally)


class Pass:
    """One forward read of a transcript from byte ``start`` to ``until`` (None: the end of the file).

    Iterate :meth:`records` for ``(offset, record)`` of each complete line; afterwards ``end`` is the offset just
    after the last complete line and ``torn`` tells whether an unterminated, non-blank line follows (held back:
    not an error while the session runs). ``select(line) -> bool`` is asked for each line of at most
    :data:`LONG_RECORD_BYTES` before it is parsed; it must hold for any text that contains a line it holds for (a
    substring test: then a chunk for which it is false is skipped without splitting it); ``on_chunk(bytes)`` gets
    every byte read, in order; an over-long line is summarised only when ``select`` keeps its two windows.
    ``tally`` counts what was skipped (see :class:`Tally`). Raises OSError only from
    opening the file (callers open it).
    """

    def __init__(self, fh: CountedFile, tally: Tally, *, start: int = 0, until: int | None = None,
                 select: Callable[[bytes], bool] | None = None, on_chunk: Callable[[bytes], Any] | None = None):
        self.fh, self.tally, self.start, self.until = fh, tally, start, until
        self.select, self.on_chunk = select, on_chunk
        self.end = start
        self.torn = False

    def _short(self, raw: bytes, offset: int) -> dict[str, Any] | None:
        if self.select is not None and not self.select(raw):
            return None
        return parse_line(raw, offset, self.tally)

    def records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """``(byte offset, record)`` for each complete line, in file order (see the class docstring)."""
        fh, pos = self.fh, self.start
        fh.seek(pos)
        buf = bytearray()          # the current unfinished line while it is short
        line_at = pos              # file offset where the current unfinished line starts
        long: list[Any] | None = None   # [head, tail window, length] once the line is longer than LONG_RECORD_BYTES
        while True:
            want = CHUNK_BYTES if self.until is None else min(CHUNK_BYTES, self.until - pos)
            chunk = fh.read(want) if want > 0 else b""
            if not chunk:
                break
            if self.on_chunk is not None:
                self.on_chunk(chunk)
            base, i, n = pos, 0, len(chunk)
            pos += n
            skimmed = self.select is None
            while i < n:
                if not skimmed and not buf and long is None:
                    skimmed = True       # once per chunk: no line of the rest is selected -> skip it whole
                    if self.select is not None and not self.select(chunk[i:]):
                        last = chunk.rfind(b"\n", i)
                        if last >= 0:
                            line_at = self.end = base + last + 1
                        rest_at = last + 1 if last >= 0 else i
                        if rest_at < n:
                            buf, line_at = bytearray(chunk[rest_at:]), base + rest_at
                        break
                nl = chunk.find(b"\n", i)
                stop = nl if nl >= 0 else n
                if buf or long is not None:
                    piece = memoryview(chunk)[i:stop]
                    if long is not None:
                        nul = chunk.rfind(b"\x00", i, stop)
                        if nul >= 0:           # the record restarts after a hole of NUL bytes
                            long, buf = None, bytearray(chunk[nul + 1:stop])
                            line_at = base + nul + 1
                        else:
                            long[1] += piece
                            if len(long[1]) > 2 * SUMMARY_TAIL_BYTES:
                                del long[1][:-SUMMARY_TAIL_BYTES]
                            long[2] += len(piece)
                    else:
                        buf += piece
                        if len(buf) > LONG_RECORD_BYTES:
                            nul = buf.rfind(b"\x00")
                            if nul >= 0:       # the record restarts after a hole of NUL bytes
                                del buf[:nul + 1]
                                line_at += nul + 1
                        if len(buf) > LONG_RECORD_BYTES:
                            long = [bytes(buf[:SUMMARY_HEAD_BYTES]), bytearray(buf[-SUMMARY_TAIL_BYTES:]), len(buf)]
                            buf = bytearray()
                    if nl < 0:
                        break
                    if long is not None:
                        head, tail = long[0], bytes(long[1][-SUMMARY_TAIL_BYTES:])
                        rec = None if self.select is not None and not self.select(head + tail) else \
                            parse_long(head, tail, long[2], line_at, self.tally)
                    else:
                        rec = self._short(bytes(buf), line_at)
                    buf, long, at = bytearray(), None, line_at
                    i = nl + 1
                    line_at = self.end = base + i
                    if rec is not None:
                        yield at, rec
                    continue
                if nl < 0:
                    buf = bytearray(chunk[i:])
                    line_at = base + i
                    break
                if nl > i:
                    rec = self._short(chunk[i:nl], base + i)
                    if rec is not None:
                        yield base + i, rec
                at_newline = _NEWLINES.match(chunk, nl)
                assert at_newline is not None      # chunk[nl] is a newline
                i = at_newline.end()
                line_at = self.end = base + i
        rest = bytes(buf) if long is None else long[0] + bytes(long[1][-SUMMARY_TAIL_BYTES:])
        self.torn = bool(rest.strip(b"\x00 \t\r\n"))
