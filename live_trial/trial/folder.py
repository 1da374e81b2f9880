"""A trial's own working folder (README "Running a real trial", "What a trial leaves behind").

A trial never shares its folder, so it is never credited with a file another trial (or the author) wrote:

- ``fresh`` (the default): a new empty folder ``<workdir>/cwd``. It stays in the workdir after the trial: it holds
  only what the session made.
- ``copy`` (``--cwd DIR``, "start from DIR"): a private copy of DIR at ``<workdir>/cwd``, made when the trial starts
  and removed on every exit path unless ``--keep-cwd``. In a git work tree the whole work tree is copied as the author
  has it on disk (:mod:`live_trial.trial.gitrepo`: HEAD, staged, unstaged and untracked changes, deletions, a working
  ``.git`` of its own) and the session starts in DIR's place inside it; outside git, DIR is copied plainly. Never
  copied: ``.git`` internals (the copy has its own), the eval root, ``.venv``, ``node_modules``, and what
  ``.gitignore`` ignores unless ``--include-ignored``. A folder over ``copy_max_bytes`` (policy file) is refused
  before anything is created.
- ``in_place`` (``--in-place DIR``): DIR itself, under the lock of :mod:`live_trial.trial.folder_lock`.

A real trial's folder must be trusted in the person's Claude Code config (:func:`check_trusted`); the copies and
fresh folders live under the eval root, so trusting the eval root (or a folder above it) once covers them all.
"""
from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.doctor import live
from live_trial.errors import RefusedInput
from live_trial.jsonfile import parse_json
from live_trial.trial import gitrepo
from live_trial.trial.gitrepo import NEVER_COPIED
from live_trial.workdir_files import CWD, TRIAL_STATE

FRESH, COPY, IN_PLACE = "fresh", "copy", "in_place"
FORMS = (FRESH, COPY, IN_PLACE)


@dataclass
class FolderPlan:
    """Where a trial will work, decided before anything is created.

    ``source``: DIR of ``--cwd`` / ``--in-place`` (resolved; None for fresh). ``root``: the folder copied (DIR, or the
    top of the git work tree holding DIR) and ``rel`` DIR's place in it (POSIX, ``.`` for the top). ``files``: the
    ``root``-relative paths a copy takes, ``bytes`` their total size in bytes. ``git``: the copy (or the in-place
    folder) is in a git work tree."""

    form: str = FRESH
    source: Path | None = None
    root: Path | None = None
    rel: str = "."
    git: bool = False
    files: list[str] = field(default_factory=list)
    bytes: int = 0
    keep: bool = False
    include_ignored: bool = False


