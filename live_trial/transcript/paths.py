"""Where a Claude Code session keeps its files: the config folder, the transcript path of a session id
(``<config>/projects/<slug>/<session-id>.jsonl``) and the CLI's live status file ``<config>/sessions/<pid>.json``.

Facts from claude-cli-observed.md ("Paths"); the format of the files is ``references/transcript-jsonl.md``.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from live_trial.errors import RefusedInput

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only (importing typing costs every command's start-up)
    from typing import Any

SLUG_MAX = 200


_SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


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


def project_slug(cwd: str | os.PathLike[str]) -> str:
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


def locate(session_id: str, cwd: str | os.PathLike[str] | None = None,
           config: str | os.PathLike[str] | None = None) -> Path:
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


def subagents_dir(transcript: str | os.PathLike[str]) -> Path:
    """``<project>/<session-id>/subagents/``: where the CLI writes the transcripts of the session's subagents, beside
    the session's own ``<session-id>.jsonl`` (references/transcript-jsonl.md)."""
    return Path(transcript).with_suffix("") / "subagents"


def cli_session_status_path(config: str | os.PathLike[str] | None, pid: int) -> Path:
    """``<config>/sessions/<pid>.json``: the live status file of the CLI process ``pid`` (``config`` None: the
    user's :func:`config_dir`)."""
    return Path(config if config is not None else config_dir()) / "sessions" / f"{int(pid)}.json"


def read_cli_session_status(config: str | os.PathLike[str] | None, pid: int | None) -> dict[str, Any] | None:
    """``<config>/sessions/<pid>.json`` as a dict (``status`` idle|busy|waiting|shell, ``waitingFor``, ``sessionId``).

    ``shell``: idle with background shells running; ``busy`` also while background agents run. ``sessionId`` is the
    session the CLI writes now: it switches on ``/clear`` (:mod:`live_trial.transcript.locator` follows it).
    None when the pid is unknown or the file is missing or unreadable. The file stays ``busy`` after a
    SIGKILL: callers must check that the pid is alive before trusting it (claude-cli-observed.md, pitfall 7).
    """
    if not pid:
        return None
    path = cli_session_status_path(config, pid)
    doc = _read_small_json(path)
    for inner in ([] if doc is not None or path.exists() else _namespaced_pids(int(pid))):
        found = _read_small_json(cli_session_status_path(config, inner))
        if found is not None and str(found.get("pid", inner)) == str(inner):
            return found
    return doc


def _namespaced_pids(pid: int, limit: int = 64) -> list[int]:
    """The pids of ``pid``'s descendants (parents first, at most ``limit``) that run in a PID namespace below ours, as
    their innermost namespace numbers them: a CLI the holder runs in a PID namespace (README "Nothing left running")
    names its ``sessions/<pid>.json`` by that pid, so the pane's pid finds it through them. Linux ``/proc``; empty
    elsewhere."""
    children: dict[int, list[int]] = {}
    try:
        names = [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []
    for child in names:
        try:
            ppid = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(child)
    out: list[int] = []
    todo, seen = list(children.get(pid, [])), {pid}
    while todo and len(seen) <= limit:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        todo += children.get(current, [])
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        nspid = next((ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")), [])
        if len(nspid) >= 2 and nspid[-1].isdigit():
            out.append(int(nspid[-1]))
    return out


def find_cli_session(config: str | os.PathLike[str] | None, session_id: str) -> tuple[int, dict[str, Any]] | None:
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


def _read_small_json(path: Path) -> dict[str, Any] | None:
    """A JSON object the CLI wrote (``sessions/<pid>.json``), or None when it is missing, unreadable, not an object,
    nested too deep or holding an integer too long to read (never a traceback in status or poll)."""
    from live_trial.jsonfile import parse_json

    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
