"""A trial owns its working folder (README "Running a real trial", "What a trial leaves behind"), on the real claude CLI
in real tmux, the model played by rehearsal scenarios.

``--cwd DIR`` runs each trial in a private copy of DIR (a git work tree as the author has it on disk), removed on
every exit path; ``--in-place DIR`` runs in DIR under a lock a second trial cannot take; a trial's side effects are
what its own session changed in its own folder, so it is never credited with another trial's file nor with the
author's uncommitted edits.
"""
from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.run_support import (
    FAST,
    PLUGINS,
    SCENARIOS,
    final_json,
    pid_alive,
    popen_cmd,
    records,
    run_cmd,
    tmux_sessions,
    wait_busy,
    wait_for_state,
    wait_polled,
    workdirs,
)
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

MARK = ["trialkit:mark", "--plugins-root", str(PLUGINS)]


def _project(tmp_path: Path) -> Path:
    """An author's folder outside git: two files, and a .venv that is never copied."""
    here = tmp_path / "project"
    (here / "docs").mkdir(parents=True)
    (here / "notes.txt").write_text("the author's notes\n")
    (here / "docs" / "plan.md").write_text("# plan\n")
    (here / ".venv" / "bin").mkdir(parents=True)
    (here / ".venv" / "bin" / "python").write_text("not copied\n")
    return here


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the sha256 of its content (byte-for-byte comparisons)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def _state(wd: Path) -> dict:
    return json.loads((wd / "trial-state.json").read_text())


def _log(wd: Path) -> list[dict]:
    return [json.loads(x) for x in (wd / "trial-log.jsonl").read_text().splitlines()]


def _copy_was_made_and_removed(wd: Path, source: Path) -> None:
    state = _state(wd)
    folder = state["folder"]
    assert (folder["form"], folder["source"], folder["path"]) == ("copy", str(source), str(wd / "cwd"))
    made = [x for x in _log(wd) if x["step"] == "folder"]
    assert made and made[0]["copied_files"] >= 2, made                    # the copy existed, with the author's files
    assert folder["removed"] is True and not (wd / "cwd").exists(), "the trial's copy is still there"
    assert any(x["step"] == "cleanup" and x["decision"] == "folder_removed" for x in _log(wd))
    verdict = json.loads((wd / "verdict.json").read_text())
    assert verdict["working_folder"] == {"form": "copy", "path": str(wd / "cwd"), "source": str(source), "removed": True}


def _no_leftovers(state: dict) -> None:
    assert state["session"] not in tmux_sessions()
    if state.get("pane_pid"):
        assert not pid_alive(state["pane_pid"]), "the trial's claude process is still running"


def _wait_both_polling(tmp_path: Path) -> list[dict]:
    def both():
        states = []
        for wd in workdirs(tmp_path):
            try:
                states.append({**_state(wd), "_workdir": str(wd)})
            except (OSError, ValueError):
                return None
        ready = [s for s in states if s["phase"] == "polling" and s.get("pane_pid")]
        return ready if len(ready) == 2 else None
    return wait_for(both, what="two trials polling",
                    seen=lambda: str([_state(wd).get("phase") for wd in workdirs(tmp_path)]))


