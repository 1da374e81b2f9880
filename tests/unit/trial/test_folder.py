"""The rules of a trial's own folder (README "Running a real trial"): what a copy of ``--cwd DIR`` takes (excludes,
.gitignore, ``--include-ignored``, the size limit refused before anything exists), a git copy as the author has it on
disk with the author's repository untouched, what counts as a side effect, the in-place lock, the trust check."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.trial import changes, folder, folder_lock, folder_steps
from live_trial.trial.facts import TrialRequest
from live_trial.trial.runner import Trial

REPO_ROOT = Path(__file__).resolve().parents[3]
PLUGINS = REPO_ROOT / "examples" / "plugins"
SCENARIO = REPO_ROOT / "examples" / "scenarios" / "greet-happy.yaml"


def _tree(root: Path, skip_git: bool = True) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if skip_git and (rel == ".git" or rel.startswith(".git/")):
            continue
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--no-optional-locks", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def _plain(tmp_path: Path) -> Path:
    here = tmp_path / "project"
    for rel, text in (("a.txt", "a\n"), ("sub/b.txt", "b\n"), (".venv/x.py", "v\n"), ("node_modules/m/i.js", "m\n"),
                      ("deep/node_modules/n.js", "n\n"), ("eval-log/old/verdict.json", "{}\n"),
                      ("nested/.git/HEAD", "ref: refs/heads/main\n"), ("debug.log", "log\n")):
        (here / rel).parent.mkdir(parents=True, exist_ok=True)
        (here / rel).write_text(text)
    os.symlink("a.txt", here / "link-to-a")
    os.chmod(here / "a.txt", 0o755)
    return here


def test_a_plain_copy_takes_everything_but_git_venv_node_modules_and_the_eval_root(tmp_path):
    here = _plain(tmp_path)
    plan = folder.plan_folder("copy", here, here / "eval-log", max_bytes=10**6)
    assert plan.git is False and plan.root == here and plan.rel == "."
    assert plan.files == ["a.txt", "debug.log", "link-to-a", "sub/b.txt"]
    wd = tmp_path / "wd"
    wd.mkdir()
    start = folder.make_folder(plan, wd)
    assert start == wd / "cwd"
    assert _tree(start) == {k: v for k, v in _tree(here).items() if k in plan.files}
    assert os.readlink(start / "link-to-a") == "a.txt" and os.stat(start / "a.txt").st_mode & 0o777 == 0o755


def _dirty_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for rel, text in (("staged.txt", "1\n"), ("unstaged.txt", "2\n"), ("deleted.txt", "3\n"), ("sub/kept.txt", "4\n"),
                      (".gitignore", "*.log\nbuild/\n"), ("staged-deleted.txt", "5\n")):
        (repo / rel).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=a@example.com", "-c", "user.name=A", "commit", "-qm", "first")
    _git(repo, "config", "user.email", "author@example.com")
    _git(repo, "remote", "add", "origin", "https://example.com/author/repo.git")
    _git(repo, "checkout", "-qb", "feature")
    (repo / "staged.txt").write_text("1 staged\n")
    _git(repo, "add", "staged.txt")
    _git(repo, "rm", "-q", "staged-deleted.txt")
    (repo / "unstaged.txt").write_text("2 unstaged\n")
    (repo / "deleted.txt").unlink()
    (repo / "sub" / "untracked.txt").write_text("new\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 10)
    (repo / ".venv").mkdir()
    (repo / ".venv" / "lib.py").write_text("venv\n")
    return repo


def _fingerprint(repo: Path) -> dict:
    return {"status": _git(repo, "status", "--porcelain"), "head": _git(repo, "rev-parse", "HEAD"),
            "refs": _git(repo, "for-each-ref"), "objects": _git(repo, "count-objects", "-v"),
            "git": _tree(repo / ".git", skip_git=False),
            "times": sorted((p.as_posix(), p.stat().st_mtime_ns) for p in (repo / ".git").rglob("*") if p.is_file())}


def test_a_git_copy_holds_exactly_what_the_author_has_on_disk_and_the_repository_is_untouched(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = _fingerprint(repo)
    plan = folder.plan_folder("copy", repo / "sub", tmp_path / "eval", max_bytes=10**6)
    assert (plan.git, plan.root, plan.rel) == (True, repo, "sub")
    wd = tmp_path / "wd"
    wd.mkdir()
    start = folder.make_folder(plan, wd)
    copy = wd / "cwd"
    assert start == copy / "sub"
    on_disk = {k: v for k, v in _tree(repo).items() if not k.startswith((".venv/", "build/")) and k != "debug.log"}
    assert _tree(copy) == on_disk                                    # deleted files stay deleted, nothing ignored
    author_status = [ln for ln in _git(repo, "status", "--porcelain").splitlines() if ln != "?? .venv/"]
    assert _git(copy, "status", "--porcelain").splitlines() == author_status     # .venv is never copied
    assert _git(copy, "diff", "--cached") == _git(repo, "diff", "--cached")
    assert _git(copy, "rev-parse", "HEAD") == _git(repo, "rev-parse", "HEAD")
    assert _git(copy, "symbolic-ref", "HEAD") == "refs/heads/feature\n"
    assert _git(copy, "for-each-ref", "--format=%(refname) %(objectname)") == \
        _git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    assert _git(copy, "config", "user.email") == "author@example.com\n"
    assert _git(copy, "remote", "get-url", "origin") == "https://example.com/author/repo.git\n"
    assert Path(_git(copy, "rev-parse", "--absolute-git-dir").strip()) == copy / ".git"
    assert _fingerprint(repo) == before                              # making the copy only read, times included
    _git(copy, "-c", "user.name=S", "commit", "-qam", "a commit in the copy")   # git works there, on its own
    after = _fingerprint(repo)
    # The commit's objects went into the copy; git may freshen (touch the time of) an author's object it found
    # through the shared object store, never its content.
    assert {k: v for k, v in after.items() if k != "times"} == {k: v for k, v in before.items() if k != "times"}
    assert _git(copy, "rev-parse", "HEAD") != before["head"] and (copy / ".git" / "objects").is_dir()


def test_gitignored_files_are_copied_only_with_include_ignored(tmp_path):
    repo = _dirty_repo(tmp_path)
    plain = folder.plan_folder("copy", repo, tmp_path / "eval", max_bytes=10**6)
    wide = folder.plan_folder("copy", repo, tmp_path / "eval", max_bytes=10**6, include_ignored=True)
    assert "debug.log" not in plain.files and "build/out.bin" not in plain.files
    assert set(wide.files) - set(plain.files) == {"debug.log", "build/out.bin"}
    assert not [f for f in wide.files if f.startswith(".venv/")]       # never, even with --include-ignored


def test_the_eval_root_inside_the_folder_is_never_copied(tmp_path):
    repo = _dirty_repo(tmp_path)
    (repo / "eval-log" / "x").mkdir(parents=True)
    (repo / "eval-log" / "x" / "verdict.json").write_text("{}\n")     # not ignored: only the eval-root rule skips it
    plan = folder.plan_folder("copy", repo, repo / "eval-log", max_bytes=10**6)
    assert not [f for f in plan.files if f.startswith("eval-log/")]


def test_an_over_size_folder_is_refused_in_one_line_before_anything_is_created(tmp_path):
    repo = _dirty_repo(tmp_path)
    (repo / "big.bin").write_bytes(b"x" * 5000)
    before = _fingerprint(repo)
    req = TrialRequest(target="hello:greet", plugins_root=PLUGINS, folder="copy", source=repo,
                       eval_root=tmp_path / "eval", rehearsal=SCENARIO)
    trial = Trial(req, env={"PATH": os.environ["PATH"]})
    trial.policy = trial.policy.with_overrides(copy_max_bytes=4096)
    with pytest.raises(RefusedInput) as err:
        trial.run()
    exc = err.value
    assert exc.code == "folder_too_large" and "\n" not in exc.message
    assert exc.details["limit_bytes"] == 4096 and exc.details["bytes"] > 4096
    assert "4.0 KiB" in exc.message and str(repo) in exc.message and "copy_max_bytes" in exc.message
    assert not (tmp_path / "eval").exists()
    assert _fingerprint(repo) == before


def test_the_size_limit_comes_from_the_policy_file():
    from live_trial.policy import load_policy
    from live_trial.resources import read_reference

    raw = json.loads(read_reference("convergence-policy.json"))
    assert load_policy({}).copy_max_bytes == raw["trial_folder"]["copy_max_bytes"]


def test_side_effects_are_content_changes_since_the_start_not_the_authors_edits(tmp_path):
    repo = _dirty_repo(tmp_path)
    plan = folder.plan_folder("copy", repo, tmp_path / "eval", max_bytes=10**6)
    wd = tmp_path / "wd"
    wd.mkdir()
    copy = folder.make_folder(plan, wd)
    snap = changes.snapshot_cwd(copy, exclude=[wd])
    base = changes.record_baseline(wd, copy, exclude=[wd])
    edited = copy / "sub" / "kept.txt"
    stat = edited.stat()
    edited.write_text("5\n")                                          # same size, same mtime: still a change
    os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    (copy / "made.txt").write_text("by the session\n")
    (copy / "unstaged.txt").unlink()
    summary = changes.record_side_effects(wd, copy, snap, [wd], baseline=base)
    assert summary == {"git": True, "added": 1, "changed": 1, "removed": 1, "copied": 2}
    assert json.loads((wd / "side-effects/files.json").read_text()) == {
        "added": ["made.txt"], "changed": ["sub/kept.txt"], "removed": ["unstaged.txt"],
        "copied": ["made.txt", "sub/kept.txt"]}
    assert (wd / "side-effects/git-status.txt").read_text() == "A\tmade.txt\nM\tsub/kept.txt\nD\tunstaged.txt\n"
    assert changes.session_files(wd) == ["side-effects/files/made.txt", "side-effects/files/sub/kept.txt"]
    assert "M  staged.txt" in _git(copy, "status", "--porcelain").splitlines()   # the copy's own index is untouched


def test_a_commit_the_session_makes_is_recorded_with_the_files_it_touched(tmp_path):
    from live_trial.trial.gitrepo import head_commit

    repo = _dirty_repo(tmp_path)
    wd = tmp_path / "wd"
    wd.mkdir()
    copy = folder.make_folder(folder.plan_folder("copy", repo, tmp_path / "eval", max_bytes=10**6), wd)
    head, snap = head_commit(copy), changes.snapshot_cwd(copy, exclude=[wd])
    base = changes.record_baseline(wd, copy, exclude=[wd])
    _git(copy, "-c", "user.name=S", "commit", "-qm", "commit the staged edit")   # no working file changes
    changes.record_side_effects(wd, copy, snap, [wd], baseline=base, baseline_head=head)
    commits = (wd / "side-effects" / "git-commits.txt").read_text()
    assert [ln for ln in commits.splitlines() if ln.startswith("commit ")] == [f"commit {head_commit(copy)}"]
    assert "commit the staged edit" in commits and "staged.txt" in commits
    assert (wd / "side-effects" / "git-status.txt").read_text() == ""


def test_an_old_size_and_mtime_snapshot_is_still_compared(tmp_path):
    folder_ = tmp_path / "f"
    folder_.mkdir()
    (folder_ / "a.txt").write_text("1")
    old = changes.snapshot_cwd(folder_, by_content=False)
    (tmp_path / "snap.json").write_text(json.dumps({k: list(v) for k, v in old.items()}))
    snap, by_content = changes.load_snapshot(tmp_path / "snap.json")
    assert by_content is False and snap == old


def test_in_place_lock_refuses_a_second_holder_naming_it_and_is_freed_when_its_process_dies(tmp_path):
    here = tmp_path / "here"
    here.mkdir()
    base = tmp_path / "locks"
    first = folder_lock.acquire(here, tmp_path / "wd1", base=base)
    with pytest.raises(RefusedInput) as err:
        folder_lock.acquire(here / "." , tmp_path / "wd2", base=base)
    assert err.value.code == "folder_in_use"
    assert f"harness pid {os.getpid()}" in err.value.message and str(tmp_path / "wd1") in err.value.message
    assert list(here.iterdir()) == []                                  # nothing inside the folder itself
    first.release()
    folder_lock.acquire(here, tmp_path / "wd2", base=base).release()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from live_trial.trial.folder_lock import acquire; "
                               f"acquire(Path({str(here)!r}), Path('wd3'), base=Path({str(base)!r})); "
                               "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RefusedInput):
            folder_lock.acquire(here, tmp_path / "wd4", base=base)
    finally:
        holder.kill()                                                  # SIGKILL: no release ran
        holder.wait()
    folder_lock.acquire(here, tmp_path / "wd4", base=base).release()


def test_a_resumed_in_place_trial_takes_its_folder_lock_again_or_is_refused(tmp_path):
    from live_trial.trial.folder_steps import reclaim, release
    from live_trial.trial.journal import Journal
    from live_trial.workdir_files import Workdir

    here = tmp_path / "here"
    here.mkdir()
    from tests.unit.fakes import trial_state

    state = trial_state(folder={"form": "in_place", "path": str(here), "harness_made": False, "keep": True,
                                "removed": False})

    class Resumed:                          # what reclaim and release use of a trial: its workdir, state, journal
        def __init__(self, name: str) -> None:
            self.folder_lock, self.journal = None, Journal()
            self.wd, self.state = Workdir(root=tmp_path / name, run_id=name), state

    first, second = Resumed("wd1"), Resumed("wd2")
    reclaim(first)
    with pytest.raises(RefusedInput) as err:
        reclaim(second)
    assert err.value.code == "folder_in_use"
    release(first)
    assert first.folder_lock is None
    reclaim(second)
    second.folder_lock.release()


def test_trust_of_the_folder_or_a_folder_above_it_is_required(tmp_path):
    config = tmp_path / "cfg"
    config.mkdir()
    trusted = tmp_path / "work"
    (config / ".claude.json").write_text(json.dumps({"projects": {
        str(trusted): {"hasTrustDialogAccepted": True}, str(tmp_path / "other"): {"hasTrustDialogAccepted": False}}}))
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    folder.check_trusted(trusted, env, what="the eval root", flag="--eval-root")
    folder.check_trusted(trusted / "eval-log" / "not-yet", env, what="the eval root", flag="--eval-root")
    for untrusted in (tmp_path / "other" / "x", tmp_path):
        with pytest.raises(RefusedInput) as err:
            folder.check_trusted(untrusted, env, what="the eval root", flag="--eval-root")
        assert err.value.code == "folder_not_trusted" and str(untrusted) in err.value.message
        assert "Yes, I trust this folder" in err.value.message and "\n" not in err.value.message
    assert folder.claude_json({"HOME": str(tmp_path)}) == tmp_path / ".claude.json"


def test_a_real_trial_outside_a_trusted_folder_is_refused_before_anything(tmp_path):
    config = tmp_path / "cfg"
    config.mkdir()
    (config / ".claude.json").write_text(json.dumps({"projects": {}}))
    req = TrialRequest(target="hello:greet", plugins_root=PLUGINS, eval_root=tmp_path / "eval")
    with pytest.raises(RefusedInput) as err:
        Trial(req, env={"PATH": os.environ["PATH"], "IS_SANDBOX": "1", "CLAUDE_CONFIG_DIR": str(config)}).run()
    assert err.value.code == "folder_not_trusted" and str(tmp_path / "eval") in err.value.message
    assert not (tmp_path / "eval").exists()


def test_reap_finds_only_the_copy_the_state_records_for_that_session(tmp_path):
    wd = tmp_path / "eval" / "p" / "s" / "live-trial" / "r"
    (wd / "cwd" / "sub").mkdir(parents=True)
    state = {"session": "lt-x", "folder": {"form": "copy", "path": str(wd / "cwd"), "harness_made": True,
                                           "keep": False, "removed": False}}
    (wd / "trial-state.json").write_text(json.dumps(state))
    assert folder.copy_of_session(str(wd / "cwd" / "sub"), "lt-x") == (wd, wd / "cwd")
    assert folder.copy_of_session(str(wd / "cwd" / "sub"), "lt-other") is None
    for change in ({"form": "fresh"}, {"form": "in_place"}, {"keep": True}, {"removed": True},
                   {"path": str(tmp_path / "elsewhere")}, {"harness_made": False}):
        (wd / "trial-state.json").write_text(json.dumps({**state, "folder": {**state["folder"], **change}}))
        assert folder.copy_of_session(str(wd / "cwd"), "lt-x") is None, change


@pytest.mark.parametrize("argv,code", [
    (["--cwd", ".", "--in-place", "."], 64),
    (["--keep-cwd"], 2),
    (["--include-ignored", "--in-place", "."], 2),
])
def test_folder_options_that_contradict_each_other_are_refused(tmp_path, argv, code):
    proc = subprocess.run([sys.executable, "-m", "live_trial", "run", "hello:greet", "--plugins-root", str(PLUGINS),
                           "--eval-root", str(tmp_path / "eval"), *argv], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert not (tmp_path / "eval").exists()


@pytest.mark.parametrize("form,live,answered", [(folder.FRESH, True, True), (folder.COPY, True, True),
                                                (folder.IN_PLACE, True, False), (folder.COPY, False, False)])
def test_boot_answers_the_trust_question_only_for_a_folder_the_harness_made_for_a_real_trial(tmp_path, form, live,
                                                                                           answered):
    """A fresh folder or a --cwd copy the harness made under the trusted eval root: its trust question is answered
    (2.1.332 asks about a git work tree there anyway); --in-place DIR is the person's own folder, and a rehearsal's
    config trusts its folder already (README "Running a real trial")."""
    plan = folder.FolderPlan(form=form, source=tmp_path if form != folder.FRESH else None)
    got = folder_steps.trusted_at_boot(plan, tmp_path / "cwd", live=live)
    assert got == (tmp_path / "cwd" if answered else None)
    note = folder_steps.trust_note(tmp_path / "cwd", tmp_path)
    assert str(tmp_path / "cwd") in note and "Yes, I trust this folder" in note and "git work tree" in note