def _human(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def plan_folder(form: str, source: Path | None, eval_root: Path, *, max_bytes: int, keep: bool = False,
                include_ignored: bool = False) -> FolderPlan:
    """Decide the trial's folder and, for a copy, list what it takes; create nothing.

    ``form``: one of :data:`FORMS`; ``source``: DIR (required for copy and in_place); ``eval_root``: resolved, never
    copied; ``max_bytes``: the copy size limit in bytes. Raises :class:`RefusedInput` (exit 2) when DIR is not a
    folder, when git cannot list it, and when the copy would be larger than ``max_bytes`` (one line: the size, the
    limit and the fix). Source: README "Running a real trial"."""
    if form not in FORMS:
        raise RefusedInput(f"unknown folder form {form!r}", fix=f"use one of {', '.join(FORMS)}", code="bad_folder")
    plan = FolderPlan(form=form, keep=keep, include_ignored=include_ignored)
    if form == FRESH:
        return plan
    flag = "--cwd" if form == COPY else "--in-place"
    plan.source = Path(source or ".").resolve()
    if not plan.source.is_dir():
        raise RefusedInput("the trial folder is not a folder", where=f"{flag} {plan.source}", code="bad_cwd",
                           fix=f"pass {flag} an existing folder")
    top = gitrepo.work_tree_root(plan.source)
    plan.git = top is not None
    if form == IN_PLACE:
        return plan
    plan.root = top or plan.source
    plan.rel = plan.source.relative_to(plan.root).as_posix()
    inside = [eval_root.relative_to(plan.root).as_posix()] if eval_root.is_relative_to(plan.root) else []
    if top is not None:
        plan.files = gitrepo.work_tree_files(top, include_ignored=include_ignored, exclude=inside)
    else:
        plan.files = plain_files(plan.root, exclude=[eval_root])
    plan.bytes = sum(_size(plan.root / rel) for rel in plan.files)
    if plan.bytes > max_bytes:
        what = f"the git work tree {plan.root}" if top is not None and plan.root != plan.source else str(plan.root)
        raise RefusedInput(f"the folder to copy is too large: {_human(plan.bytes)} in {len(plan.files)} files, over "
                           f"the limit of {_human(max_bytes)}", where=what, code="folder_too_large",
                           details={"bytes": plan.bytes, "limit_bytes": max_bytes, "files": len(plan.files)},
                           fix="add what is not needed to .gitignore, pass --in-place DIR to run in the folder itself, "
                               "or raise trial_folder.copy_max_bytes in references/convergence-policy.json")
    return plan


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def plain_files(root: Path, exclude: list[Path]) -> list[str]:
    """Every file and symlink under ``root`` (outside git) as sorted ``root``-relative POSIX paths, never inside a
    ``.git`` folder, a :data:`~live_trial.trial.gitrepo.NEVER_COPIED` folder or an ``exclude`` folder."""
    skip = {".git", *NEVER_COPIED}
    excluded = [Path(e).resolve() for e in exclude]
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        keep_dirs = []
        for d in dirnames:
            path = here / d
            if path.is_symlink():
                out.append(path.relative_to(root).as_posix())      # a link to a folder is copied as a link
            elif d not in skip and not any(path == e or path.is_relative_to(e) for e in excluded):
                keep_dirs.append(d)
        dirnames[:] = keep_dirs
        out += [(here / name).relative_to(root).as_posix() for name in filenames if name != ".git"]
    return sorted(out)


def copy_files(src: Path, dest: Path, files: list[str]) -> int:
    """Copy each ``src``-relative file of ``files`` to the same place under ``dest`` byte for byte (mode and times
    kept; a symlink as the same link); files gone since they were listed are skipped. Returns the count copied."""
    copied = 0
    for rel in files:
        source, target = src / rel, dest / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
            elif source.is_file():
                shutil.copy2(source, target)
            else:
                continue
        except FileNotFoundError:
            continue
        copied += 1
    return copied


def session_cwd(plan: FolderPlan, workdir: Path) -> Path:
    """Where the session starts: ``<workdir>/cwd`` (fresh), DIR's place in the copy ``<workdir>/cwd/<rel>``, or DIR
    itself (in place). A path only: :func:`make_folder` creates it."""
    if plan.form == IN_PLACE:
        assert plan.source is not None         # plan_folder sets DIR for in place and copy
        return plan.source
    return Path(workdir) / CWD if plan.form == FRESH or plan.rel == "." else Path(workdir) / CWD / plan.rel


def make_folder(plan: FolderPlan, workdir: Path) -> Path:
    """Create the trial's folder and return the folder the session starts in: fresh, ``<workdir>/cwd`` (empty); copy,
    ``<workdir>/cwd/<rel>`` after copying :attr:`FolderPlan.files` (git: a repository of its own, see
    :func:`live_trial.trial.gitrepo.copy_repository`); in place, DIR. Raises :class:`~live_trial.errors.Blocked` when
    git fails and OSError when the disk does."""
    if plan.form == IN_PLACE:
        assert plan.source is not None         # plan_folder sets DIR for in place and copy
        return plan.source
    dest = Path(workdir) / CWD
    if plan.form == FRESH:
        dest.mkdir()
        return dest
    assert plan.root is not None               # plan_folder sets the folder a copy takes
    if plan.git:
        gitrepo.copy_repository(plan.root, dest)
        copy_files(plan.root, dest, plan.files)
        gitrepo.refresh(dest)
    else:
        dest.mkdir()
        copy_files(plan.root, dest, plan.files)
    start = dest / plan.rel
    start.mkdir(parents=True, exist_ok=True)          # DIR held only ignored files: its place still exists
    return start


def folder_record(plan: FolderPlan, workdir: Path, cwd: Path) -> dict[str, Any]:
    """The ``folder`` entry of trial-state.json (schema ``trial-state.schema.json``) for ``plan``: form, the trial's
    own folder (``path``), the folder it was copied from (``source``), whether the harness made it, whether it is
    kept, and what a copy took."""
    own = plan.source if plan.form == IN_PLACE else Path(workdir) / CWD
    return {"form": plan.form, "path": str(own), "cwd": str(cwd), "source": str(plan.source) if plan.source else None,
            "copied_from": str(plan.root) if plan.form == COPY else None, "harness_made": plan.form != IN_PLACE,
            "keep": plan.keep or plan.form == FRESH, "include_ignored": plan.include_ignored, "git": plan.git,
            "files": len(plan.files), "bytes": plan.bytes, "baseline": None, "removed": False}


def harness_copy(record: Mapping[str, Any] | None, workdir: Path) -> Path | None:
    """The exact folder a trial's record says the harness copied for it and may delete: ``<workdir>/cwd`` of a
    ``copy`` the harness made, not kept, not yet removed. None for anything else (a fresh folder, DIR itself, an old
    record without a ``folder`` entry, a path that is not ``<workdir>/cwd``)."""
    if not isinstance(record, Mapping) or record.get("form") != COPY or not record.get("harness_made"):
        return None
    if record.get("keep") or record.get("removed"):
        return None
    expected = Path(workdir).resolve() / CWD
    if Path(str(record.get("path"))) != expected or expected.is_symlink():
        return None
    return expected


def remove_tree(path: Path) -> None:
    """Delete the folder ``path`` and everything in it, also files and folders the session made read-only."""
    def retry(func: Callable[[str], object], target: str, _exc: object) -> None:
        parent = os.path.dirname(target)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, os.stat(target).st_mode | stat.S_IRWXU)
        func(target)

    shutil.rmtree(path, onerror=retry)


