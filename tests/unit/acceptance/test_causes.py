"""Whose failure it is (acceptance/causes.py): one table, read by the verdict, the summary and the notification; a disk
that refuses the records is one line and exit 3 with nothing half-written (README "Whose failure it is")."""
from __future__ import annotations

import errno
import os
import re
import signal
from pathlib import Path

import pytest

from live_trial.acceptance import causes
from live_trial.acceptance.overall import VerdictInputs, judge
from live_trial.errors import Blocked, ExitCode
from live_trial.notices import notify
from live_trial.resources import repo_root
from tests.unit.fakes import trial_state

README = (repo_root() / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", notify.LANGS)
def test_every_cause_has_its_own_plain_sentence(lang):
    unknown = notify.reason_sentence(None, lang)
    for code in causes.CAUSES:
        sentence = notify.reason_sentence(code, lang)
        assert sentence != unknown, code
        assert notify.forbidden_tokens(sentence, lang) == [], (code, sentence)


def test_the_readme_table_is_this_table():
    section = README.split("## Whose failure it is", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| (skill|environment|harness) \|", section, re.M))
    assert rows == {c.code: c.whose for c in causes.CAUSES.values()}


@pytest.mark.parametrize("code", ["tmux_gone", "session_removed", "harness_interrupted", "harness_terminated",
                                  "harness_killed", "evaluator_failed", "eval_root_unwritable", "disk_full",
                                  "hard_cap", "tmux_missing", "claude_missing", "foreign_tmux_server",
                                  "session_exists"])
def test_an_environment_or_harness_failure_is_blocked_never_a_fail(code):
    assert causes.blocks(code)
    assert causes.blocked_reason(code).startswith("blocked: ") and "skill" not in causes.blocked_reason(code)
    assert judge(VerdictInputs("PASS", "FAIL", None, blocked=True)).verdict == "BLOCKED"


@pytest.mark.parametrize("code", ["crash", "hang", "gate_unanswered", "contract_violation", "skill_not_launched",
                                  None])
def test_what_the_skill_did_is_not_blocked(code):
    assert not causes.blocks(code)


def test_ctrl_c_and_sigterm_are_told_apart():
    assert causes.interrupt_code(signal.SIGINT) == "harness_interrupted"
    assert causes.interrupt_code(None) == "harness_interrupted"
    assert causes.interrupt_code(signal.SIGTERM) == "harness_terminated"


@pytest.mark.parametrize("lang", notify.LANGS)
def test_a_person_who_pressed_ctrl_c_is_told_so_not_that_a_tool_is_missing(lang, tmp_path):
    doc = {"overall": {"verdict": "BLOCKED"}, "stop_reason": "harness_interrupted", "target": "hello:greet",
           "skill": "greet", "run_id": "20261130T101500-abcd", "poll_exit": None}
    text = notify.notify_trial(tmp_path, doc, lang, env={})
    said = notify.reason_sentence("harness_interrupted", lang)
    assert said in text or said[0].lower() + said[1:] in text, text     # it may be told mid-sentence
    missing = {"en": "missing", "ja": "見つから"}[lang]
    assert missing not in text, text
    assert missing not in notify.reason_sentence("BLOCKED", lang)      # the word BLOCKED names no single cause


@pytest.mark.parametrize("err,code,words", [
    (errno.ENOSPC, "disk_full", "the disk is full"),
    (errno.EDQUOT, "disk_full", "the disk is full"),
    (errno.EROFS, "eval_root_unwritable", "cannot be written (Read-only file system)"),
    (errno.EACCES, "eval_root_unwritable", "cannot be written (Permission denied)"),
])
def test_a_disk_that_refuses_the_records_is_one_line_exit_3(err, code, words):
    exc = causes.unwritable(OSError(err, os.strerror(err)), "/e/x")
    assert isinstance(exc, Blocked) and exc.exit_code == ExitCode.BLOCKED and exc.code == code
    assert words in exc.message and "(/e/x)" in exc.message and "--eval-root" in exc.message
    assert "\n" not in exc.message


def test_a_full_disk_at_the_start_leaves_nothing_half_written(tmp_path, monkeypatch):
    from live_trial.trial import runner, start
    from live_trial.trial.facts import TrialRequest

    def full(path, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    monkeypatch.setattr(start, "write_text_atomic", full)            # task.md: the first file written
    eval_root = tmp_path / "eval"
    eval_root.mkdir()
    (eval_root / "kept.txt").write_text("x")
    req = TrialRequest(target="hello:greet", plugins_root=repo_root() / "examples" / "plugins", cwd=tmp_path,
                       eval_root=eval_root, rehearsal=repo_root() / "examples" / "scenarios" / "greet-happy.yaml")
    with pytest.raises(Blocked) as err:
        runner.Trial(req, env={"PATH": os.environ["PATH"]}).run()
    assert err.value.code == "disk_full" and "task.md" in err.value.message
    assert sorted(p.name for p in eval_root.rglob("*")) == ["kept.txt"]


def test_a_log_line_the_disk_refuses_is_dropped_and_the_state_write_is_one_line(tmp_path, monkeypatch):
    from live_trial.trial import journal as jr
    from live_trial.workdir_files import Workdir

    seen = []
    j = jr.Journal(lambda kind, data: seen.append(kind))
    j.wd = Workdir(root=tmp_path, run_id="20261130T101500-abcd")

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(jr, "append_jsonl", full)
    monkeypatch.setattr(jr.TrialState, "save", full)
    j.state = trial_state()
    j.log("poll", "DONE")                                  # never raises: the decision still reaches the sink
    assert seen == ["decision"] and j.log_error is not None
    with pytest.raises(Blocked) as err:
        j.save(phase="collecting")
    assert err.value.code == "disk_full" and str(Path(tmp_path) / "trial-state.json") in err.value.message