@pytest.mark.budget(24)
def test_two_trials_on_one_cwd_each_see_only_their_own_files(tmp_path):
    """The report of one trial is never the other's: trial A writes report.md, trial B writes nothing and its evaluator
    tries to cite report.md; B is not PASS, and DIR itself is untouched."""
    here = _project(tmp_path)
    before = _tree(here)
    signal_a, signal_b = tmp_path / "signal-a", tmp_path / "signal-b"
    slow = ["--stall-limit", "60", "--hard-cap", "240"]
    a = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-report-after-signal.yaml"),
                  "--args", str(signal_a), "--cwd", str(here), *slow)
    b = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-nothing-after-signal.yaml"),
                  "--args", str(signal_b), "--cwd", str(here), *slow)
    try:
        states = _wait_both_polling(tmp_path)            # both copies made and snapshotted, both sessions at work
        signal_a.touch()                                 # now A writes report.md in its folder
        out_a, err_a = a.communicate(timeout=180)
        signal_b.touch()                                 # B ends only after A's report exists
        out_b, err_b = b.communicate(timeout=180)
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                proc.kill()
    result_a, result_b = json.loads(out_a.strip().splitlines()[-1]), json.loads(out_b.strip().splitlines()[-1])
    assert a.returncode == 0, err_a[-3000:]
    assert b.returncode != 0 and result_b["status"] != "PASS", result_b
    wd_a, wd_b = Path(result_a["workdir"]), Path(result_b["workdir"])
    assert wd_a != wd_b and {str(wd_a), str(wd_b)} == {s["_workdir"] for s in states}
    files_a = json.loads((wd_a / "side-effects" / "files.json").read_text())
    files_b = json.loads((wd_b / "side-effects" / "files.json").read_text())
    assert files_a["added"] == ["report.md"] and (wd_a / "side-effects/files/report.md").is_file()
    assert files_b == {"added": [], "changed": [], "removed": [], "copied": []}
    assert not (wd_b / "side-effects" / "files").exists()
    verdict_b = json.loads((wd_b / "verdict.json").read_text())
    assert (verdict_b["completion"], verdict_b["goal_result"], verdict_b["evidence"]) == ("PASS", "FAIL", [])
    assert verdict_b["goal_blockers"][0].startswith("insufficient evidence: ")
    evaluation = json.loads((wd_b / "evaluation.json").read_text())
    problems = " ".join(p for att in evaluation["attempts"] for p in att["problems"])
    assert "side-effects/files/report.md" in problems and "cwd/report.md" in problems and "does not exist" in problems
    assert _tree(here) == before, "the author's folder changed"
    for wd in (wd_a, wd_b):
        _copy_was_made_and_removed(wd, here)
        _no_leftovers(_state(wd))


@pytest.mark.budget(12)
def test_a_second_trial_in_place_is_refused_at_once_naming_the_holder(tmp_path):
    from live_trial.trial import folder_lock

    here = _project(tmp_path)
    before = _tree(here)
    first = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-hang.yaml"), "--in-place", str(here),
                      "--stall-limit", "300", "--hard-cap", "300")
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        second = subprocess.run([sys.executable, "-m", "live_trial", "run", *MARK, "--rehearsal",
                                 str(SCENARIOS / "mark-happy.yaml"), "--in-place", str(here), "--eval-root",
                                 str(tmp_path / "eval2"), "--json"], capture_output=True, text=True, timeout=60)
        still_running = first.poll() is None
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert still_running, "the second trial waited for the first one instead of being refused"
    assert second.returncode == 2, second.stdout + second.stderr
    line = json.loads(second.stdout.strip())
    assert line["code"] == "folder_in_use" and "\n" not in line["message"]
    assert f"harness pid {first.pid}" in line["message"] and state["_workdir"] in line["message"]
    assert str(here) in line["message"]
    assert not (tmp_path / "eval2").exists(), "the refused trial created something"
    assert first.returncode == 3
    wd = Path(state["_workdir"])
    assert _state(wd)["folder"]["form"] == "in_place" and _state(wd)["folder"]["path"] == str(here)
    assert _tree(here) == before
    lock = folder_lock.acquire(here, tmp_path / "another")          # released when the first trial ended
    lock.release()
    _no_leftovers(state)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "--no-optional-locks", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


