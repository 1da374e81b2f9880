"""Reading transcript files (JSONL) without ever raising for their content: the only code that opens them
(ARCHITECTURE invariant 2), with every read bounded (invariant 9).

- :func:`read_tail` reads backwards from the end only as far as the classifier needs: at most ``max_bytes`` (8 MiB)
  of lines, except that the start of one over-long line may be looked for up to ``scan_max_bytes`` (256 MiB,
  scanned for a newline, never held). Its walk, :func:`records_backwards`, is shared with
  :func:`live_trial.transcript.turn.read_turn`, which stops as soon as a long turn's state is decided.
  :func:`read_from` reads the complete lines after a byte offset (poll's incremental read);
  :func:`complete_end_offset` answers from a stat-keyed memo when the file did not change, so an idle poll tick
  reads no transcript byte. :func:`iter_records` streams a whole file once (launch check, evaluator index, actual
  model, plan's reuse check) and :func:`read_records` keeps every record of it.
- A line longer than :data:`~live_trial.transcript.stream.LONG_RECORD_BYTES` is never parsed whole: its record is a
  summary of its first and last bytes (:mod:`live_trial.transcript.summary`). Malformed lines are skipped and
  counted, the first problem kept.
- :func:`copy_transcript`, :func:`transcript_sha256` and :func:`hashed_fold` serve collect, verdict and plan.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path

from live_trial.transcript import stream as _stream
from live_trial.transcript.records import is_human_prompt, record_time
from live_trial.transcript.stream import CountedFile, Pass, open_transcript, parse_line, parse_long

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

TAIL_BLOCK_BYTES = 64 * 1024
#: Inside a line longer than LONG_RECORD_BYTES the walk reads this many blocks at a time: it only looks for the
#: newline before the line (a 48 MB Write is 48 MB to scan); a read ends at the scan budget, or one block past it.
LONG_LINE_BLOCKS = 16


TAIL_MAX_BYTES = 8 * 1024 * 1024


TAIL_SCAN_MAX_BYTES = 256 * 1024 * 1024


TAIL_MARGIN_RECORDS = 16


class ReadResult:
    """Records parsed from a transcript (file order) and what was skipped.

    ``skipped_malformed`` counts lines that are not a JSON object (including NUL runs);
    ``skipped_unknown`` counts objects whose ``type`` is missing or not in :data:`KNOWN_TYPES` (a known type the
    harness does not read, :data:`~live_trial.transcript.records.IGNORED_TYPES`, is left out uncounted);
    ``first_error`` describes the first malformed line; ``torn_tail`` is true when the file ends in an
    unterminated line, which is held back (not an error while the session runs). ``start_offset`` /
    ``end_offset`` are the byte range read (``end_offset`` is just after the last complete line);
    ``reached_start`` is false when a tail read stopped before the start of the file. ``parsed_bytes``: the bytes
    of the lines parsed (an over-long line counts the windows its summary was made of). ``unknown_types``: the
    skipped unknown records by type.
    """

    def __init__(self, records: list[dict[str, Any]] | None = None, skipped_malformed: int = 0,
                 skipped_unknown: int = 0, first_error: str | None = None, torn_tail: bool = False,
                 start_offset: int = 0, end_offset: int = 0, reached_start: bool = True,
                 parsed_bytes: int = 0) -> None:
        # A plain class: importing dataclasses would cost ``live-trial status`` a quarter of its start-up.
        self.records = list(records or [])
        self.skipped_malformed, self.skipped_unknown, self.first_error = skipped_malformed, skipped_unknown, first_error
        self.torn_tail, self.start_offset, self.end_offset = torn_tail, start_offset, end_offset
        self.reached_start, self.parsed_bytes = reached_start, parsed_bytes
        #: ``{type: count}`` of the records skipped as unknown, at most ``stream.UNKNOWN_NAMES_MAX`` names (the rest
        #: under ``"…"``): what a verdict names when a CLI writes records the harness was never shown
        self.unknown_types: dict[str, int] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReadResult) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"ReadResult({', '.join(f'{k}={v!r}' for k, v in vars(self).items() if k != 'records')}, " \
               f"records=<{len(self.records)}>)"


def iter_records(path: str | os.PathLike[str], *, select: Callable[[bytes], bool] | None = None,
                 on_chunk: Callable[[bytes], object] | None = None, result: ReadResult | None = None,
                 start: int = 0, until: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the records of ``path`` in file order, reading it once forwards (one chunk and one line in memory).

    ``select(line) -> bool`` skips lines without parsing them; ``on_chunk`` gets every byte read (hash while reading);
    ``result`` (a :class:`ReadResult`) gets the counts, ``end_offset`` and ``torn_tail``. A missing or unreadable file
    yields nothing (``result.first_error`` says why). Never raises for content."""
    result = result if result is not None else ReadResult()
    try:
        fh = open_transcript(path)
    except OSError as exc:
        result.first_error = f"cannot read: {exc}"
        return
    with fh:
        one = Pass(fh, result, start=start, until=until, select=select, on_chunk=on_chunk)
        for _, rec in one.records():
            yield rec
        result.end_offset, result.torn_tail = one.end, one.torn
        result.parsed_bytes += one.end - start


