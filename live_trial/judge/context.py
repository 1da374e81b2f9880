"""What the fresh evaluator is shown and what its answer is checked against (seed 001 "goal verification"; README
"Evidence, watches and messages to a person"): the promise, what the trial's session produced, the transcript index,
the lines of the plugins' activity (their hooks' runs, their MCP servers' starts and calls).

Plain data, built by :func:`live_trial.judge.evaluator.build_context`; the rules that read it are in
:mod:`live_trial.judge.citable` (what may be cited), :mod:`live_trial.judge.quotes` (quotes and counts) and
:mod:`live_trial.judge.answer` (the answer as a whole).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from live_trial.judge.index import RecordFacts


@dataclass(frozen=True)
class Produced:
    """What the trial's own session produced, as the harness recorded it at the end of the trial (README "What a trial
    leaves behind"; :func:`live_trial.trial.changes.session_output` builds it).

    ``files``: workdir-relative copies of the files the session added or changed in its own folder
    (``side-effects/files/<path in the folder>``), the only files an evidence item may cite besides ``diff``;
    ``changed``: how many files the session added or changed (those over 1 MB are not copied, so may exceed
    ``len(files)``): what a count of files is checked against; ``folder``: the trial's own folder relative to the
    workdir when it lies inside it (``cwd``), so that ``cwd/<path>`` reads as the copy of ``<path>``; ``diff``:
    ``side-effects/git-diff.patch`` when the folder is in a git work tree (against the folder's start, never HEAD);
    ``root``: the trial's own folder as an absolute path (the folder ``files.json``'s paths are relative to), so that
    a Write or Edit call's file can be found among the copies (:mod:`live_trial.judge.citable`); None when unknown."""

    files: tuple[str, ...] = ()
    changed: int = 0
    folder: str | None = None
    diff: str | None = None
    root: str | None = None


@dataclass
class Context:
    """What the evaluator is shown: the promise, the session's files, the completion marker and the transcript
    index (``transcript_facts``: :class:`~live_trial.judge.index.RecordFacts` by lower-case uuid)."""

    workdir: Path
    target: str
    description: str
    criteria: list[dict] = field(default_factory=list)
    criteria_skipped: list[dict] = field(default_factory=list)
    produced: Produced = field(default_factory=Produced)
    files: list[dict] = field(default_factory=list)        # {path, bytes, sha256, preview|None, binary}
    marker_present: bool = False
    marker_status: str | None = None                          # the status the session reported in the marker
    transcript_path: str | None = None
    transcript_index: list[dict] = field(default_factory=list)  # {uuid, type, tools, head, writes, cite, ok}
    transcript_uuids: set[str] = field(default_factory=set)
    transcript_facts: dict[str, RecordFacts] = field(default_factory=dict)
    activity: dict[str, str] = field(default_factory=dict)     # plugin activity line by id (plugin-activity#<id>)