def _dirty_repo(tmp_path: Path) -> Path:
    """A repository with a staged edit, an unstaged edit, an untracked file, a deleted file and an ignored file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for name, text in (("staged.txt", "one\n"), ("unstaged.txt", "two\n"), ("deleted.txt", "three\n"),
                       ("kept.txt", "four\n"), (".gitignore", "*.log\n.venv/\n")):
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=a@example.com", "-c", "user.name=A", "commit", "-qm", "first")
    _git(repo, "checkout", "-qb", "feature")
    (repo / "staged.txt").write_text("one, staged\n")
    _git(repo, "add", "staged.txt")
    (repo / "unstaged.txt").write_text("two, not staged\n")
    (repo / "deleted.txt").unlink()
    (repo / "untracked.txt").write_text("new, untracked\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / ".venv").mkdir()
    (repo / ".venv" / "lib.py").write_text("never copied\n")
    return repo


def _fingerprint(repo: Path) -> dict:
    git_files = {p.relative_to(repo).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                 for p in sorted((repo / ".git").rglob("*")) if p.is_file()}
    return {"status": _git(repo, "status", "--porcelain"), "head": _git(repo, "rev-parse", "HEAD"),
            "branch": _git(repo, "symbolic-ref", "HEAD"), "refs": _git(repo, "for-each-ref"),
            "objects": _git(repo, "count-objects", "-v"), "git_files": git_files, "files": _tree(repo)}


@pytest.mark.budget(12)
def test_a_dirty_repository_is_copied_as_the_author_has_it_and_left_untouched(tmp_path):
    repo = _dirty_repo(tmp_path)
    before = _fingerprint(repo)
    assert sorted(before["status"].splitlines()) == [" D deleted.txt", " M unstaged.txt", "?? untracked.txt",
                                                     "M  staged.txt"]
    proc = run_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-git-look.yaml"), "--cwd", str(repo), *FAST)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    wd = Path(final_json(proc)["workdir"])
    # what git showed the session in its copy: exactly the author's uncommitted state, on the author's branch
    looked = [r for r in records(wd / "transcript.jsonl") if r.get("type") == "user"
              and "== looked" in json.dumps(r.get("toolUseResult"))]
    assert looked, "the session's git output is not in the transcript"
    seen = looked[0]["toolUseResult"]["stdout"]
    status = seen.split("== status\n")[1].split("== staged")[0]
    assert sorted(status.splitlines()) == sorted(before["status"].splitlines())
    assert seen.split("== staged\n")[1].split("== branch")[0] == "staged.txt\n"
    assert seen.split("== branch\n")[1].split("== looked")[0] == "feature\n"
    # only the session's own file is a side effect; none of the author's edits is
    files = json.loads((wd / "side-effects" / "files.json").read_text())
    assert files == {"added": ["made-by-session.txt"], "changed": [], "removed": [], "copied": ["made-by-session.txt"]}
    assert (wd / "side-effects" / "git-status.txt").read_text() == "A\tmade-by-session.txt\n"
    patch = (wd / "side-effects" / "git-diff.patch").read_text()
    assert "made-by-session.txt" in patch and "staged" not in patch and "untracked" not in patch
    assert _state(wd)["folder"]["git"] is True
    assert _fingerprint(repo) == before, "the author's repository changed"
    _copy_was_made_and_removed(wd, repo)
    assert not (wd / "cwd-baseline").exists()
    _no_leftovers(_state(wd))


@pytest.mark.budget(10)
@pytest.mark.parametrize("scenario,code,check", [
    ("mark-happy.yaml", 0, lambda doc: doc["overall"]["verdict"] == "PASS"),
    ("mark-wrong-skill.yaml", 1, lambda doc: doc["launch"] == "FAIL"),
    ("mark-no-marker.yaml", 1, lambda doc: doc["poll_exit"] == "STALL" and doc["stop_reason"] == "contract_violation"),
])
def test_the_copy_is_gone_after_pass_fail_and_stall(tmp_path, scenario, code, check):
    here = _project(tmp_path)
    before = _tree(here)
    proc = run_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / scenario), "--cwd", str(here), *FAST)
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-3000:]
    wd = Path(final_json(proc)["workdir"])
    assert check(json.loads((wd / "verdict.json").read_text()))
    _copy_was_made_and_removed(wd, here)
    assert _tree(here) == before
    _no_leftovers(_state(wd))


@pytest.mark.budget(8)
def test_keep_cwd_keeps_the_copy_and_says_so(tmp_path):
    here = _project(tmp_path)
    proc = run_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), "--cwd", str(here),
                   "--keep-cwd", *FAST)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    wd = Path(final_json(proc)["workdir"])
    assert _tree(wd / "cwd") == {k: v for k, v in _tree(here).items() if not k.startswith(".venv/")}
    doc = json.loads((wd / "verdict.json").read_text())
    assert doc["working_folder"] == {"form": "copy", "path": str(wd / "cwd"), "source": str(here), "removed": False}


def _start_and_wait_for_the_copy(tmp_path: Path, here: Path, scenario: str, *limits: str):
    proc = popen_cmd(tmp_path, *MARK, "--rehearsal", str(SCENARIOS / scenario), "--cwd", str(here), *limits)
    state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
    copy = Path(state["folder"]["path"])
    assert (copy / "notes.txt").read_text() == "the author's notes\n" and not (copy / ".venv").exists()
    wait_busy(state)
    return proc, state, copy


def _start_then_sigkill(tmp_path: Path, here: Path, scenario: str, *limits: str) -> tuple[dict, Path]:
    """Start a trial on a copy of ``here``, wait until it polls (its clocks written), SIGKILL its harness (no cleanup
    at all); return its state and its copy."""
    proc = None
    try:
        proc, state, copy = _start_and_wait_for_the_copy(tmp_path, here, scenario, *limits)
        wait_polled(state)
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
    return state, copy


@pytest.mark.budget(8)
def test_the_copy_is_gone_after_ctrl_c(tmp_path):
    here = _project(tmp_path)
    proc, state, copy = None, None, None
    try:
        proc, state, copy = _start_and_wait_for_the_copy(tmp_path, here, "mark-hang.yaml", "--stall-limit", "300",
                                                         "--hard-cap", "300")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    assert json.loads(out.strip().splitlines()[-1])["stop_reason"] == "harness_interrupted"
    _copy_was_made_and_removed(Path(state["_workdir"]), here)
    _no_leftovers(state)


@pytest.mark.budget(10)
def test_the_copy_is_gone_after_a_sigkill_of_the_harness_and_reap(tmp_path):
    here = _project(tmp_path)
    state, copy = _start_then_sigkill(tmp_path, here, "mark-hang.yaml", "--stall-limit", "300", "--hard-cap", "300")
    assert copy.is_dir() and state["session"] in tmux_sessions(), "the copy and session must outlive the harness"
    reaped = subprocess.run([sys.executable, "-m", "live_trial", "reap", "--json"], capture_output=True, text=True,
                            timeout=60)
    assert reaped.returncode == 0, reaped.stderr
    doc = json.loads(reaped.stdout)
    assert state["session"] in doc["removed"] and doc["copies_removed"] == [str(copy)]
    assert not copy.exists() and _state(Path(state["_workdir"]))["folder"]["removed"] is True
    assert _tree(here)["notes.txt"] and (Path(state["_workdir"]) / "task.md").is_file()   # nothing else deleted
    _no_leftovers(state)


@pytest.mark.budget(18)
def test_the_copy_is_gone_after_a_sigkill_of_the_harness_and_resume(tmp_path):
    here = _project(tmp_path)
    # a 5 s answer must not read as a hang under load: this test is about the copy, not the STALL limit
    state, copy = _start_then_sigkill(tmp_path, here, "mark-slow.yaml", "--stall-limit", "30", "--hard-cap", "120")
    assert copy.is_dir()
    resumed = subprocess.run([sys.executable, "-m", "live_trial", "run", "--resume", state["_workdir"], "--json"],
                             capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    assert final_json(resumed)["status"] == "PASS"
    _copy_was_made_and_removed(Path(state["_workdir"]), here)
    _no_leftovers(state)
