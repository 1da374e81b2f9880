"""What a trial's session changed in its own folder, and nothing else (README "What a trial leaves behind").

A side effect is a difference between the trial's folder right after it was made ready (the fresh folder, the copy,
or DIR in place) and the same folder at the end:

- always, a snapshot of every file with its content hash (``sha256``; size and mtime are not enough: an edit that
  keeps both is still seen) taken at start (``cwd-snapshot.json``) and compared at the end: ``files.json`` lists the
  added, changed and removed files and copies the added and changed ones (up to 1 MB each) to
  ``side-effects/files/``;
- in a git work tree, also ``git-status.txt`` and ``git-diff.patch`` between a git tree of the folder recorded at
  start and one recorded at the end, and ``git-commits.txt`` when the session committed
  (:func:`live_trial.trial.gitrepo.folder_tree`), never against HEAD: the author's uncommitted edits carried into a copy
  are not the session's doing.

:func:`session_files` lists what the session made or changed, workdir-relative: the files the evaluator is shown and
may cite as the skill's output.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from live_trial.jsonfile import copy_file_private, make_private_dirs, read_json, validate, write_json, write_text_atomic
from live_trial.trial.gitrepo import commits_since, folder_tree, tree_changes
from live_trial.trial.seal import file_digest
from live_trial.workdir_files import GIT_DIFF, GIT_DIFF_PATH, GIT_STATUS, SIDE_EFFECTS_COPIES_PATH, Workdir

if TYPE_CHECKING:       # types only: imported where it is used, to keep start-up quick
    from live_trial.judge.context import Produced
    from live_trial.trial.seal import Sealer

SNAPSHOT_MAX_FILES = 20_000
COPY_MAX_BYTES = 1_000_000
PATCH_MAX_BYTES = 5_000_000
SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "claude-pin"}
GIT_TIMEOUT_S = 30.0
SNAPSHOT_VERSION = 2

#: relative POSIX path -> (size in bytes, ``sha256:<hex>`` of the content; of the link text for a symlink). A snapshot
#: of an older trial holds (size, mtime ns) instead.
Snapshot = dict[str, tuple[int, str | int]]


def snapshot_cwd(cwd: Path, exclude: list[Path] | None = None, *, by_content: bool = True) -> Snapshot:
    """Map each file under ``cwd`` (relative POSIX path) to (size bytes, content hash), skipping VCS/venv folders
    (:data:`SKIP_DIRS`) and anything under ``exclude``. An ``exclude`` folder that holds ``cwd`` itself (the trial's
    folder is ``<workdir>/cwd`` and the workdir is excluded) excludes nothing. At most 20,000 files are recorded.
    ``by_content=False`` records (size, mtime ns) instead, to compare with a snapshot of an older trial."""
    cwd = Path(cwd).resolve()
    excluded = [p for p in (Path(e).resolve() for e in (exclude or [])) if not cwd.is_relative_to(p)]
    snap: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(cwd):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS
                       and not any((here / d).resolve().is_relative_to(ex) for ex in excluded)]
        for name in filenames:
            p = here / name
            try:
                st = p.lstat()
                mark = file_digest(p) if by_content else st.st_mtime_ns
            except OSError:
                continue
            snap[p.relative_to(cwd).as_posix()] = (st.st_size, mark)
            if len(snap) >= SNAPSHOT_MAX_FILES:
                return snap
    return snap


def save_snapshot(path: Path, snap: Snapshot) -> str:
    """Write ``snap`` to ``path`` as ``{"version": 2, "files": {rel: [size, hash]}}`` (atomic); return the written
    file's digest, ``sha256:<hex>``, which the trial keeps to check the file before it measures against it
    (:func:`snapshot_digest`; README "What a trial leaves behind")."""
    write_json(path, {"version": SNAPSHOT_VERSION, "files": {k: list(v) for k, v in snap.items()}}, None)
    return snapshot_digest(path)


def snapshot_digest(path: Path) -> str:
    """``sha256:<hex>`` of the snapshot file at ``path``. Raises OSError when it cannot be read."""
    import hashlib

    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_snapshot(path: Path) -> tuple[Snapshot, bool]:
    """``(snapshot, by_content)`` from a file :func:`save_snapshot` wrote, or from an older trial's flat
    ``{rel: [size, mtime ns]}`` (then ``by_content`` is False)."""
    raw = read_json(Path(path), None)
    if isinstance(raw, dict) and raw.get("version") == SNAPSHOT_VERSION and isinstance(raw.get("files"), dict):
        return {k: (v[0], v[1]) for k, v in raw["files"].items()}, True
    return {k: (v[0], v[1]) for k, v in raw.items()}, False


def is_git_work_tree(cwd: Path) -> bool:
    """True when ``cwd`` is inside a git work tree."""
    try:
        proc = subprocess.run(["git", "-C", str(cwd), "rev-parse", "--is-inside-work-tree"],
                              capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def _inside(folder: Path, exclude: list[Path]) -> list[str]:
    """The ``exclude`` folders lying inside ``folder`` (the eval root of an in-place trial), ``folder``-relative."""
    folder = Path(folder).resolve()
    out = []
    for path in (Path(e).resolve() for e in exclude):
        if path != folder and path.is_relative_to(folder):
            out.append(path.relative_to(folder).as_posix())
    return out


def record_baseline(workdir: Path, folder: Path, exclude: list[Path]) -> str:
    """Record the git tree of ``folder`` (in a git work tree) as it is now, in the workdir's private store; return
    the tree id (kept in trial-state.json ``folder.baseline``; HEAD's commit goes to ``folder.baseline_head``,
    :func:`live_trial.trial.gitrepo.head_commit`). ``exclude``: the harness's folders (eval root,
    workdir), left out when inside ``folder``. Raises :class:`~live_trial.errors.Blocked` when git fails."""
    return folder_tree(Path(folder), Workdir.of(workdir).cwd_baseline, "start", exclude=_inside(folder, exclude))


def _bounded(data: bytes) -> bytes:
    if len(data) <= PATCH_MAX_BYTES:
        return data
    return data[:PATCH_MAX_BYTES] + f"\n(truncated: {len(data) - PATCH_MAX_BYTES} bytes more)\n".encode()


def record_side_effects(workdir: Path, cwd: Path, before: Snapshot | None, exclude: list[Path], *,
                        baseline: str | None = None, baseline_head: str | None = None,
                        by_content: bool = True, sealer: Sealer | None = None) -> dict[str, Any]:
    """Write ``side-effects/`` in the workdir and return a summary dict (``git``, and counts of ``added``,
    ``changed``, ``removed``, ``copied``).

    ``baseline``: the git tree of ``cwd`` at start (:func:`record_baseline`): ``git-status.txt`` (name-status) and
    ``git-diff.patch`` (binary, at most 5 MB) are what changed since then, and ``git-commits.txt`` the commits made
    on HEAD since ``baseline_head`` (the commit HEAD was at then), when there are any. Without a baseline but with no
    ``before`` either (the ``collect`` step run by hand, no start state known), in a git work tree: ``git status
    --porcelain`` and ``git diff`` of the cwd's subtree, as git shows them. With ``before``: ``files.json`` and the
    copies of added and changed files up to 1 MB under ``side-effects/files/``. ``sealer``: takes the digest of each
    file written here as it is written (:mod:`live_trial.trial.seal`).
    """
    wd = Workdir.of(workdir)

    def put(path: Path, text: str) -> None:
        write_text_atomic(path, text)
        if sealer is not None:
            sealer.text(path, text)

    make_private_dirs(wd.side_effects)
    summary: dict[str, Any] = {"git": False}
    if baseline is not None:
        store = wd.cwd_baseline
        end = folder_tree(cwd, store, "end", exclude=_inside(cwd, exclude))
        status, patch = tree_changes(cwd, store, baseline, end)
        put(wd.git_status, status)
        put(wd.git_diff, _bounded(patch).decode("utf-8", "replace"))
        commits = commits_since(cwd, baseline_head)
        if commits:
            put(wd.git_commits, commits)
        summary["git"] = True
    elif before is None and is_git_work_tree(cwd):
        summary["git"] = True
        for name, argv in ((GIT_STATUS, ["git", "-C", str(cwd), "status", "--porcelain", "--", "."]),
                           (GIT_DIFF, ["git", "-C", str(cwd), "diff", "--", "."])):
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
                put(wd.side_effects / name, proc.stdout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                put(wd.side_effects / name, f"(could not run git: {exc})\n")
    if before is not None:
        after = snapshot_cwd(cwd, exclude=exclude, by_content=by_content)
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = sorted(p for p in set(after) & set(before) if tuple(after[p]) != tuple(before[p]))
        copied = []
        shutil.rmtree(wd.side_effects_copies, ignore_errors=True)        # a second collect (resume) starts clean
        for rel in added + changed:
            src = Path(cwd) / rel
            if src.is_file() and not src.is_symlink() and after[rel][0] <= COPY_MAX_BYTES:
                copy_file_private(src, wd.side_effects_copies / rel)
                if sealer is not None:
                    sealer.file(wd.side_effects_copies / rel)       # read back at once: its digest as copied
                copied.append(rel)
        doc = {"added": added, "changed": changed, "removed": removed, "copied": copied}
        validate(doc, "side-effects.schema.json", what=wd.side_effects_list.name)
        put(wd.side_effects_list, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        summary.update({k: len(v) for k, v in doc.items()})
    return summary


def recorded_side_effects(workdir: Path) -> dict[str, Any]:
    """The summary of side effects an earlier collect recorded (for a collect after the folder was removed)."""
    wd = Workdir.of(workdir)
    files = wd.side_effects_list
    summary: dict[str, Any] = {"git": wd.git_status.is_file()}
    if files.is_file():
        summary.update({k: len(v) for k, v in read_json(files, "side-effects.schema.json").items()})
    return summary


def session_files(workdir: Path) -> list[str]:
    """The files the trial's own session added or changed in its own folder between the folder's start and the end
    of the trial, as workdir-relative POSIX paths of their copies (``side-effects/files/<path in the folder>``), in
    ``files.json`` order (added, then changed); files over 1 MB and symlinks are listed in ``files.json`` but not
    copied, so not here.

    This is the definition of a side effect (README "What a trial leaves behind"): never a file of another trial
    (each trial has its own folder), never a file the author had before the trial started (a copy's start state is
    the baseline). These are the files the evaluator is shown and may cite as the skill's output. Empty when nothing
    was recorded. Raises :class:`~live_trial.errors.SchemaInvalid` when files.json does not fit its schema."""
    wd = Workdir.of(workdir)
    if not wd.side_effects_list.is_file():
        return []
    doc = read_json(wd.side_effects_list, "side-effects.schema.json")
    return [f"{SIDE_EFFECTS_COPIES_PATH}/{rel}" for rel in doc["copied"] if (wd.side_effects_copies / rel).is_file()]


def session_output(workdir: Path, folder: str | None = None) -> Produced:
    """What the trial's session produced, as the fresh evaluator sees it and may cite it
    (:class:`live_trial.judge.context.Produced`): :func:`session_files`, how many files the session added or changed
    (``files.json``), the trial's own folder relative to the workdir when ``folder`` (trial-state.json ``folder.path``)
    lies inside it, and ``side-effects/git-diff.patch`` when it was recorded against the folder's start (a trial's
    collect, which also writes ``files.json``; never the HEAD diff of a collect run by hand), and ``folder`` itself,
    absolute (``root``: where a Write call's file is looked for among the copies)."""
    # imported here: the evaluator's context (and its index) costs `reap` and `collect` about 70 ms at start-up
    from live_trial.judge.context import Produced

    workdir = Path(workdir).resolve()
    recorded = recorded_side_effects(workdir)
    inside = None
    if folder:
        try:
            inside = Path(folder).resolve().relative_to(workdir).as_posix()
        except ValueError:
            inside = None
    wd = Workdir.of(workdir)
    with_start = wd.side_effects_list.is_file() and wd.git_diff.is_file()
    return Produced(files=tuple(session_files(workdir)), changed=recorded.get("added", 0) + recorded.get("changed", 0),
                    folder=inside if inside not in (None, ".") else None, diff=GIT_DIFF_PATH if with_start else None,
                    root=str(Path(folder).resolve()) if folder else None)