def assistant_records(paths: Iterable[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """The assistant records of the transcripts ``paths``, in order, streamed: only lines naming ``"assistant"`` are
    parsed (what tells whether the model answered at all: :func:`live_trial.transcript.records.model_answered`)."""
    return [rec for p in paths for rec in iter_records(p, select=lambda line: b'"assistant"' in line)
            if rec.get("type") == "assistant"]


def read_records(path: str | os.PathLike[str]) -> ReadResult:
    """Parse the whole transcript (file order), streaming. Never raises for content; a missing file gives no records.

    Keeps every record (over-long lines as summaries); steps that need only some records use :func:`iter_records`.
    An unterminated last line is held back (``torn_tail``)."""
    result = ReadResult()
    result.records = list(iter_records(path, result=result))
    return result


def read_from(path: str | os.PathLike[str], offset: int, max_bytes: int | None = None,
              until: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """Records of the complete lines after byte ``offset``, and the offset just after the last one.

    A torn last line is not consumed (the next call reads it once it is complete). When the file is
    shorter than ``offset`` (replaced), reading restarts at 0. ``max_bytes`` bounds the bytes read per
    call (the rest is read by the next call); ``until`` stops at that byte offset (a known line end). A missing file
    gives ``([], offset)``. An over-long line is summarised, never held whole."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return [], offset
    if offset > size:
        offset = 0
    stop = size if until is None else min(until, size)
    if max_bytes:
        stop = min(stop, offset + max_bytes)
    result = ReadResult(end_offset=offset)
    records = list(iter_records(path, result=result, start=offset, until=stop))
    return records, max(result.end_offset, offset)


_END_MEMO: dict[str, tuple[tuple[int, int, int, int], int]] = {}
_END_MEMO_MAX = 64


def complete_end_offset(path: str | os.PathLike[str]) -> int:
    """Byte offset just after the last complete line (0 for a missing or empty file).

    Answers from a memo when the file's (device, inode, size, mtime) did not change (an idle poll tick reads no
    byte); when it only grew, only the new bytes are searched (transcripts are append-only)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    memo = _END_MEMO.get(str(path))
    if memo is not None and memo[0] == key:
        return memo[1]
    floor, known = 0, 0
    if memo is not None and memo[0][:2] == key[:2] and memo[0][2] <= st.st_size:
        floor, known = memo[0][2], memo[1]
    end = known
    try:
        with open_transcript(path) as fh:
            pos = st.st_size
            while pos > floor:
                start = max(floor, pos - TAIL_BLOCK_BYTES)
                fh.seek(start)
                nl = fh.read(pos - start).rfind(b"\n")
                if nl >= 0:
                    end = start + nl + 1
                    break
                pos = start
    except OSError:
        return 0
    if len(_END_MEMO) >= _END_MEMO_MAX:
        _END_MEMO.clear()
    _END_MEMO[str(path)] = (key, end)
    return end


class _Backwards:
    """The lines of a file read backwards from ``end`` in blocks, each line whole or, when over-long, summarised."""

    def __init__(self, fh: CountedFile, result: ReadResult, scan_max: int) -> None:
        self.fh, self.result, self.scan_max = fh, result, scan_max
        self.scanned = 0

    def read(self, start: int, stop: int) -> bytes:
        self.fh.seek(start)
        data = self.fh.read(stop - start)
        self.scanned += len(data)
        return data

    def finish(self, start: int, stop: int, pieces: list[bytes] | None, tail: bytes | None,
               rec_start: int | None) -> dict[str, Any] | None:
        """The record of the line [start, stop) (without its newline) from its pieces (newest first) or as a
        summary; None when it is none (counted in the result)."""
        if pieces is not None:
            self.result.parsed_bytes += stop - start
            return parse_line(b"".join(reversed(pieces)), start, self.result)
        if rec_start is not None and rec_start > start:
            start = rec_start              # a hole of NUL bytes, then the record: keep the record
        if stop - start <= _stream.LONG_RECORD_BYTES:
            self.result.parsed_bytes += stop - start
            return parse_line(self.read(start, stop), start, self.result)
        head = self.read(start, start + _stream.SUMMARY_HEAD_BYTES)
        self.result.parsed_bytes += len(head) + len(tail or b"")
        return parse_long(head, tail or b"", stop - start, start, self.result)


def read_tail(path: str | os.PathLike[str], *, max_bytes: int = TAIL_MAX_BYTES, margin: int = TAIL_MARGIN_RECORDS,
              scan_max_bytes: int = TAIL_SCAN_MAX_BYTES) -> ReadResult:
    """Read backwards from the end until the newest human prompt and enough before it are in hand.

    Stops when the window holds a human prompt with at least ``margin`` records before it in file order
    the oldest of which is older (by timestamp) than that prompt (out-of-order first turns, claude-cli-observed.md
    pitfall 1), or at the start of the file, or once the lines read span ``max_bytes``. Whatever the line lengths,
    at most ``max(max_bytes, scan_max_bytes)`` bytes plus one block and one summary head (or one record after a NUL
    hole) are read (:func:`records_backwards`). Records are returned in file order. The cost depends on the size of the
    last turn (bounded), not of the file (benchmarks/status.py).
    """
    result = ReadResult(reached_start=False)
    found: list[dict[str, Any]] = []             # newest first
    walk = records_backwards(path, result, max_bytes=max_bytes, scan_max_bytes=scan_max_bytes)
    for rec in walk:
        if rec is not None:
            found.append(rec)
        elif _tail_is_enough(found[::-1], margin):
            break                      # what is still unfinished is older than the turn in hand
    walk.close()
    result.records = found[::-1]
    result.reached_start = result.start_offset == 0
    return result


def records_backwards(path: str | os.PathLike[str], result: ReadResult, *, max_bytes: int = TAIL_MAX_BYTES,
                      scan_max_bytes: int = TAIL_SCAN_MAX_BYTES) -> Generator[dict[str, Any] | None, None, None]:
    """The records of ``path`` newest first, read back from the end of its last complete line, and None at each
    block boundary (a point where every line not yet yielded is older than those yielded: a reader may stop there).

    Fills ``result``: ``end_offset`` (just after the last complete line), ``torn_tail``, the counts and
    ``parsed_bytes``, and ``start_offset`` (the start of the oldest line read so far, updated before each record is
    yielded, so a reader that stops at a record has the offset of that record). Stops by itself at the start of the
    file or once the lines read span ``max_bytes``. Whatever the line lengths, at most ``max(max_bytes,
    scan_max_bytes)`` bytes plus one block and one summary head are read, or instead of that head, when an over-long
    line is a run of NUL bytes and then a record, that record (at most ``LONG_RECORD_BYTES``): a line longer than
    :data:`~live_trial.transcript.stream.LONG_RECORD_BYTES` is summarised from its first and last bytes, its middle
    only scanned for the newline before it; when even that newline lies beyond ``scan_max_bytes`` the line is
    summarised from its last bytes alone. A file that cannot be opened yields nothing (``first_error`` says why).
    Close the generator when stopping early (the file is open while it runs)."""
    try:
        fh = open_transcript(path)
    except OSError as exc:
        result.first_error = f"cannot read: {exc}"
        return
    with fh:
        back = _Backwards(fh, result, scan_max_bytes)
        size = fh.size()
        pos, end, block = size, None, b""
        torn = False
        while pos > 0 and back.scanned < scan_max_bytes:      # the end of the last complete line
            start = max(0, pos - TAIL_BLOCK_BYTES)
            block = back.read(start, pos)
            nl = block.rfind(b"\n")
            torn = torn or bool(block[nl + 1:].strip(b"\x00 \t\r\n"))
            pos = start
            if nl >= 0:
                end, block = start + nl + 1, block[:nl + 1]
                break
        result.torn_tail = torn
        if end is None:
            end = 0
            if pos > 0:
                result.first_error = f"no complete line in the last {back.scanned} bytes"
                result.end_offset = result.start_offset = size
                return
        result.end_offset = result.start_offset = end
        yield from _walk(back, result, pos, block, end, max_bytes)


def _walk(back: _Backwards, result: ReadResult, pos: int, block: bytes, end: int,
          max_bytes: int) -> Iterator[dict[str, Any] | None]:
    """The line walk of :func:`records_backwards`: ``block`` holds the bytes [pos, end), ``end`` is just after a
    newline."""
    line_end = end - 1                 # the current line is [?, line_end); its newline is at line_end
    pieces: list[bytes] | None = []    # parts of the current line, newest first, while it is short
    plen = 0
    tail: bytes | None = None          # the last bytes of the current line once it is over-long
    rec_start: int | None = None       # where the record starts in an over-long line (after a NUL hole)
    cut = len(block) - 1
    while True:
        while True:                    # the lines of this block, from its end backwards
            nl = block.rfind(b"\n", 0, cut)
            if pieces is not None:
                piece = block[nl + 1:cut]
                pieces.append(piece)
                plen += len(piece)
                if plen > _stream.LONG_RECORD_BYTES:
                    whole = b"".join(reversed(pieces))
                    tail, pieces = whole[-_stream.SUMMARY_TAIL_BYTES:], None
                    hole = whole.rfind(b"\x00")
                    rec_start = line_end - len(whole) + hole + 1 if hole >= 0 else None
            elif rec_start is None:
                hole = block.rfind(b"\x00", nl + 1, cut)
                if hole >= 0:
                    rec_start = pos + hole + 1
            if nl < 0:
                break
            line_start = pos + nl + 1
            rec = back.finish(line_start, line_end, pieces, tail, rec_start)
            result.start_offset = line_start
            pieces, plen, tail, rec_start = [], 0, None, None
            line_end, cut = pos + nl, nl
            if rec is not None:
                yield rec
            if end - line_start >= max_bytes:
                return
        if pos == 0:                   # the first line of the file
            rec = back.finish(0, line_end, pieces, tail, rec_start) if line_end > 0 else None
            result.start_offset = 0
            if rec is not None:
                yield rec
            return
        yield None                     # a block boundary: the reader may stop here
        if end - line_end >= max_bytes and pieces is not None:
            return                     # a short line cut by the budget is left out
        if back.scanned >= back.scan_max:
            if pieces is None:         # an over-long line whose start lies beyond the scan budget
                rec = parse_long(None, tail or b"", line_end - pos, pos, result)
                if rec is not None:
                    yield rec
            return
        step = TAIL_BLOCK_BYTES
        if pieces is None:             # inside an over-long line: only its start is wanted; larger reads, same budget
            step = max(step, min(step * LONG_LINE_BLOCKS, back.scan_max - back.scanned))
        start = max(0, pos - step)
        block = back.read(start, pos)
        pos, cut = start, len(block)


def _tail_is_enough(records: list[dict[str, Any]], margin: int) -> bool:
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


def copy_transcript(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> int:
    """Copy a transcript file (bytes as they are, torn last line included) to ``dst`` atomically, readable by its
    owner only (0600, folders 0700).

    Used by collect to put ``transcript.jsonl`` (and subagent transcripts) into the workdir, so that
    only this module opens transcript files (ARCHITECTURE invariant 2). Returns the bytes copied;
    raises OSError when ``src`` cannot be read.
    """
    import shutil
    import tempfile

    from live_trial.jsonfile import make_private_dirs

    dst = Path(dst)
    make_private_dirs(dst.parent)
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


def transcript_sha256(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a transcript file's bytes (the verdict's ``transcript_sha256``; plan's reuse check).

    Kept here so only this module opens transcript files (ARCHITECTURE invariant 2). Raises OSError when unreadable.
    """
    import hashlib

    with open_transcript(path) as fh:
        h = hashlib.sha256()
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def hashed_fold(path: str | os.PathLike[str], fold: Callable[[dict[str, Any]], object],
                select: Callable[[bytes], bool] | None = None, result: ReadResult | None = None) -> str:
    """ONE forward pass over ``path``: hand each record ``select`` keeps to ``fold(record)`` (nothing is kept here,
    so memory stays bounded whatever the file holds) and return ``sha256:<hex>`` of the file's bytes (verdict: the
    hash, the actual model and the rehearsal replies; plan: the hash, the human prompts and the rehearsal replies).
    Raises OSError when the file cannot be opened."""
    import hashlib

    result = result if result is not None else ReadResult()
    h = hashlib.sha256()
    for rec in iter_records(path, select=select, on_chunk=h.update, result=result):
        fold(rec)
    if result.first_error and result.first_error.startswith("cannot read"):
        raise OSError(result.first_error)
    return "sha256:" + h.hexdigest()


def hashed_records(path: str | os.PathLike[str], select: Callable[[bytes], bool] | None = None,
                   result: ReadResult | None = None) -> tuple[str, list[dict[str, Any]]]:
    """:func:`hashed_fold` keeping the records ``select`` keeps: ``(sha256:<hex>, records)``. Raises OSError when
    the file cannot be opened."""
    records: list[dict[str, Any]] = []
    return hashed_fold(path, records.append, select, result), records



def unknown_record_types(*paths: str | os.PathLike[str]) -> dict[str, int]:
    """``{type: count}`` of the records in ``paths`` whose ``type`` the reader does not know (see
    :attr:`ReadResult.unknown_types`): what a verdict names when the CLI writes records the harness was never shown
    (README "Set-up", references/transcript-jsonl.md "Supported CLI versions"). Only lines holding a ``"type":"X"``
    whose X is neither a record type nor a content block's are parsed (:func:`~live_trial.transcript.stream.
    names_unknown_type`), so a transcript of known records costs a byte search. A missing file counts nothing."""
    result = ReadResult()
    for path in paths:
        for _ in iter_records(path, select=_stream.names_unknown_type, result=result):
            pass
    return dict(result.unknown_types)
