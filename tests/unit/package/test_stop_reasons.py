"""Whose failure it is (live_trial/stop_reasons.py): one table, read by the verdict, the summary and the notification;
every row has its sentence and its next step in every catalogue; a disk that refuses the records is one line and exit 3
with nothing half-written (README "Whose failure it is")."""
from __future__ import annotations

import errno
import json
import os
import re
import signal
from pathlib import Path

import pytest

from live_trial import stop_reasons as causes
from live_trial.acceptance.overall import VerdictInputs, judge
from live_trial.errors import Blocked, ExitCode
from live_trial.notices import notify
from live_trial.notices import outcome as oc
from live_trial.notices.catalogue import reason_sentence
from live_trial.stop_reasons import StopReason, Whose
from live_trial.resources import repo_root
from tests.unit.fakes import trial_state

README = (repo_root() / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", notify.LANGS)
def test_every_cause_has_its_own_plain_sentence(lang):
    unknown = reason_sentence(None, lang)
    for code in StopReason:
        sentence = reason_sentence(code, lang)
        assert sentence != unknown, code
        assert notify.forbidden_tokens(sentence, lang) == [], (code, sentence)


@pytest.mark.parametrize("lang", notify.LANGS)
def test_every_row_has_its_sentence_and_its_next_step_in_every_catalogue(lang):
    cat = notify.catalogue(lang)
    no_sentence = [str(r) for r in StopReason if not str(cat["stop_reasons"].get(r) or "").strip()]
    assert no_sentence == [], f"add the sentence of {no_sentence} to notifications.{lang}.json under stop_reasons"
    no_step = [f"{r} ({r.step})" for r in StopReason if not str(cat["trial"]["next"].get(r.step) or "").strip()]
    assert no_step == [], f"add the next step of {no_step} to notifications.{lang}.json under trial.next"
    for row in StopReason:
        needs = set(re.findall(r"{(\w+)}", cat["trial"]["next"][row.step]))
        assert not needs or cat["trial"]["next"].get(row.step + "_plain"), (row, "a step with values needs _plain")


@pytest.mark.parametrize("lang", notify.LANGS)
def test_a_catalogue_has_a_stop_reason_sentence_only_for_a_row(lang):
    cat = notify.catalogue(lang)
    assert sorted(set(cat["stop_reasons"]) - set(StopReason)) == [], "a sentence for a code that is no row"
    assert sorted(set(cat["reasons"]) & set(StopReason)) == [], "a row's sentence belongs under stop_reasons"


def test_each_row_knows_whose_failure_it_is_and_its_verdict():
    for row in StopReason:
        assert isinstance(row.whose, Whose) and row.why.strip() and row.step.strip(), row
        assert row.verdict == ("FAIL" if row.whose == Whose.SKILL else "BLOCKED"), row
        assert causes.blocked_reason(row).startswith("blocked: ")
    assert StopReason.of("tmux_gone") is StopReason.TMUX_GONE
    assert StopReason.of("parked") is None and StopReason.of(None) is None and StopReason.of(["x"]) is None


def test_every_stall_row_that_stops_names_a_row():
    """Seed 001's STALL table stops only for a stop reason of the table (the rest extend or nudge)."""
    import itertools

    from live_trial.trial.stall import decide_stall

    actions = {decide_stall(session_alive=alive, state=state, marker_exists=marker, stall_extended=ext, nudge_count=n,
                            nudge_max=2, asks_question=q, said_done=d).action
               for alive, state, marker, ext, n, q, d in itertools.product(
                   (True, False), ("BUSY_TOOL", "IDLE_TURN_COMPLETE", None), (True, False), (True, False), (0, 2),
                   (True, False), (True, False))}
    stops = actions - {"extend", "nudge"}
    assert stops == {"crash", "hang", "nudge_limit", "contract_violation", "unexpected_stop"}
    assert all(isinstance(a, StopReason) for a in stops)


def test_the_codes_of_the_boot_errors_are_rows():
    """errors.py sits below the table and names its codes as text: they must still be rows."""
    from live_trial.errors import BootFail, BootTimeout

    assert StopReason.of(BootFail.code) is StopReason.BOOT_FAIL
    assert StopReason.of(BootTimeout.code) is StopReason.BOOT_TIMEOUT


@pytest.mark.parametrize("code, whose", [
    ("boot_timeout", Whose.ENVIRONMENT),        # the CLI drew its box but was not ready in time: a slow machine
    ("cli_refused_start", Whose.ENVIRONMENT),   # the CLI refused its arguments: the installed CLI, before any plugin
    ("boot_fail", Whose.HARNESS),               # no cause named: the harness's gap, never the skill's
    ("exited_at_start", Whose.SKILL),           # exited with the plugin under trial loaded: the skill's package
])
def test_whose_failure_a_boot_stop_is(code, whose):
    assert StopReason.of(code).whose == whose
    assert StopReason.of(code).verdict == ("FAIL" if whose == Whose.SKILL else "BLOCKED")


@pytest.mark.parametrize("tail, code", [
    ("Error: unknown option '--no-such-flag'", "cli_refused_start"),
    ("Error: Session ID 1234 is already in use.", "cli_refused_start"),
    ("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
     "root_needs_sandbox"),
    ("SessionStart hook killed the process | Pane is dead", "exited_at_start"),
    (" Enter to confirm · Esc to cancel | Claude Code didn't start because this folder isn't trusted. | Run claude "
     "again and choose Yes, or run it in another folder.", "blocking_screen"),          # seen on 2.1.332
])
def test_an_exit_at_start_is_named_by_its_last_lines(tail, code):
    assert causes.exit_cause(tail) == code


def test_the_next_step_a_person_is_told_is_the_rows(tmp_path):
    """The message of a trial stopped for a row gives the row's step; a BLOCKED one says it is not the skill's
    fault (retry), unless the row says what to change first (install the tool, allow more time)."""
    for row in StopReason:
        step = oc.next_step({"overall": {"verdict": row.verdict}, "stop_reason": str(row)})
        expected = row.step if (not row.blocks or row.step in oc.BEFORE_BLOCKED) else "retry"
        assert step.key == expected, row
    assert oc.next_step({"overall": {"verdict": "FAIL"}, "stop_reason": "parked"}).key == "look"


def test_the_readme_rows_are_rows_of_this_table():
    """The README shows some of the codes (``live-trial reasons`` lists them all): each row it shows says what the
    table says, and it shows at least one of each kind of failure."""
    section = README.split("## Whose failure it is", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| (\w+) \|", section, re.M)
    assert rows, "the README shows no row of the table"
    for code, whose, verdict in rows:
        row = StopReason.of(code)
        assert row is not None, f"README names {code!r}, which is no row of live_trial/stop_reasons.py"
        assert (whose, verdict) == (row.whose, row.verdict), code
    assert {whose for _, whose, _ in rows} == set(Whose)
    assert "live-trial reasons" in section


def test_the_reasons_command_lists_every_row(capsys):
    from live_trial.cli.main import main

    assert main(["reasons", "--lang", "en", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in doc["reasons"]] == [str(r) for r in StopReason]
    crash = doc["reasons"][0]
    assert crash == {"code": "crash", "whose": "skill", "verdict": "FAIL", "why": StopReason.CRASH.why,
                     "sentence": reason_sentence("crash", "en"),
                     "next": oc.next_step_sentence(oc.Step("error"), "en")}
    assert main(["reasons", "--lang", "ja"]) == 0
    out = capsys.readouterr().out
    assert reason_sentence("tmux_gone", "ja") in out and "environment" in out


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
    said = reason_sentence("harness_interrupted", lang)
    assert said in text or said[0].lower() + said[1:] in text, text     # it may be told mid-sentence
    missing = {"en": "missing", "ja": "見つから"}[lang]
    assert missing not in text, text
    assert missing not in reason_sentence("BLOCKED", lang)      # the word BLOCKED names no single cause


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


def test_every_next_step_of_a_row_has_its_command_line_wording():
    """``show`` and the report say a row's next step in the words of the command line (report.trials.CLI_STEPS);
    a row whose step has no wording there would fall back to "look" while the message says what to do."""
    from live_trial.report.trials import CLI_STEPS

    missing = sorted({row.step for row in causes.StopReason} - set(CLI_STEPS))
    assert missing == [], f"add the command-line wording of the steps {missing} to report/trials.py CLI_STEPS"
