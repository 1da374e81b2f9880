"""Git, for a trial's own folder (README "Running a real trial"): the files of a work tree as the author has them on
disk, a private copy of that work tree that is a repository of its own, and the tree of a folder at a moment, so
what a session changed can be told from what the author had changed before it started.

Nothing here writes into the author's repository: commands run there only read (``ls-files``, ``for-each-ref``,
``rev-parse``, ``config --get``), with optional locks off (``GIT_OPTIONAL_LOCKS=0``). The copy is ``git clone
--shared --no-checkout``: it reads the author's objects through ``objects/info/alternates`` and writes its own
objects into itself (git in the copy may still freshen, i.e. touch the time of, an author's object it finds there; the
content is never changed). The trees that record a folder's state go to a private object store in the trial's workdir
(``GIT_OBJECT_DIRECTORY``, no alternates) through a private index (``GIT_INDEX_FILE``), never into the repository's
index or object store.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from live_trial.errors import Blocked, LiveTrialError, RefusedInput

GIT_TIMEOUT_S = 120.0
#: Variables that would point git at another repository, index or object store than the folder's own.
_LOCATING_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
                  "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX")
#: Folders never copied from a work tree's untracked files (also when ``--include-ignored``): they are rebuilt, not
#: authored, and can be huge.
NEVER_COPIED = (".venv", "node_modules")


def git(args: list[str], cwd: Path, *, env: Mapping[str, str] | None = None, stdin: bytes | None = None,
        error: type[LiveTrialError] = RefusedInput, what: str = "git") -> bytes:
    """Run ``git <args>`` in ``cwd`` (argv list, no shell) and return its stdout bytes.

    ``env`` adds variables to a copy of this process's environment without the variables that locate another
    repository. A failure (git missing, a non-zero exit, a timeout of 120 s) raises ``error`` naming ``what`` and
    git's first line of stderr."""
    full = {k: v for k, v in os.environ.items() if k not in _LOCATING_VARS}
    full.update({"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}, **(env or {}))
    try:
        proc = subprocess.run(["git", *args], cwd=str(cwd), env=full, input=stdin, capture_output=True,
                              timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise error(f"{what}: could not run git ({exc})", where=str(cwd), code="git_failed",
                    fix="install git, or run the trial outside this folder") from None
    if proc.returncode != 0:
        line = (proc.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise error(f"{what}: git {args[0]} failed: {line}", where=str(cwd), code="git_failed",
                    fix="check the repository with git status, or pass --in-place to run in the folder itself")
    return proc.stdout


def work_tree_root(folder: Path) -> Path | None:
    """The top folder of the git work tree holding ``folder`` (resolved), or None outside a work tree (also when git
    is missing, and inside a ``.git`` folder or a bare repository)."""
    try:
        inside = git(["rev-parse", "--is-inside-work-tree"], folder).strip()
        if inside != b"true":
            return None
        return Path(os.fsdecode(git(["rev-parse", "--show-toplevel"], folder).strip())).resolve()
    except LiveTrialError:
        return None


def _nul_list(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def work_tree_files(top: Path, *, include_ignored: bool, exclude: list[str]) -> list[str]:
    """The files of the work tree at ``top`` as the author has them on disk, as sorted ``top``-relative POSIX paths:
    every tracked file still present (deleted ones are left out: they stay deleted in a copy), and every untracked
    file git does not ignore (ignored ones too when ``include_ignored``), never under :data:`NEVER_COPIED` folders nor
    under ``exclude`` (``top``-relative folders, e.g. the eval root). Tracked files are always listed: a copy's git
    must show the author's status. Folders (submodules, nested repositories) are not listed. Raises
    :class:`RefusedInput` when git fails."""
    tracked = _nul_list(git(["ls-files", "-z", "--cached"], top, what="listing the tracked files"))
    others = ["ls-files", "-z", "--others"] + ([] if include_ignored else ["--exclude-standard"])
    others += [f"--exclude={name}/" for name in NEVER_COPIED]
    untracked = [p for p in _nul_list(git(others, top, what="listing the untracked files")) if not p.endswith("/")]
    skip = [e.strip("/") + "/" for e in exclude]
    untracked = [p for p in untracked
                 if not any(part in NEVER_COPIED for part in p.split("/")[:-1]) and not p.startswith(tuple(skip))]
    present = []
    for rel in dict.fromkeys(tracked):
        path = top / rel
        if path.is_symlink() or path.is_file():
            present.append(rel)
    return sorted(set(present) | set(untracked))


def _refs(top: Path) -> list[tuple[str, str]]:
    """``(refname, object id)`` of the author's branches, remote-tracking branches and tags (symbolic refs left out)."""
    out = git(["for-each-ref", "--format=%(objectname) %(refname) %(symref)", "refs/heads", "refs/remotes",
               "refs/tags"], top, what="reading the refs")
    rows = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) >= 2 and not (len(parts) > 2 and parts[2]):
            rows.append((parts[1], parts[0]))
    return rows


def _head(top: Path) -> tuple[str | None, str | None]:
    """``(branch ref or None when detached, commit id or None when unborn)`` of the author's HEAD."""
    try:
        branch = git(["symbolic-ref", "-q", "HEAD"], top).decode().strip() or None
    except LiveTrialError:
        branch = None
    try:
        commit = git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], top).decode().strip() or None
    except LiveTrialError:
        commit = None
    return branch, commit


def _kept_config(top: Path, branch: str | None) -> list[tuple[str, str]]:
    """The author's repository-local settings a copy keeps: identity (``user.*``), remotes (``remote.*``) and the
    upstream of the current branch, so git in the copy commits, compares and reports like git in the author's
    folder."""
    pattern = r"^(user\.|remote\.)"
    if branch and branch.startswith("refs/heads/"):
        pattern = rf"^(user\.|remote\.|branch\.{_regex_escape(branch[len('refs/heads/'):])}\.)"
    try:
        out = git(["config", "--local", "-z", "--get-regexp", pattern], top)
    except LiveTrialError:
        return []                                          # no such setting: git exits 1
    pairs = []
    for item in out.split(b"\0"):
        if item:
            key, _, value = item.partition(b"\n")
            pairs.append((key.decode("utf-8", "replace"), value.decode("utf-8", "replace")))
    return pairs


def _regex_escape(text: str) -> str:
    return "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in text)


def copy_repository(top: Path, dest: Path) -> None:
    """Make ``dest`` (absent) a repository of its own standing for the work tree at ``top``, without its working
    files (the caller copies them, then calls :func:`refresh`): the author's HEAD (same branch, or detached at the same
    commit), the author's index (staged changes stay staged), branches, remote-tracking branches and tags, and the
    settings :func:`_kept_config` names. The author's repository is only read. Raises :class:`Blocked` when git fails
    (an environment failure, not the skill's)."""
    def run(args: list[str], cwd: Path, what: str, stdin: bytes | None = None) -> bytes:
        return git(args, cwd, stdin=stdin, error=Blocked, what=f"copying the folder ({what})")

    run(["clone", "--quiet", "--shared", "--no-checkout", "--", str(top), str(dest)], top.parent, "clone")
    run(["remote", "remove", "origin"], dest, "remote")      # no path back into the author's repository
    branch, commit = _head(top)
    refs = _refs(top)
    own = {name for name, _ in refs}
    cloned = run(["for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags"], dest, "refs").decode().split()
    lines = [f"update {name} {oid}" for name, oid in refs] + [f"delete {name}" for name in cloned if name not in own]
    if branch:
        run(["symbolic-ref", "HEAD", branch], dest, "HEAD")
    elif commit:
        lines.append(f"update HEAD {commit}")
    if lines:
        run(["update-ref", "--no-deref", "--stdin"], dest, "refs", stdin=("\n".join(lines) + "\n").encode())
    for key, value in _kept_config(top, branch):
        run(["config", "--add", key, value], dest, "settings")
    index = git(["ls-files", "-z", "--stage"], top, error=Blocked, what="copying the folder (index)")
    run(["update-index", "-z", "--index-info"], dest, "index", stdin=index)


def refresh(dest: Path) -> None:
    """Refresh the stat data of the index in ``dest`` after its files were copied, so ``git status`` there is quick
    and shows content changes only. Never raises (git exits 1 when files differ from the index: expected)."""
    try:
        git(["update-index", "-q", "--refresh"], dest)
    except LiveTrialError:
        pass


def folder_tree(folder: Path, store: Path, name: str, exclude: Sequence[str] = ()) -> str:
    """Record the state of ``folder`` (inside a git work tree) as a git tree and return its id: every file git sees
    under ``folder`` (tracked and untracked, not ignored), with its content at this moment, staged or not.

    The blobs and the tree go to the private object store ``store/objects`` through the private index
    ``store/<name>.index``; the repository's own index and objects are never used. ``exclude``:
    ``folder``-relative folders left out (the harness's own, when inside it). Raises :class:`Blocked` when git
    fails."""
    objects = store / "objects"
    objects.mkdir(parents=True, exist_ok=True)
    env = {**_store_env(store), "GIT_INDEX_FILE": str(store / f"{name}.index")}
    specs = ["."] + [f":(exclude,literal){rel}" for rel in exclude]
    git(["add", "-A", "--", *specs], folder, env=env, error=Blocked, what="recording the folder's state (add)")
    return git(["write-tree"], folder, env=env, error=Blocked, what="recording the folder's state").decode().strip()


def _store_env(store: Path) -> dict[str, str]:
    """The private object store alone: no alternate into the repository, so git neither writes nor even freshens
    (touches the time of) an object of the author's."""
    return {"GIT_OBJECT_DIRECTORY": str(store / "objects")}


def head_commit(folder: Path) -> str | None:
    """The commit id of HEAD in the work tree holding ``folder``, None when unborn. Raises :class:`Blocked` when git
    fails otherwise."""
    try:
        return git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], folder).decode().strip() or None
    except LiveTrialError:
        if git(["rev-parse", "--is-inside-work-tree"], folder, error=Blocked, what="reading HEAD").strip() == b"true":
            return None
        raise


