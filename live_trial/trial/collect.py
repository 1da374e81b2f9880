"""Collect a trial's evidence into its workdir: pane.txt, transcript.jsonl, subagent transcripts, side effects.

Seed 001, "回収": the collection is complete when out/, pane.txt and transcript.jsonl are all in the
workdir; side effects are what changed in the trial's own folder since it started (:mod:`live_trial.trial.changes`).
Collect never judges; it reports what it found.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from live_trial.jsonfile import write_text_atomic
from live_trial.transcript.reader import copy_transcript
from live_trial.trial.changes import Snapshot, record_side_effects, recorded_side_effects
from live_trial.trial.seal import Sealer
from live_trial.workdir_files import OUT, PANE, TRANSCRIPT, Workdir


@dataclass
class Collected:
    """What collect found. ``missing`` names any of the three required items that could not be collected."""

    pane: bool = False
    transcript: bool = False
    out_files: list[str] = field(default_factory=list)
    side_effects: dict[str, Any] = field(default_factory=dict[str, Any])
    subagent_transcripts: int = 0
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when out/, pane.txt and transcript.jsonl are all present (seed 001 collection condition)."""
        return not self.missing


def collect(workdir: Path, *, pane_text: str | None, transcript_src: Path | None,
            subagents_src: Path | None, cwd: Path | None, before: Snapshot | None,
            exclude: list[Path], baseline: str | None = None, baseline_head: str | None = None,
            by_content: bool = True, sealer: Sealer | None = None) -> Collected:
    """Gather the evidence of one trial into ``workdir``; never raises for a missing piece, records it instead.

    ``pane_text`` is the final capture with scrollback (None when the session was already gone),
    ``transcript_src`` the CLI's transcript file, ``subagents_src`` its ``subagents/`` folder. ``cwd``: the trial's
    own folder, compared with ``before`` (its snapshot at start), ``baseline`` and ``baseline_head`` (its git tree and
    HEAD commit at start), see
    :func:`live_trial.trial.changes.record_side_effects`; None when the folder is gone (a copy already removed
    after an earlier collect): the side effects recorded then are kept. ``sealer`` (README "What a trial leaves
    behind"): takes the
    digest of every record written here as it is written (:mod:`live_trial.trial.seal`); records an earlier collect
    kept are sealed as they are now.
    """
    workdir = Path(workdir)
    wd = Workdir.of(workdir)
    seal = sealer or Sealer(workdir)
    got = Collected()
    if pane_text is not None:
        write_text_atomic(wd.pane, pane_text)
        seal.text(wd.pane, pane_text)
        got.pane = True
    elif wd.pane.is_file():
        seal.file(wd.pane)
        got.pane = True  # collected earlier; the session is gone now: keep what was taken
    else:
        got.missing.append(PANE)
    if transcript_src is not None and Path(transcript_src).is_file():
        copy_transcript(Path(transcript_src), wd.transcript)
        got.transcript = True
    elif wd.transcript.is_file():
        got.transcript = True
    else:
        got.missing.append(TRANSCRIPT)
    seal.file(wd.transcript)
    if subagents_src is not None and Path(subagents_src).is_dir():
        for src in sorted(Path(subagents_src).glob("*.jsonl")):
            copy_transcript(src, wd.subagents / src.name)
            seal.file(wd.subagents / src.name)
            got.subagent_transcripts += 1
    elif subagents_src is None:
        seal.tree(wd.subagents)     # kept from an earlier collect; else only the copies made here are records
    out = wd.out
    if out.is_dir():
        got.out_files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    else:
        got.missing.append(f"{OUT}/")
    if cwd is None:
        got.side_effects = recorded_side_effects(workdir)
        seal.tree(wd.side_effects)
    else:
        got.side_effects = record_side_effects(workdir, cwd, before, exclude, baseline=baseline,
                                                baseline_head=baseline_head, by_content=by_content, sealer=seal)
    return got
