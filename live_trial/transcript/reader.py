"""Reading transcript files (JSONL) without ever raising for their content: the only code that opens them
(ARCHITECTURE invariant 2).

- :func:`read_records` parses a whole file tolerantly; :func:`read_tail` reads backwards from the end only as far
  as the classifier needs (cost independent of the file's size); :func:`read_from` reads complete lines after a
  byte offset (poll's incremental read). Malformed lines are skipped and counted, the first error kept.
- :func:`copy_transcript` and :func:`transcript_sha256` serve collect, verdict and plan.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from live_trial.transcript.records import KNOWN_TYPES, is_human_prompt, record_time

TAIL_BLOCK_BYTES = 64 * 1024


TAIL_MAX_BYTES = 8 * 1024 * 1024


TAIL_MARGIN_RECORDS = 16


class ReadResult:
    """Records parsed from a transcript (file order) and what was skipped.

    ``skipped_malformed`` counts lines that are not a JSON object (including NUL runs);
    ``skipped_unknown`` counts objects whose ``type`` is missing or not in :data:`KNOWN_TYPES`;
    ``first_error`` describes the first malformed line; ``torn_tail`` is true when the file ends in an
    unterminated line, which is held back (not an error while the session runs). ``start_offset`` /
    ``end_offset`` are the byte range read (``end_offset`` is just after the last complete line);
    ``reached_start`` is false when a tail read stopped before the start of the file.
    """

    def __init__(self, records: list[dict] | None = None, skipped_malformed: int = 0, skipped_unknown: int = 0,
                 first_error: str | None = None, torn_tail: bool = False, start_offset: int = 0, end_offset: int = 0,
                 reached_start: bool = True) -> None:
        # A plain class: importing dataclasses would cost ``live-trial status`` a quarter of its start-up.
        self.records = list(records or [])
        self.skipped_malformed, self.skipped_unknown, self.first_error = skipped_malformed, skipped_unknown, first_error
        self.torn_tail, self.start_offset, self.end_offset = torn_tail, start_offset, end_offset
        self.reached_start = reached_start


def _parse_lines(lines: Iterable[tuple[int, bytes]], result: ReadResult) -> list[dict]:
    """Parse ``(byte_offset, line)`` pairs into records, counting what is skipped into ``result``."""
    out: list[dict] = []
    for offset, raw in lines:
        line = raw.strip(b"\x00 \t\r\n")
        if not line:
            if b"\x00" in raw:
                result.skipped_malformed += 1
                result.first_error = result.first_error or f"byte {offset}: a run of NUL bytes"
            continue
        if b"\x00" in line:  # a hole of zeros and then a record appended after it: keep the last piece
            line = line.rsplit(b"\x00", 1)[-1].strip()
        try:
            rec = json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            result.skipped_malformed += 1
            result.first_error = result.first_error or f"byte {offset}: {type(exc).__name__}: {str(exc)[:120]}"
            continue
        if not isinstance(rec, dict):
            result.skipped_malformed += 1
            result.first_error = result.first_error or f"byte {offset}: a JSON {type(rec).__name__}, not an object"
            continue
        if not isinstance(rec.get("type"), str) or rec["type"] not in KNOWN_TYPES:
            result.skipped_unknown += 1
            continue
        out.append(rec)
    return out


def _split_complete(data: bytes, base: int) -> tuple[list[tuple[int, bytes]], int]:
    """Split ``data`` (starting at file offset ``base``) into complete lines; return them and the end offset."""
    lines = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        lines.append((base + pos, data[pos:nl]))
        pos = nl + 1
    return lines, base + pos


def read_records(path: str | os.PathLike) -> ReadResult:
    """Parse the whole transcript (file order). Never raises for content; a missing file gives no records.

    Used by collect/verdict and as the baseline in benchmarks/status.py; poll and status use
    :func:`read_tail`. An unterminated last line is held back (``torn_tail``).
    """
    result = ReadResult()
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        result.first_error = f"cannot read: {exc}"
        return result
    lines, end = _split_complete(data, 0)
    result.records = _parse_lines(lines, result)
    result.end_offset = end
    result.torn_tail = end < len(data) and bool(data[end:].strip(b"\x00 \t\r\n"))
    return result


def read_from(path: str | os.PathLike, offset: int, max_bytes: int | None = None) -> tuple[list[dict], int]:
    """Records of the complete lines after byte ``offset``, and the offset just after the last one.

    A torn last line is not consumed (the next call reads it once it is complete). When the file is
    shorter than ``offset`` (replaced), reading restarts at 0. ``max_bytes`` bounds the bytes read per
    call (the rest is read by the next call). A missing file gives ``([], offset)``.
    """
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if offset > size:
                offset = 0
            fh.seek(offset)
            data = fh.read(max_bytes) if max_bytes else fh.read()
    except OSError:
        return [], offset
    lines, end = _split_complete(data, offset)
    return _parse_lines(lines, ReadResult()), end


def complete_end_offset(path: str | os.PathLike) -> int:
    """Byte offset just after the last complete line (0 for a missing or empty file). Reads from the end only."""
    try:
        with open(path, "rb") as fh:
            pos = os.fstat(fh.fileno()).st_size
            while pos > 0:
                start = max(0, pos - TAIL_BLOCK_BYTES)
                fh.seek(start)
                block = fh.read(pos - start)
                nl = block.rfind(b"\n")
                if nl >= 0:
                    return start + nl + 1
                pos = start
    except OSError:
        return 0
    return 0


def read_tail(path: str | os.PathLike, *, max_bytes: int = TAIL_MAX_BYTES,
              margin: int = TAIL_MARGIN_RECORDS) -> ReadResult:
    """Read backwards from the end until the newest human prompt and enough before it are in hand.

    Stops when the window holds a human prompt with at least ``margin`` records before it in file order
    the oldest of which is older (by timestamp) than that prompt (out-of-order first turns, claude-cli-observed.md pitfall 1),
    or at the start of the file, or after ``max_bytes``. Records are returned in file order. The cost
    depends on the size of the last turn, not of the file (benchmarks/status.py).
    """
    result = ReadResult(reached_start=False)
    end = complete_end_offset(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        result.first_error = f"cannot read: {exc}"
        result.reached_start = True
        return result
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size > end:
            fh.seek(end)
            result.torn_tail = bool(fh.read(min(size - end, 1 << 20)).strip(b"\x00 \t\r\n"))
        result.end_offset = result.start_offset = end
        collected: list[dict] = []
        for base, data in blocks_backwards(fh, end, max_bytes, result):
            collected = _parse_lines(_split_complete(data, base)[0], result) + collected
            result.start_offset = base
            if end - base >= max_bytes or _tail_is_enough(collected, margin):
                break
        result.reached_start = result.start_offset == 0
        result.records = collected
    return result


def blocks_backwards(fh, end: int, max_bytes: int, result: ReadResult) -> Iterator[tuple[int, bytes]]:
    """The complete lines of the open binary file ``fh`` before byte ``end``, a block of about
    :data:`TAIL_BLOCK_BYTES` at a time from the end: ``(offset of the block's first line, its bytes)``, each block
    ending with a newline. A line longer than ``max_bytes`` ends the walk, counted in ``result`` as malformed."""
    pos, pending = end, b""
    while pos > 0:
        start = max(0, pos - TAIL_BLOCK_BYTES)
        fh.seek(start)
        data = fh.read(pos - start) + pending
        pos = start
        if start > 0:
            nl = data.find(b"\n")
            if nl < 0:          # one line longer than a block: keep collecting it, up to max_bytes
                pending = data
                if end - start >= max_bytes:
                    result.skipped_malformed += 1
                    result.first_error = result.first_error or f"byte {start}: a line longer than {max_bytes} bytes"
                    return
                continue
            pending, data, base = data[:nl + 1], data[nl + 1:], start + nl + 1
        else:
            pending, base = b"", 0
        yield base, data


def _tail_is_enough(records: list[dict], margin: int) -> bool:
    newest_i, newest_t = None, None
    for i, rec in enumerate(records):
        if is_human_prompt(rec):
            t = record_time(rec)
            if newest_i is None or (t is not None and (newest_t is None or t >= newest_t)):
                newest_i, newest_t = i, t
    if newest_i is None or newest_i < margin:
        return False
    first_t = next((record_time(r) for r in records[:newest_i] if record_time(r) is not None), None)
    return newest_t is None or first_t is None or first_t < newest_t


def copy_transcript(src: str | os.PathLike, dst: str | os.PathLike) -> int:
    """Copy a transcript file (bytes as they are, torn last line included) to ``dst`` atomically.

    Used by collect to put ``transcript.jsonl`` (and subagent transcripts) into the workdir, so that
    only this module opens transcript files (ARCHITECTURE invariant 2). Returns the bytes copied;
    raises OSError when ``src`` cannot be read.
    """
    import shutil
    import tempfile

    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".tmp", dir=dst.parent)
    try:
        with open(src, "rb") as fin, os.fdopen(fd, "wb") as fout:
            shutil.copyfileobj(fin, fout)
            fout.flush()
            os.fsync(fout.fileno())
            size = fout.tell()
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return size


def transcript_sha256(path: str | os.PathLike) -> str:
    """``sha256:<hex>`` of a transcript file's bytes (the verdict's ``transcript_sha256``; plan's reuse check).

    Kept here so only this module opens transcript files (ARCHITECTURE invariant 2). Raises OSError when unreadable.
    """
    import hashlib

    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()
