"""Collect a trial's evidence into its workdir: pane.txt, transcript.jsonl, subagent transcripts, side effects.

Seed 001, "回収": the collection is complete when out/, pane.txt and transcript.jsonl are all in the
workdir; side effects in the trial cwd are recorded with ``git status`` / ``git diff`` (or, outside
a git work tree, a before/after snapshot of the cwd). Collect never judges; it reports what it found.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from live_trial.jsonfile import copy_file_private, make_private_dirs, write_json, write_text_atomic

SNAPSHOT_MAX_FILES = 20_000
COPY_MAX_BYTES = 1_000_000
SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "claude-pin"}
GIT_TIMEOUT_S = 30.0

Snapshot = dict[str, tuple[int, int]]


@dataclass
class Collected:
    """What collect found. ``missing`` names any of the three required items that could not be collected."""

    pane: bool = False
    transcript: bool = False
    out_files: list[str] = field(default_factory=list)
    side_effects: dict = field(default_factory=dict)
    subagent_transcripts: int = 0
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when out/, pane.txt and transcript.jsonl are all present (seed 001 collection condition)."""
        return not self.missing


def snapshot_cwd(cwd: Path, exclude: list[Path] | None = None) -> Snapshot:
    """Map each file under ``cwd`` (relative posix path) to (size bytes, mtime ns), skipping VCS/venv folders
    and anything under ``exclude``. An ``exclude`` folder that holds ``cwd`` itself (a ``run --plan`` trial works in
    ``<workdir>/cwd``, and the workdir is excluded) excludes nothing. At most 20,000 files are recorded."""
    cwd = Path(cwd).resolve()
    excluded = [p for p in (Path(e).resolve() for e in (exclude or [])) if not cwd.is_relative_to(p)]
    snap: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(cwd):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS
                       and not any(_is_within(here / d, ex) for ex in excluded)]
        for name in filenames:
            p = here / name
            try:
                st = p.lstat()
            except OSError:
                continue
            snap[p.relative_to(cwd).as_posix()] = (st.st_size, st.st_mtime_ns)
            if len(snap) >= SNAPSHOT_MAX_FILES:
                return snap
    return snap


def _is_within(path: Path, parent: Path) -> bool:
    try:
        path.resolve().relative_to(parent)
        return True
    except ValueError:
        return False


def is_git_work_tree(cwd: Path) -> bool:
    """True when ``cwd`` is inside a git work tree."""
    try:
        proc = subprocess.run(["git", "-C", str(cwd), "rev-parse", "--is-inside-work-tree"],
                              capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def record_side_effects(workdir: Path, cwd: Path, before: Snapshot | None, exclude: list[Path]) -> dict:
    """Write ``side-effects/`` in the workdir and return a summary dict.

    In a git work tree: ``git-status.txt`` (``git status --porcelain -- .``) and ``git-diff.patch`` (``git diff -- .``),
    both limited to the cwd's subtree.
    Always, when a before-snapshot exists: ``files.json`` listing added/changed/removed files of the cwd, and a
    copy of each added or changed file up to 1 MB under ``side-effects/files/``.
    """
    dest = Path(workdir) / "side-effects"
    make_private_dirs(dest)
    summary: dict = {"git": False}
    if is_git_work_tree(cwd):
        summary["git"] = True
        for name, argv in (("git-status.txt", ["git", "-C", str(cwd), "status", "--porcelain", "--", "."]),
                           ("git-diff.patch", ["git", "-C", str(cwd), "diff", "--", "."])):
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
                write_text_atomic(dest / name, proc.stdout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                write_text_atomic(dest / name, f"(could not run git: {exc})\n")
    if before is not None:
        after = snapshot_cwd(cwd, exclude=exclude)
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = sorted(p for p in set(after) & set(before) if after[p] != before[p])
        copied = []
        for rel in added + changed:
            src = Path(cwd) / rel
            if src.is_file() and not src.is_symlink() and after[rel][0] <= COPY_MAX_BYTES:
                copy_file_private(src, dest / "files" / rel)
                copied.append(rel)
        doc = {"added": added, "changed": changed, "removed": removed, "copied": copied}
        write_json(dest / "files.json", doc, "side-effects.schema.json")
        summary.update({k: len(v) for k, v in doc.items()})
    return summary


def collect(workdir: Path, *, pane_text: str | None, transcript_src: Path | None,
            subagents_src: Path | None, cwd: Path, before: Snapshot | None,
            exclude: list[Path]) -> Collected:
    """Gather the evidence of one trial into ``workdir``; never raises for a missing piece, records it instead.

    ``pane_text`` is the final capture with scrollback (None when the session was already gone),
    ``transcript_src`` the CLI's transcript file, ``subagents_src`` its ``subagents/`` folder.
    """
    from live_trial.transcript.reader import copy_transcript

    workdir = Path(workdir)
    got = Collected()
    if pane_text is not None:
        write_text_atomic(workdir / "pane.txt", pane_text)
        got.pane = True
    elif (workdir / "pane.txt").is_file():
        got.pane = True  # collected earlier; the session is gone now: keep what was taken
    else:
        got.missing.append("pane.txt")
    if transcript_src is not None and Path(transcript_src).is_file():
        copy_transcript(Path(transcript_src), workdir / "transcript.jsonl")
        got.transcript = True
    elif (workdir / "transcript.jsonl").is_file():
        got.transcript = True
    else:
        got.missing.append("transcript.jsonl")
    if subagents_src is not None and Path(subagents_src).is_dir():
        for src in sorted(Path(subagents_src).glob("*.jsonl")):
            copy_transcript(src, workdir / "subagents" / src.name)
            got.subagent_transcripts += 1
    out = workdir / "out"
    if out.is_dir():
        got.out_files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    else:
        got.missing.append("out/")
    got.side_effects = record_side_effects(workdir, cwd, before, exclude)
    return got
