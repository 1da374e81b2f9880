"""The Claude Code session transcript (JSONL): where it is and how to read it without ever raising.

This is the only module that opens transcript files (ARCHITECTURE invariant 2). It does not classify;
``live_trial.status`` does. Facts about the format: ``references/transcript-jsonl.md``.

- :func:`locate` finds ``<config>/projects/<slug>/<session-id>.jsonl`` (issue 4, "transcript").
- :func:`read_records` parses a whole file tolerantly; :func:`read_tail` reads backwards from the end
  only as far as the state needs (cost independent of file size); :func:`read_from` reads complete
  lines after a byte offset (poll's incremental read).
- :func:`normalise_text` is the one text comparison used everywhere (issue 8, item 2).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.errors import RefusedInput

#: Record types the CLI 2.1.197 writes (claude-cli-observed.md) plus older/other known ones. Others are
#: skipped and counted as unknown.
KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "attachment", "file-history-snapshot", "mode", "permission-mode",
    "queue-operation", "last-prompt", "summary", "custom-title", "ai-title", "agent-name", "tag", "pr-link",
})
INTERRUPT_TEXTS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
SYNTHETIC_MODEL = "<synthetic>"
#: User text that the CLI writes for local slash commands: neither a prompt nor a conversation event.
LOCAL_COMMAND_PREFIXES = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")
TAIL_BLOCK_BYTES = 64 * 1024
TAIL_MAX_BYTES = 8 * 1024 * 1024
TAIL_MARGIN_RECORDS = 16
SLUG_MAX = 200
_SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


@dataclass
class ReadResult:
    """Records parsed from a transcript (file order) and what was skipped.

    ``skipped_malformed`` counts lines that are not a JSON object (including NUL runs);
    ``skipped_unknown`` counts objects whose ``type`` is missing or not in :data:`KNOWN_TYPES`;
    ``first_error`` describes the first malformed line; ``torn_tail`` is true when the file ends in an
    unterminated line, which is held back (not an error while the session runs). ``start_offset`` /
    ``end_offset`` are the byte range read (``end_offset`` is just after the last complete line);
    ``reached_start`` is false when a tail read stopped before the start of the file.
    """

    records: list[dict] = field(default_factory=list)
    skipped_malformed: int = 0
    skipped_unknown: int = 0
    first_error: str | None = None
    torn_tail: bool = False
    start_offset: int = 0
    end_offset: int = 0
    reached_start: bool = True


# ----------------------------------------------------------------------------------------------- paths

def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config folder: env ``CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``."""
    env = os.environ if env is None else env
    explicit = env.get("CLAUDE_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units, as a signed 32-bit int (the CLI's long-slug hash)."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = []
    while n:
        n, r = divmod(n, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def project_slug(cwd: str | os.PathLike) -> str:
    """The folder name under ``projects/`` for ``cwd``.

    Every UTF-16 code unit outside ``[A-Za-z0-9]`` becomes ``-`` (case kept). Longer than 200 chars:
    the first 200 + ``-`` + base36(|Java string hash of the cwd|) (claude-cli-observed.md, "Paths").
    """
    text = str(cwd)
    slug = "".join(ch if (ch.isascii() and ch.isalnum()) else ("--" if ord(ch) > 0xFFFF else "-") for ch in text)
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_base36(abs(java_string_hash(text)))}"


def check_session_id(session_id: str) -> str:
    """Return ``session_id`` or raise :class:`RefusedInput` when it is not a safe file stem (uuid-like)."""
    if not isinstance(session_id, str) or not _SESSION_ID_RE.match(session_id):
        raise RefusedInput(f"session id {session_id!r} is not a uuid-like name", where="--session-id / SESSION_ID",
                           fix="pass the SESSION_ID printed by boot")
    return session_id


def locate(session_id: str, cwd: str | os.PathLike | None = None, config: str | os.PathLike | None = None) -> Path:
    """Path of the main transcript ``<config>/projects/<slug>/<session-id>.jsonl``.

    Tries the slug of ``cwd`` (as given and resolved), then globs ``projects/*/<session-id>.jsonl``
    (subagent files live deeper and are never matched). Returns the first existing file; when none
    exists yet (the CLI creates it at the first prompt) returns the expected path for ``cwd`` (or the
    first candidate), so callers test ``.exists()``. Raises :class:`RefusedInput` for an unsafe id.
    """
    check_session_id(session_id)
    projects = Path(config if config is not None else config_dir()) / "projects"
    candidates: list[Path] = []
    if cwd is not None:
        for c in (str(cwd), os.path.realpath(cwd), os.path.abspath(cwd)):
            p = projects / project_slug(c) / f"{session_id}.jsonl"
            if p not in candidates:
                candidates.append(p)
    for p in candidates:
        if p.is_file():
            return p
    try:
        found = sorted(projects.glob(f"*/{session_id}.jsonl"))
    except OSError:
        found = []
    for p in found:
        if p.is_file():
            return p
    return candidates[0] if candidates else projects / "_unknown_" / f"{session_id}.jsonl"


def read_cli_session_status(config: str | os.PathLike | None, pid: int | None) -> dict | None:
    """``<config>/sessions/<pid>.json`` as a dict (``status`` idle|busy|waiting, ``waitingFor``, ``sessionId``).

    None when the pid is unknown or the file is missing or unreadable. The file stays ``busy`` after a
    SIGKILL: callers must check that the pid is alive before trusting it (issue 4).
    """
    if not pid:
        return None
    path = Path(config if config is not None else config_dir()) / "sessions" / f"{int(pid)}.json"
    return _read_small_json(path)


def find_cli_session(config: str | os.PathLike | None, session_id: str) -> tuple[int, dict] | None:
    """Scan ``<config>/sessions/*.json`` for the one whose ``sessionId`` is ``session_id``: ``(pid, doc)`` or None."""
    folder = Path(config if config is not None else config_dir()) / "sessions"
    try:
        paths = list(folder.glob("*.json"))
    except OSError:
        return None
    for path in paths:
        doc = _read_small_json(path)
        if doc and doc.get("sessionId") == session_id:
            try:
                return int(doc.get("pid") or path.stem), doc
            except (TypeError, ValueError):
                continue
    return None


def _read_small_json(path: Path) -> dict | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


# ----------------------------------------------------------------------------------------------- parsing

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
    the oldest of which is older (by timestamp) than that prompt (out-of-order first turns, issue 4),
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
        pos, pending, collected = end, b"", []
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
                        break
                    continue
                pending, data, base = data[:nl + 1], data[nl + 1:], start + nl + 1
            else:
                pending, base = b"", 0
            collected = _parse_lines(_split_complete(data, base)[0], result) + collected
            result.start_offset = base
            if end - base >= max_bytes or _tail_is_enough(collected, margin):
                break
        result.reached_start = result.start_offset == 0
        result.records = collected
    return result


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


# ----------------------------------------------------------------------------------------------- records

def record_time(rec: Mapping[str, Any]) -> float | None:
    """The record's ``timestamp`` as epoch seconds, or None when missing or unparseable."""
    ts = rec.get("timestamp")
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def message_content(rec: Mapping[str, Any]) -> Any:
    """``message.content`` of a record (a string, a list of blocks, or None)."""
    msg = rec.get("message")
    return msg.get("content") if isinstance(msg, dict) else None


def prompt_text(rec: Mapping[str, Any]) -> str:
    """The text of a user record: string content, or the ``text`` blocks of list content joined by newlines."""
    content = message_content(rec)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    return ""


def is_human_prompt(rec: Mapping[str, Any]) -> bool:
    """True for a prompt a person (or the harness) submitted: a main-chain, non-meta user record whose
    content is text (no tool_result), that is not an interrupt marker or local-command output, and whose
    ``origin.kind`` (when present) is ``human``."""
    if rec.get("type") != "user" or rec.get("isSidechain") is True or rec.get("isMeta") is True:
        return False
    if rec.get("toolUseResult") is not None:
        return False
    origin = rec.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
        return False
    content = message_content(rec)
    if isinstance(content, list):
        if not content or any(not isinstance(b, dict) or b.get("type") not in ("text", "image") for b in content):
            return False
    elif not isinstance(content, str):
        return False
    text = prompt_text(rec).strip()
    if text in INTERRUPT_TEXTS or text.startswith(LOCAL_COMMAND_PREFIXES):
        return False
    return True


def human_prompts(records: Iterable[Mapping[str, Any]]) -> list[dict]:
    """The human prompts (see :func:`is_human_prompt`) in time order (timestamp, then file order)."""
    found = [(i, r) for i, r in enumerate(records) if is_human_prompt(r)]
    return [r for _, r in sorted(found, key=lambda p: (record_time(p[1]) or float("-inf"), p[0]))]


def normalise_text(text: str) -> str:
    """The one text comparison of the project: CRLF/CR become LF, trailing whitespace is stripped from each
    line and from the end. Newlines inside the text are kept ("AAA\\nBBB" never equals "AAABBB")."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip()


def main_chain_assistant_models(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Unique ``message.model`` values of main-chain assistant records, first-seen order, without
    ``<synthetic>`` (records the CLI wrote itself: interrupts, API errors). The proof gate's input."""
    seen: list[str] = []
    for rec in records:
        if rec.get("type") != "assistant" or rec.get("isSidechain") is True:
            continue
        msg = rec.get("message")
        model = msg.get("model") if isinstance(msg, dict) else None
        if isinstance(model, str) and model and model != SYNTHETIC_MODEL and model not in seen:
            seen.append(model)
    return seen


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
