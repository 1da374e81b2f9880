"""The doctor's ``screen.trust_question`` (``live_trial.doctor.trust``): the git work tree it boots in, and how what
the boot showed becomes the line, on trust questions captured from 2.1.197 and 2.1.332."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from live_trial.doctor import trust
from live_trial.doctor.checks import Checks, parse_line
from live_trial.errors import BootFail

SCREENS = Path(__file__).parents[1] / "screens"
ASKED_332 = (SCREENS / "trust_question_332.txt").read_text()
READY_332 = (SCREENS / "ready_after_trust_332.txt").read_text()


def judged(seen: trust.TrustSeen) -> str:
    checks = Checks()
    trust.judge_trust(checks, seen)
    return next(c.line() for c in checks.all() if c.name == "screen.trust_question")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_work_tree_is_a_git_work_tree_inside_the_trusted_folder(tmp_path):
    trusted, repo = trust.make_work_tree(tmp_path)
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=repo, capture_output=True, text=True, check=True)
    assert Path(top.stdout.strip()) == repo and repo.parent == trusted.resolve()
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True).returncode == 0


def test_not_asked_holds_and_says_so():
    line = judged(trust.TrustSeen(Path("/t/repo"), ready=True, captures=[READY_332]))
    assert line == f"screen.trust_question: holds ({trust.NOT_ASKED})"
    assert parse_line(line).saw == trust.NOT_ASKED


def test_asked_and_answered_holds_only_when_the_cli_wrote_the_folders_trust():
    seen = trust.TrustSeen(Path("/tmp/obs-screen/t-332/cwd"), asked=True, answered=True, ready=True, accepted=True,
                           captures=[ASKED_332, READY_332])
    assert judged(seen) == f"screen.trust_question: holds ({trust.ASKED})"
    seen.accepted = False
    assert judged(seen) == ("screen.trust_question: changed (boot answered the question for /tmp/obs-screen/t-332/cwd, "
                            "but the config holds hasTrustDialogAccepted False for it)")


def test_a_question_boot_could_not_answer_is_changed_with_its_folder_and_screen():
    error = BootFail("boot stopped at the folder-trust question: claude is waiting for an answer the harness does "
                     "not give", code="blocking_screen", details={"tail": ["Yes, I trust this folder", "No, exit"]})
    line = judged(trust.TrustSeen(Path("/t/repo"), asked=True, error=error, captures=[ASKED_332]))
    assert line.startswith("screen.trust_question: changed (the question was drawn for /tmp/obs-screen/t-332/cwd; "
                           "boot: blocking_screen: boot stopped at the folder-trust question"), line


def test_a_question_left_unanswered_on_the_way_to_the_prompt_is_changed():
    line = judged(trust.TrustSeen(Path("/t/repo"), asked=True, ready=True, captures=[ASKED_332, READY_332]))
    assert line == ("screen.trust_question: changed (the question was drawn for /tmp/obs-screen/t-332/cwd, boot did not "
                    "answer it and still reached the prompt)")


def test_a_boot_that_could_not_be_played_stays_not_seen():
    assert judged(trust.TrustSeen(Path("/t"), skipped="no git work tree could be made (git is not on PATH)")) == \
        "screen.trust_question: not seen"


def test_without_git_the_work_tree_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(trust.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError):
        trust.make_work_tree(tmp_path)