def commits_since(folder: Path, start: str | None) -> str:
    """The commits made on HEAD since ``start`` (None: since the beginning), newest first, with the files each
    touched (``git log --stat``); empty when HEAD did not move. Raises :class:`Blocked` when git fails."""
    end = head_commit(folder)
    if end is None or end == start:
        return ""
    span = [f"{start}..{end}"] if start else [end]
    return git(["-c", "core.quotepath=off", "log", "--no-color", "--stat", "--format=commit %H%nAuthor: %an <%ae>%n%n"
                "    %s%n", *span], folder, error=Blocked, what="reading the commits").decode("utf-8", "replace")


def tree_changes(folder: Path, store: Path, start: str, end: str) -> tuple[str, bytes]:
    """What changed between two trees of :func:`folder_tree`: ``(name-status text, binary patch bytes)``, as plumbing
    (``git diff-tree``) prints them, so a person's diff settings never change the record."""
    env = _store_env(store)
    status = git(["-c", "core.quotepath=off", "diff-tree", "-r", "--no-renames", "--name-status", start, end], folder,
                 env=env, error=Blocked, what="comparing the folder's states")
    patch = git(["diff-tree", "-r", "-p", "--binary", "--no-renames", start, end], folder, env=env, error=Blocked,
                what="comparing the folder's states")
    return status.decode("utf-8", "replace"), patch
