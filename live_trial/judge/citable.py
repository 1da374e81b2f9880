"""What an evidence item may cite (seed 000 rule 1; README "Evidence, watches and messages to a person").

Evidence is something the trial's own session did, and nothing else:

- a file the session created or changed in its own folder, cited by its copy ``side-effects/files/<path>`` (or as
  ``cwd/<path>`` when the folder is the workdir's ``cwd/`` and ``<path>`` has such a copy), or the git diff of the
  folder (``side-effects/git-diff.patch``, against the folder's state at start);
- the transcript record of a tool call with its successful result, cited by the uuid of the call or of its result;
- a line of the plugins' activity, cited as ``plugin-activity#<id>`` (``hook-2``, ``mcp-1``): what the CLI recorded
  of a hook's runs or an MCP server's start and calls (:mod:`live_trial.session.plugin_activity`), never the
  session's words, so a skill whose promise is a hook's effect can be judged on it;
  a Write or Edit call (or MultiEdit, NotebookEdit) only while each file it wrote is still there at the end with what
  it wrote, as its copy under ``side-effects/files/`` shows (README "Evidence"): a file removed or changed afterwards
  is no evidence by the call that once wrote it.

Never evidence, in any spelling of the reference (relative or absolute path, ``./`` and ``..``, a ``:3`` or ``#L3``
line reference, a symlink, ``transcript.jsonl#<uuid>``, an upper-case uuid): the session's own words (assistant text
records, the DONE line; ``transcript.jsonl``, ``subagents/``, ``pane.txt`` as files), the completion marker and its
summary, anything else in ``out/``, every other file the harness writes
(:data:`~live_trial.judge.sources.HARNESS_FILES`), the author's files and anything in the trial's folder the session did
not create or change, and prompts. :func:`resolve` returns the text a cited source holds, or why it may not be cited.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from live_trial import workdir_files as wf
from live_trial.jsonfile import parse_json
from live_trial.judge.context import Context
from live_trial.judge.index import RecordFacts, Wrote
from live_trial.judge.sources import is_harness_path, source_path, strip_location
from live_trial.session.plugin_activity import CITE_PREFIX

#: How an evidence item cites a line of the plugins' activity (``plugin-activity#hook-2``).
ACTIVITY_PREFIX = CITE_PREFIX
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Workdir files that hold the session's own words (and the harness's prompts): cite a tool call's record instead.
OWN_WORDS_FILES = (wf.TRANSCRIPT, wf.PANE, wf.SUBAGENTS)
READ_MAX_BYTES = 2_000_000


#: The most of the completion marker read for the status in it (task.md asks for one small JSON object).
MARKER_MAX_BYTES = 64 * 1024


def marker_status(workdir: Path) -> str | None:
    """The status the session reported of itself in its completion marker (``out/status.json``'s ``status``, which
    task.md asks to be ``ok`` or ``failed``), at most 200 characters; None when there is no marker, it is not a JSON
    object within :data:`MARKER_MAX_BYTES`, or it holds no status. The session's own words: never evidence (README
    "Evidence, watches and messages to a person"), only what a person and the evaluator are told it said."""
    try:
        with open(wf.Workdir.of(workdir).marker, "rb") as fh:
            data = fh.read(MARKER_MAX_BYTES + 1)
        doc = parse_json(data.decode("utf-8")) if len(data) <= MARKER_MAX_BYTES else None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    status = doc.get("status") if isinstance(doc, dict) else None
    return " ".join(status.split())[:200] if isinstance(status, str) and status.strip() else None


@dataclass(frozen=True)
class Cited:
    """A source that may be cited. ``kind``: ``file`` (a copy of a file the session made or changed), ``diff`` (the
    folder's git diff), ``record`` (a tool call with its successful result) or ``activity`` (a line of the plugins'
    activity: its text is both ``text`` and ``body``); ``ref``: the workdir-relative path read
    or the record's uuid; ``text``: where the item's quote must be found (for the diff: its added and removed lines;
    for a record: the pair's tool inputs and results); ``body``: what counts of lines, rows and keys are checked
    against (the file's content, the content a Write call wrote or the call's result; None for the diff);
    ``one_file``: it stands for exactly one file (a file, or a call that writes one), so "1 file" describes it."""

    kind: str
    ref: str
    text: str
    body: str | None
    one_file: bool = False


def _read(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.read(READ_MAX_BYTES).decode("utf-8", "replace")


def changed_lines(patch: str) -> str:
    """The added and removed lines of a unified diff, without their ``+``/``-`` and without the file headers."""
    out = [ln[1:] for ln in patch.splitlines()
           if ln[:1] in "+-" and not ln.startswith(("+++ ", "--- "))]
    return "\n".join(out)


def _real_rel(source: str, root: Path) -> str | None:
    """The workdir-relative path of the existing file ``source`` names, symlinks followed; None when it is none."""
    rel = source_path(source, root)
    if rel is None:
        return None
    try:
        real = (root / rel).resolve()
        return real.relative_to(root).as_posix() if real.is_file() else None
    except (ValueError, OSError):
        return None


def _as_file(source: str, ctx: Context) -> Cited | None:
    root = ctx.workdir.resolve()
    rel = _real_rel(source, root)
    produced = ctx.produced
    if rel is None:
        return None
    if produced.folder and rel.startswith(produced.folder.rstrip("/") + "/"):
        rel = f"{wf.SIDE_EFFECTS_COPIES_PATH}/" + rel[len(produced.folder.rstrip("/")) + 1:]
    if rel in produced.files and (root / rel).is_file():
        return Cited("file", rel, text := _read(root / rel), text, True)
    if produced.diff and rel == produced.diff:
        return Cited("diff", rel, changed_lines(_read(root / rel)), None)
    return None


def _file_problem(source: str, ctx: Context) -> str:
    root = ctx.workdir.resolve()
    rel = source_path(source, root)
    if rel is None:
        return "is outside the working directory"
    harness = harness_files_of(source, ctx)
    if harness == [wf.MARKER_PATH]:
        return ("is the completion marker out/status.json: the harness's contract file, written by every trial; "
                "never evidence, nor is its summary")
    if harness:
        return f"is a file the harness writes itself ({', '.join(harness)}): never evidence of the goal"
    real = _real_rel(source, root)
    first = (real or rel).split("/", 1)[0]
    if first in OWN_WORDS_FILES:
        return ("holds the session's own words and its prompts: cite the uuid of a tool call record (with its "
                "successful result) instead")
    if real is None:
        return "does not exist under the working directory"
    folder = (ctx.produced.folder or "").rstrip("/")
    if folder and real.startswith(folder + "/"):
        return ("is in the trial's folder but was not created or changed by this trial's session (it was there when "
                "the trial started): never evidence")
    if first == wf.OUT:
        return "is in out/, where the task allows only the completion marker: never evidence"
    if real.startswith(f"{wf.SIDE_EFFECTS_COPIES_PATH}/"):
        return ("is not a copy of a file the session created or changed that is still there at the end (the file is "
                "gone or was changed, or the copy is not collect's): this citation cannot stand; do not cite it again, "
                "cite another file listed as the session's or a tool call record")
    if first == wf.SIDE_EFFECTS:
        return ("is the harness's record of the side effects, not a file the session produced: cite the file's "
                "copy under side-effects/files/")
    return "is not a file this trial's session created or changed: cite one of the files listed as the session's"


def _as_record(uuid: str, ctx: Context) -> Cited | str:
    facts = ctx.transcript_facts.get(uuid)
    if facts is None:
        return "cites a transcript record that does not exist (no such uuid in the transcript)"
    if facts.kind == "words":
        return "is the session's own words (an assistant text record): a claim, never evidence"
    if facts.kind == "prompt":
        return "is a prompt given to the session (the task, a nudge or the skill's instructions), not something it did"
    if facts.kind == "other":
        return "is not a tool call nor its result"
    if not facts.ok:
        return "is a tool call without a successful result (it failed, was refused or never finished)"
    writes = [source_path(w, ctx.workdir) or w for w in facts.writes]
    if writes and all(is_harness_path(w) for w in writes):
        return (f"is the call that wrote {', '.join(writes)}, a file the harness writes itself (the completion "
                "marker is the harness's contract): never evidence")
    gone = _write_gone(facts, ctx)
    if gone is not None:
        return gone
    return Cited("record", facts.uuid, facts.text, facts.body, len(writes) == 1)


def _copy_of(path: str, ctx: Context) -> str | None:
    """The workdir-relative copy (``side-effects/files/<path in the folder>``) of the file at ``path`` (as a call
    gave it) when it lies in the trial's own folder, else None."""
    produced = ctx.produced
    folders = [Path(produced.root)] if produced.root else []
    if produced.folder:
        folders.append(ctx.workdir / produced.folder)
    target = Path(path) if os.path.isabs(path) else (folders[0] / path if folders else None)
    if target is None:
        return None
    for folder in folders:
        for a, b in ((os.path.normpath(target), os.path.normpath(folder)), (target.resolve(), folder.resolve())):
            try:
                rel = Path(a).relative_to(b).as_posix()
            except (ValueError, OSError):
                continue
            if rel not in (".", ""):
                return f"{wf.SIDE_EFFECTS_COPIES_PATH}/{rel}"
    return None


def _still_there(wrote: Wrote, ctx: Context) -> str | None:
    """Why the file ``wrote`` names is not there at the end with what the call wrote; None when it is."""
    copy = _copy_of(wrote.path, ctx)
    root = ctx.workdir.resolve()
    if copy is None or copy not in ctx.produced.files or not (root / copy).is_file():
        return "no longer there at the end (removed, moved, outside the trial's folder or over 1 MB: not in its side " \
               "effects)"
    text = _read(root / copy)
    if (wrote.whole is not None and text != wrote.whole) or not all(piece in text for piece in wrote.pieces):
        return "changed afterwards: its copy at the end no longer holds what the call wrote"
    return None


def _write_gone(facts: RecordFacts, ctx: Context) -> str | None:
    """Why a Write/Edit call's record may not be cited: a file it wrote (other than a harness file) is gone or changed
    at the end (README "Evidence"); None when every such file is still there with what the call wrote."""
    for wrote in facts.wrote:
        shown = source_path(wrote.path, ctx.workdir) or wrote.path
        if is_harness_path(shown):
            continue
        problem = _still_there(wrote, ctx)
        if problem is not None:
            return (f"is the {wrote.tool} call that wrote {shown}, a file {problem}: a call is evidence of a file only "
                    "while the file is still there at the end with what it wrote, so this citation cannot stand; do "
                    "not cite this call again (nor the file as it was written)")
    return None


def _as_activity(src: str, ctx: Context) -> Cited | str:
    key = src[len(ACTIVITY_PREFIX):].strip().lower()
    line = ctx.activity.get(key)
    if line is None:
        return (f"cites a plugin activity line that does not exist (the lines are {', '.join(sorted(ctx.activity))})"
                if ctx.activity else "cites plugin activity, but this trial recorded none")
    return Cited("activity", ACTIVITY_PREFIX + key, line, line)


def resolve(source: str, ctx: Context) -> Cited | str:
    """The :class:`Cited` source ``source`` names (module docstring), or why it may not be cited (a phrase to follow
    "evidence item N ('<source>')"). A file is tried first (a copy may have a uuid in its name); otherwise any uuid in
    the text (``<uuid>``, ``transcript.jsonl#<uuid>``, ``record <UUID>``) names a transcript record. Reads files of the
    workdir only."""
    src = (source or "").strip()
    if not src:
        return "has an empty source"
    if src.lower().startswith(ACTIVITY_PREFIX):
        return _as_activity(src, ctx)
    found = _as_file(src, ctx)
    if found is not None:
        return found
    uuid = UUID_RE.search(src)
    if uuid is not None:
        return _as_record(uuid.group(0).lower(), ctx)
    return _file_problem(src, ctx)


def record_uuid(source: str) -> str | None:
    """The transcript record uuid ``source`` cites (``<uuid>`` or ``transcript.jsonl#<uuid>``), lower case; None
    when it cites a file."""
    src = (source or "").strip()
    match = UUID_RE.search(src)
    if match and (src == match.group(0) or "transcript" in src.lower()):
        return match.group(0).lower()
    return None


def source_exists(source: str, ctx: Context) -> bool:
    """True when ``source`` names a file under the workdir or a record uuid of the transcript (the check of
    ``verdict --evidence`` items written by hand)."""
    src = (source or "").strip()
    if not src:
        return False
    if src.lower().startswith(ACTIVITY_PREFIX):
        return src[len(ACTIVITY_PREFIX):].strip().lower() in ctx.activity
    uuid = record_uuid(src)
    if uuid is not None:
        return uuid in ctx.transcript_uuids
    root = ctx.workdir.resolve()
    candidate = Path(strip_location(src))
    candidate = candidate if candidate.is_absolute() else root / candidate
    try:
        resolved = candidate.resolve()
    except OSError:
        return False
    return resolved.is_file() and (resolved == root or root in resolved.parents)


def _same_file_harness(candidate: Path, root: Path) -> list[str]:
    """The harness files ``candidate`` is the same file as (a hard link, another letter case on a case-insensitive
    disk), or lies under (a harness folder); [] when it is none or does not exist."""
    try:
        if not candidate.is_file():
            return []
        present = [p for p in root.iterdir() if is_harness_path(p.name)] + [root / wf.MARKER_PATH]
        for path in present:
            if path.exists() and (path.samefile(candidate) or
                                  (path.is_dir() and any(path.samefile(a) for a in candidate.parents))):
                return [path.relative_to(root).as_posix()]
    except OSError:
        pass
    return []


def harness_files_of(source: str, ctx: Context) -> list[str]:
    """The files the harness writes (:data:`live_trial.judge.sources.HARNESS_FILES`, workdir-relative) that ``source``
    stands for; ``[]`` when it is none of them.

    A file source stands for a harness file under any spelling (``./out//status.json``, ``out/../out/status.json``,
    ``out/status.json:1``, ``<workdir>/out/status.json``), through a symlink or hard link, and in another letter case
    on a case-insensitive disk. A transcript record uuid stands for the files its Write/Edit calls (or their tool
    results) write when every file they write is a harness file (``writes`` of
    :func:`live_trial.judge.index.read_index`): the record writing the completion marker is the marker by another
    name; one that also writes an artifact is not."""
    uuid = record_uuid(source)
    if uuid is not None:
        for row in ctx.transcript_index:
            if str(row.get("uuid", "")).lower() == uuid:
                writes = [source_path(w, ctx.workdir) or w for w in row.get("writes") or []]
                return writes if writes and all(is_harness_path(w) for w in writes) else []
        return []
    rel = source_path(source, ctx.workdir)
    if rel is not None and is_harness_path(rel):
        return [rel]
    text = strip_location(source)
    if not text:
        return []
    root = ctx.workdir.resolve()
    candidate = Path(text) if Path(text).is_absolute() else root / text
    try:
        resolved = candidate.resolve()
        rel = resolved.relative_to(root).as_posix()
    except (ValueError, OSError):
        return []
    return [rel] if is_harness_path(rel) else _same_file_harness(resolved, root)