def copy_of_session(cwd: str | None, session: str) -> tuple[Path, Path] | None:
    """For ``reap``: ``(workdir, copy folder)`` of the trial whose tmux session ``session`` started in ``cwd`` (the
    session's stored meta), when that trial's ``trial-state.json`` names this session and records the folder as a
    copy the harness made and still holds (:func:`harness_copy`); else None. Only reads."""
    if not cwd:
        return None
    for folder in [Path(cwd), *Path(cwd).parents]:
        if folder.name != CWD:
            continue
        state_file = folder.parent / TRIAL_STATE
        try:
            state = parse_json(state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(state, dict) and state.get("session") == session:
            copy = harness_copy(state.get("folder"), folder.parent)
            return (folder.parent, copy) if copy is not None else None
    return None


def claude_json(env: Mapping[str, str]) -> Path:
    """The Claude Code config file a real trial's CLI reads (:func:`live_trial.doctor.live.claude_json`)."""
    return live.claude_json(env)


def check_trusted(folder: Path, env: Mapping[str, str], *, what: str, flag: str) -> None:
    """Refuse (exit 2, one line) unless ``folder`` or a folder above it is trusted in the config the trial's CLI
    will read (:func:`claude_json`; ``projects.<path>.hasTrustDialogAccepted``). Observed on claude 2.1.197: a folder
    under a trusted one boots with no trust question (references/transcript-jsonl.md, "Folder trust"). ``what``
    names the folder in the message ("the eval root"), ``flag`` the option that sets it."""
    folder = Path(folder).resolve()
    config = claude_json(env)
    if live.trusted_above(folder, env) is not None:
        return
    raise RefusedInput(f"{what} is not a folder you trusted in Claude Code ({config})", where=str(folder),
                       code="folder_not_trusted",
                       fix=f"run `claude` once in {folder} (or a folder above it) and choose \"Yes, I trust this "
                           f"folder\", or pass {flag} a folder under one you trusted")
