"""live_trial.trial.poll with a fake backend and an injected clock: every exit, the state file, resuming."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from live_trial.clock import epoch_of
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json
from live_trial.policy import load_policy
from live_trial.transcript.cases import ASK_INPUT
from live_trial.trial import poll as P
from live_trial.trial.observation import NO_TRANSCRIPT, TurnCache
from live_trial.trial.poll_rules import QUICK_RECHECK_S
from live_trial.trial.poll_state import SCHEMA, PollConfig
from tests.unit import fakes
from tests.unit.fakes import Clock

SESSION = "lt-20261130T120000-ab12-poll"
SID = "11111111-2222-4333-8444-555555555555"
NB = "\u00a0"
IDLE = f" ▐▛███▜▌   Claude Code v2.1.197\n\n● DONE: ok\n\n✻ Crunched for 3s\n\n{'─' * 40}\n❯{NB}\n{'─' * 40}\n" \
       "  ⏵⏵ bypass permissions on (shift+tab to cycle)\n"


def busy(seconds: int = 5, verb: str = "Zigzagging", glyph: str = "✽") -> str:
    return f" ▐▛███▜▌   Claude Code v2.1.197\n\n● Bash(sleep 20)\n  ⎿  Running… ({seconds}s)\n\n" \
           f"{glyph} {verb}… ({seconds}s · ↓ {seconds * 3} tokens)\n{'─' * 40}\n❯{NB}\n{'─' * 40}\n" \
           "  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt\n"


#: Where the manual clock starts: a wall-clock time (epoch seconds), as poll's timestamps are.
START = 1_800_000_000.0


class FakeBackend(fakes.FakeBackend):
    """The shared fake backend, idle by default."""

    def __init__(self, screens=None, **kw) -> None:
        super().__init__(screens, idle=IDLE, **kw)


@pytest.fixture
def env(tmp_path, transcript_builder):
    """A trial-like layout: cwd, config dir, transcript path, marker, state file, and a cfg factory."""
    class Env:
        cwd = tmp_path / "cwd"
        config = tmp_path / "cfg"
        marker = tmp_path / "work" / "out" / "status.json"
        state_file = tmp_path / "work" / "poll-state.json"
        builder = transcript_builder(session_id=SID)

        def tpath(self):
            from live_trial.transcript.paths import project_slug
            return self.config / "projects" / project_slug(self.cwd) / f"{SID}.jsonl"

        def write(self, builder=None):
            return (builder or self.builder).write(self.tpath())

        def append(self, add):
            """Run ``add()`` on the builder and append only the records it added, in one write, as the CLI
            appends a record (rewriting the file would wake poll on the truncation too)."""
            before = self.builder.text_jsonl()
            add()
            with open(self.tpath(), "a", encoding="utf-8") as fh:
                fh.write(self.builder.text_jsonl()[len(before):])

        def cfg(self, **policy):
            pol = load_policy({}).with_overrides(**{"stall_limit_s": 30, "hard_cap_s": 600, "poll_interval_s": 0.5,
                                                     "done_stable_ticks": 2, **policy})
            return PollConfig(marker=self.marker, session=SESSION, session_id=SID, cwd=self.cwd,
                                config_dir=self.config, state_file=self.state_file, policy=pol)

    e = Env()
    e.cwd.mkdir()
    e.marker.parent.mkdir(parents=True)
    return e


def run(env, backend, clock=None, max_ticks=None, **policy):
    clock = clock or Clock(START)
    cfg = env.cfg(**policy)
    cfg.max_ticks = max_ticks
    return P.poll(cfg, backend, clock=clock, sleep=clock.sleep)


# ------------------------------------------------------------------ DONE

def test_done_needs_marker_idle_and_quiet_screen_on_two_ticks(env):
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    ticks = []
    clock = Clock(START)
    cfg = env.cfg()
    r = P.poll(cfg, FakeBackend(), clock=clock, sleep=clock.sleep, on_tick=ticks.append)
    assert (r.exit, r.code, r.state, r.ticks) == ("DONE", 0, "IDLE_TURN_COMPLETE", 2)
    assert [t["done_streak"] for t in ticks] == [1, 2]
    doc = read_json(env.state_file, SCHEMA)
    assert doc["exits"][-1]["exit"] == "DONE" and doc["transcript_offset"] > 0


def test_no_done_without_marker(env):
    env.builder.turn()
    env.write()
    r = run(env, FakeBackend(), max_ticks=6)
    assert r.exit == "TICK_BUDGET" and r.code == 5 and r.state == "IDLE_TURN_COMPLETE"


def test_the_end_of_the_turn_is_done_without_a_marker_for_an_activation_prompt(env):
    """README "Does it start by itself?": a prompt pasted alone has no completion marker; its turn's end is DONE."""
    env.builder.turn()
    env.write()
    clock = Clock(START)
    cfg = env.cfg()
    cfg.turn_end = True
    r = P.poll(cfg, FakeBackend(), clock=clock, sleep=clock.sleep)
    assert (r.exit, r.state) == ("DONE", "IDLE_TURN_COMPLETE") and not env.marker.exists()


def test_a_busy_turn_is_not_done_without_a_marker_either(env):
    env.builder.prompt()
    env.builder.tool_use("Bash", {"command": "sleep 20"})
    env.write()
    cfg = env.cfg()
    cfg.turn_end, cfg.max_ticks = True, 6
    clock = Clock(START)
    assert P.poll(cfg, FakeBackend(), clock=clock, sleep=clock.sleep).exit == "TICK_BUDGET"


def test_no_done_while_the_screen_shows_the_spinner(env):
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    r = run(env, FakeBackend([lambda n: busy(n)]), max_ticks=6)
    assert r.exit == "TICK_BUDGET"


def test_no_done_while_the_transcript_is_busy(env):
    env.builder.prompt()
    env.builder.tool_use("Bash", {"command": "sleep 20"})
    env.write()
    env.marker.write_text("{}")
    r = run(env, FakeBackend(), max_ticks=6)
    assert r.exit == "TICK_BUDGET" and r.state == "BUSY_TOOL"


def test_done_is_not_called_on_a_single_idle_observation(env):
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    clock = Clock(START)

    def new_prompt():           # between tick 1 and 2 the CLI starts another turn
        env.builder.prompt("more")
        env.write()
    clock.actions[1] = [new_prompt]
    r = run(env, FakeBackend(), clock=clock, max_ticks=4)
    assert r.exit == "TICK_BUDGET" and r.state == "BUSY_GENERATING"


def test_marker_must_be_exact_not_a_glob(env):
    cfg = env.cfg()
    cfg.marker = env.marker.parent / "*.json"
    with pytest.raises(RefusedInput):
        P.poll(cfg, FakeBackend(), clock=Clock(START), sleep=lambda s: None)
    assert not env.state_file.exists()


# ------------------------------------------------------------------ GATE

def test_gate_with_question(env):
    env.builder.prompt()
    env.builder.tool_use("AskUserQuestion", ASK_INPUT)
    env.write()
    r = run(env, FakeBackend())
    assert (r.exit, r.code, r.question, r.reason) == ("GATE", 4, "Which colour?", "ask_user_question")


def test_answered_gate_is_reported_again_only_while_its_dialog_stays(env):
    env.builder.prompt()
    env.builder.tool_use("AskUserQuestion", {"questions": [{"question": "Which greeting style?", "options": [
        {"label": "Formal"}, {"label": "Casual"}]}]})
    env.write()
    assert run(env, FakeBackend([ASK_SCREEN])).exit == "GATE"
    # the answer has not reached the transcript yet on the next call's first ticks
    r = run(env, FakeBackend([ASK_SCREEN]), max_ticks=3)
    assert r.exit == "TICK_BUDGET"
    r = run(env, FakeBackend([ASK_SCREEN]), max_ticks=30)
    assert r.exit == "GATE"            # the dialog still open after GATE_REPEAT_S: the answer did not take


def test_permission_gate_needs_a_live_cli_pid(env, tmp_path):
    env.builder.prompt()
    env.builder.tool_use("Bash", {"command": "rm -rf x"})
    env.write()
    (env.config / "sessions").mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for pid in (os.getpid(), dead.pid):
        (env.config / "sessions" / f"{pid}.json").write_text(json.dumps(
            {"pid": pid, "sessionId": "other" if pid == dead.pid else SID, "status": "waiting",
             "waitingFor": "permission prompt"}))
    r = run(env, FakeBackend(pid=dead.pid), max_ticks=3)
    assert r.exit == "TICK_BUDGET" and r.state == "BUSY_TOOL"      # stale file of a dead pid is ignored
    env.state_file.unlink()
    r = run(env, FakeBackend(pid=os.getpid()))
    assert r.exit == "GATE" and r.question == "Permission for Bash: rm -rf x"


# ------------------------------------------------------------------ STALL

def test_stall_when_nothing_moves(env):
    env.builder.prompt()
    env.builder.tool_use("Bash", {"command": "sleep 999"})
    env.write()
    clock = Clock(START)
    r = run(env, FakeBackend([lambda n: busy(n, glyph="✽✢✳"[n % 3])]), clock=clock, stall_limit_s=30)
    assert (r.exit, r.code, r.state) == ("STALL", 2, "BUSY_TOOL")
    assert r.reason.startswith("no progress for 30s")
    assert 30 <= r.since_change_s <= 31 and clock.sleeps == 60       # no real sleeping


def test_transcript_growth_is_progress(env):
    env.builder.prompt()
    tid = env.builder.tool_use("Bash", {"command": "x"})
    env.write()
    clock = Clock(START)
    for n in range(10, 200, 10):
        clock.actions[n] = [lambda: (env.builder.tool_result(env.builder.tool_use("Bash"), "o"), env.write())]
    r = run(env, FakeBackend([busy(5)]), clock=clock, stall_limit_s=10, max_ticks=150)
    assert r.exit == "TICK_BUDGET"
    assert tid


def test_screen_change_is_progress_but_masked_parts_are_not(env):
    clock = Clock(START)
    frames = [f"{IDLE}\nline {n // 5}" for n in range(400)]       # real output changes every 5 ticks
    r = run(env, FakeBackend([lambda n: frames[n]]), clock=clock, stall_limit_s=10, max_ticks=100)
    assert r.exit == "TICK_BUDGET"
    env.state_file.unlink()
    r = run(env, FakeBackend([lambda n: busy(n, verb=["Zigzagging", "Baking"][n % 2])]), stall_limit_s=10)
    assert r.exit == "STALL"


@pytest.mark.parametrize("kwargs", [{"exists": False}, {"alive": False}])
def test_gone_session_or_dead_pane_is_stall_session_gone_at_once(env, kwargs):
    env.builder.prompt()
    env.write()
    r = run(env, FakeBackend(**kwargs))
    assert (r.exit, r.code, r.reason, r.ticks) == ("STALL", 2, "session_gone", 1)


def test_killed_cli_freezes_busy_and_stalls_by_session_gone(env):
    env.builder.prompt()          # SIGKILL mid-stream: the file ends at the prompt
    env.write()
    r = run(env, FakeBackend(alive=False))
    assert r.reason == "session_gone" and r.state in (None, "BUSY_GENERATING")


# ------------------------------------------------------------------ HARD_CAP, TICK_BUDGET, BLOCKED

def test_hard_cap_and_its_warning_once_across_calls(env):
    clock = Clock(START)
    cfg = env.cfg(hard_cap_s=100, stall_limit_s=1000)
    cfg.max_ticks = 170
    warns = []
    frames = [lambda n: f"{IDLE}\n{n}"]
    r1 = P.poll(cfg, FakeBackend(frames), clock=clock, sleep=clock.sleep, on_tick=lambda d: warns.append(d))
    assert r1.exit == "TICK_BUDGET" and any("WARN: HARD_CAP 80%" in w for w in r1.warnings)
    cfg.max_ticks = None
    r2 = P.poll(cfg, FakeBackend(frames), clock=clock, sleep=clock.sleep, on_tick=lambda d: warns.append(d))
    assert (r2.exit, r2.code) == ("HARD_CAP", 1) and r2.warnings == []
    assert sum(1 for d in warns if "warn" in d) == 1
    assert 100 <= r2.elapsed_s <= 101


def test_tick_budget_then_same_state_file_continues_the_clocks(env):
    env.builder.prompt()
    env.builder.tool_use("Bash")
    env.write()
    clock = Clock(START)
    r1 = run(env, FakeBackend([busy(3)]), clock=clock, max_ticks=20, stall_limit_s=30)
    assert r1.exit == "TICK_BUDGET" and r1.ticks == 20
    first = read_json(env.state_file, SCHEMA)
    r2 = run(env, FakeBackend([busy(3)]), clock=clock, stall_limit_s=30)
    doc = read_json(env.state_file, SCHEMA)
    assert r2.exit == "STALL" and doc["started_at"] == first["started_at"] and doc["calls"] == 2
    assert r2.ticks == 62 and [e["exit"] for e in doc["exits"]] == ["TICK_BUDGET", "STALL"]


def test_blocked_when_tmux_is_missing(env):
    r = run(env, FakeBackend(blocked=True))
    assert (r.exit, r.code) == ("BLOCKED", 3)


# ------------------------------------------------------------------ state file

def test_state_file_of_another_session_is_refused_and_untouched(env):
    run(env, FakeBackend(), max_ticks=1)
    before = env.state_file.read_bytes()
    cfg = env.cfg()
    cfg.session = "lt-20261130T120000-ab12-other"
    with pytest.raises(RefusedInput):
        P.poll(cfg, FakeBackend(), clock=Clock(START), sleep=lambda s: None)
    assert env.state_file.read_bytes() == before


def test_corrupt_state_file_is_refused(env):
    from live_trial.errors import LiveTrialError
    for text in ('{"version": 1}', "{not json"):
        env.state_file.write_text(text)
        with pytest.raises(LiveTrialError) as info:
            run(env, FakeBackend(), max_ticks=1)
        assert info.value.exit_code == 2 and env.state_file.read_text() == text


def test_state_survives_sigkill_of_the_poller(env):
    env.builder.prompt()
    env.builder.tool_use("Bash", {"command": "sleep 999"})
    env.write()
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(os.getcwd())!r})
        from live_trial.trial import poll as P
        from live_trial.trial.poll_state import PollConfig
        from live_trial.policy import load_policy
        from tests.unit.fakes import FakeBackend
        pol = load_policy({{}}).with_overrides(stall_limit_s=3600, hard_cap_s=7200, poll_interval_s=0.02)
        cfg = PollConfig(marker={str(env.marker)!r}, session={SESSION!r}, session_id={SID!r}, cwd={str(env.cwd)!r},
                           config_dir={str(env.config)!r}, state_file={str(env.state_file)!r}, policy=pol)
        P.poll(cfg, FakeBackend([{busy(4)!r}]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while time.time() < deadline:
        if env.state_file.exists() and read_json(env.state_file, SCHEMA)["ticks"] >= 5:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    doc = read_json(env.state_file, SCHEMA)          # valid after SIGKILL: every write is atomic
    assert doc["ticks"] >= 5 and doc["exits"] == []
    started = epoch_of(doc["started_at"])
    clock = Clock(start=epoch_of(doc["last_change_at"]) + 31)
    r = P.poll(env.cfg(stall_limit_s=30), FakeBackend([busy(4)]), clock=clock, sleep=clock.sleep)
    after = read_json(env.state_file, SCHEMA)
    assert r.exit == "STALL" and r.ticks == doc["ticks"] + 1              # the STALL clock kept running
    assert epoch_of(after["started_at"]) == started and after["calls"] == 2


def test_state_file_is_schema_valid_every_tick(env):
    from live_trial.jsonfile import schema_errors
    env.builder.turn()
    env.write()
    seen = []
    clock = Clock(START)
    cfg = env.cfg()
    cfg.max_ticks = 3
    P.poll(cfg, FakeBackend(), clock=clock, sleep=clock.sleep,
           on_tick=lambda d: seen.append(schema_errors(json.loads(env.state_file.read_text()), SCHEMA)))
    assert seen and all(errs == [] for errs in seen)


# ------------------------------------------------------------------ before the transcript exists

def test_screen_fallback_before_the_transcript_exists(env):
    env.marker.write_text("{}")
    clock = Clock(START)
    r = run(env, FakeBackend([lambda n: busy(n)]), clock=clock, max_ticks=3)
    assert r.state == "BUSY_GENERATING"
    r = run(env, FakeBackend(), clock=clock, max_ticks=5)
    assert r.exit == "TICK_BUDGET" and r.state == NO_TRANSCRIPT        # never DONE without the transcript

    def appear():
        env.builder.turn()
        env.write()
    clock.actions[clock.sleeps + 1] = [appear]
    r = run(env, FakeBackend(), clock=clock)
    assert r.exit == "DONE"


def test_screen_only_mode_without_session_id(env):
    env.marker.write_text("{}")
    cfg = env.cfg()
    cfg.session_id = None
    clock = Clock(START)
    r = P.poll(cfg, FakeBackend([IDLE]), clock=clock, sleep=clock.sleep)
    assert r.exit == "DONE" and r.status is None


# ------------------------------------------------------------------ CLI

def test_poll_cli_lines_and_exit_codes(env, monkeypatch, capsys):
    from live_trial.cli.main import main
    from live_trial.session import backend as backend_module

    env.builder.prompt()
    env.builder.tool_use("AskUserQuestion", ASK_INPUT)
    env.write()
    monkeypatch.setattr(backend_module, "Backend", lambda socket=None: FakeBackend())
    monkeypatch.setenv("SESSION_ID", SID)
    monkeypatch.setenv("STALL_LIMIT", "30")
    args = ["poll", "--state-file", str(env.state_file), "--cwd", str(env.cwd), "--config-dir", str(env.config),
            str(env.marker), SESSION]
    assert main(args) == 4
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("GATE: Which colour?") and out[0].endswith("state: GATE")
    env.state_file.unlink()
    env.builder.tool_result(env.builder.records[-1]["message"]["content"][0]["id"], "Red",
                            result={"answers": {"Which colour?": "Red"}})
    env.builder.text("DONE: ok")
    env.builder.turn_duration()
    env.write()
    env.marker.write_text("{}")
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit"] == "DONE" and doc["status"]["state"] == "IDLE_TURN_COMPLETE"
    capsys.readouterr()


def test_poll_cli_refusals_exit_64_never_2_which_is_stall(env, monkeypatch, capsys):
    """Exit 2 is STALL (seed 001 poll exit table); a script walking the STALL table on a typo would act wrongly."""
    from live_trial.cli.main import main
    from live_trial.session import backend as backend_module

    monkeypatch.setattr(backend_module, "Backend", lambda socket=None: FakeBackend())
    monkeypatch.setenv("SESSION_ID", SID)
    base = ["poll", "--cwd", str(env.cwd), "--config-dir", str(env.config)]
    assert main(base + ["--state-file", str(env.state_file), str(env.marker), "bad name"]) == 64
    assert not env.state_file.exists()
    assert main(base + ["--state-file", str(env.state_file), "--max-ticks", "0", str(env.marker), SESSION]) == 64
    env.state_file.write_text("{not json")
    assert main(base + ["--state-file", str(env.state_file), str(env.marker), SESSION]) == 64
    assert env.state_file.read_text() == "{not json"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("REFUSED: ") for line in err), err
    assert "not valid JSON" in err[-1] and str(env.state_file) in err[-1]


def test_poll_cli_a_first_poll_of_an_unknown_session_is_refused_not_a_stall(env, monkeypatch, capsys):
    """A typo in the session name used to read as STALL session_gone (exit 2) and create the state file."""
    from live_trial.cli.main import main
    from live_trial.session import backend as backend_module

    monkeypatch.setattr(backend_module, "Backend", lambda socket=None: FakeBackend(exists=False))
    monkeypatch.setenv("SESSION_ID", SID)
    args = ["poll", "--state-file", str(env.state_file), "--cwd", str(env.cwd), "--config-dir", str(env.config),
            str(env.marker), SESSION]
    assert main(args) == 64
    err = capsys.readouterr().err.strip()
    assert err.startswith("REFUSED: no such tmux session") and "\n" not in err
    assert not env.state_file.exists()


# ------------------------------------------------------------------ the turn cache (one long turn, many ticks)
def _turn_file(tmp_path, tools: int):
    from live_trial.transcript.builder import TranscriptBuilder

    b = TranscriptBuilder()
    b.prompt("do it")
    for _ in range(tools):
        b.tool_use("Bash", {"command": "echo hi"})
        b.tool_result(b.records[-1]["message"]["content"][0]["id"], "hi")
    path = tmp_path / "t.jsonl"
    b.write(path)
    return b, path


def test_turn_cache_parses_only_new_lines_and_classifies_like_a_fresh_read(tmp_path, monkeypatch):
    from live_trial.transcript.reader import complete_end_offset, read_tail
    from live_trial.transcript.status import classify
    from live_trial.trial import observation

    b, path = _turn_file(tmp_path, 20)
    tails = []
    real_tail = read_tail
    monkeypatch.setattr(observation, "read_tail", lambda p, **kw: tails.append(p) or real_tail(p, **kw))
    cache = TurnCache()
    recs, new = cache.records(path, complete_end_offset(path))
    assert new == 42 and len(tails) == 1
    assert classify(recs) == classify(real_tail(path).records)
    assert len(recs) < 42                     # answered tool calls before the newest message are not kept
    assert cache.records(path, complete_end_offset(path)) == (recs, 0)
    b.tool_use("Bash", {"command": "sleep 9"})
    b.write(path)
    with open(path, "a") as fh:
        fh.write('{"type": "user", "uuid": "torn')           # a line still being written is not read
    recs, new = cache.records(path, complete_end_offset(path))
    assert new == 1 and len(tails) == 1
    assert classify(recs).state == classify(real_tail(path).records).state == "BUSY_TOOL"
    b.tool_result(b.records[-1]["message"]["content"][0]["id"], "done")
    b.text("DONE: ok")
    b.turn_duration()
    b.write(path)                                              # the builder rewrites: the torn line is gone
    recs, _ = cache.records(path, complete_end_offset(path))
    assert classify(recs).state == "IDLE_TURN_COMPLETE" and len(tails) == 1


def test_turn_cache_reads_afresh_when_the_file_shrinks_or_the_cache_is_too_big(tmp_path, monkeypatch):
    from live_trial.transcript.reader import complete_end_offset, read_tail
    from live_trial.transcript.status import classify

    b, path = _turn_file(tmp_path, 20)
    cache = TurnCache()
    cache.records(path, complete_end_offset(path))
    _, small = _turn_file(tmp_path, 2)                        # the same path, now shorter: replaced
    recs, new = cache.records(small, complete_end_offset(small))
    assert new == 0 and cache.start == 0 and cache.end == complete_end_offset(small)
    assert classify(recs) == classify(read_tail(small).records)
    monkeypatch.setattr(TurnCache, "REREAD_BYTES", 10)
    b2, path = _turn_file(tmp_path, 3)
    recs, _ = cache.records(path, complete_end_offset(path))
    assert classify(recs) == classify(read_tail(path).records) and cache.start == 0


# ------------------------------------------------------------------ a gate whose record is not written yet
ASK_SCREEN = (f" ▐▛███▜▌   Claude Code v2.1.197\n\n● Skill(trialkit:choose)\n  ⎿  Successfully loaded skill\n"
              f"{'─' * 40}\n ☐ Style\n\nWhich greeting style?\n\n❯ 1. Formal\n     Good day to you.\n  2. Casual\n"
              f"     Hey there!\n  3. Type something.\n{'─' * 40}\n  4. Chat about this\n\n"
              "Enter to select · ↑/↓ to navigate · Esc to cancel\n")


def test_a_gate_dialog_on_screen_is_gate_before_its_record_is_written(env):
    """Seen on 2.1.197 under load: the AskUserQuestion dialog was on screen while the transcript still ended at the
    Skill call's records (no tool_use for the question). That was read BUSY_GENERATING and, after the STALL limit
    doubled, "the session hangs": a question the skill asked ended as a FAIL of the wrong kind."""
    env.builder.prompt()
    tid = env.builder.tool_use("Skill", {"skill": "trialkit:choose"})
    env.builder.tool_result(tid, "Launching skill: trialkit:choose")
    env.write()
    r = run(env, FakeBackend([ASK_SCREEN]))
    assert (r.exit, r.reason, r.question) == ("GATE", "ask_user_question", "Which greeting style?"), r
    assert r.status.options == ["Formal", "Casual"]         # the CLI's own "Type something." etc. are not options
    # the next call (after an answer) does not report the same dialog again at once
    r = run(env, FakeBackend([ASK_SCREEN]), max_ticks=3)
    assert r.exit == "TICK_BUDGET"
    # ... nor once the record arrives while the dialog is still the same one
    env.builder.tool_use("AskUserQuestion", {"questions": [{"question": "Which greeting style?", "options": [
        {"label": "Formal"}, {"label": "Casual"}]}]})
    env.write()
    r = run(env, FakeBackend([ASK_SCREEN]), max_ticks=3)
    assert r.exit == "TICK_BUDGET"
    # ... nor, once answered (the dialog gone), while its tool_result is late: a second answer would be spent on it
    r = run(env, FakeBackend(), max_ticks=30)
    assert r.exit == "TICK_BUDGET"


def test_the_live_cli_status_waiting_is_gate_without_its_record(env):
    env.builder.prompt()
    tid = env.builder.tool_use("Skill", {"skill": "trialkit:choose"})
    env.builder.tool_result(tid, "Launching skill: trialkit:choose")
    env.write()
    (env.config / "sessions").mkdir(parents=True)
    (env.config / "sessions" / f"{os.getpid()}.json").write_text(json.dumps(
        {"pid": os.getpid(), "sessionId": SID, "status": "waiting", "waitingFor": "permission prompt"}))
    r = run(env, FakeBackend(pid=os.getpid()))
    assert r.exit == "GATE" and "not in the transcript yet" in r.status.reason, r
# ------------------------------------------------------------------ background work, moved transcripts

def _bg_waiting(env) -> str:
    """A turn that ended to wait for a background shell (its output file is created)."""
    env.builder.prompt()
    task = env.builder.background_shell("for i in 1 2 3; do echo t; sleep 9; done", "Tick")
    env.builder.text("Waiting for the background job.")
    env.builder.turn_duration()
    env.write()
    out = Path(env.builder.output_path(task))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    return str(out)


def test_background_shell_is_busy_its_output_growth_is_progress_and_silence_is_a_stall(env, tmp_path):
    env.builder.cwd = str(tmp_path / "bgtmp")          # where output_path() puts the task's output
    out = Path(_bg_waiting(env))
    clock = Clock(START)
    for tick in range(1, 20):                          # the job prints a line each tick for 19 ticks (9.5 s)
        clock.actions[tick] = [lambda: out.open("a").write("tick\n")]
    r = run(env, FakeBackend(), clock=clock, max_ticks=24, stall_limit_s=3)
    assert (r.exit, r.state) == ("TICK_BUDGET", "BUSY_TOOL"), r.reason      # 12 s, never a STALL, never DONE
    assert r.status.background["kind"] == "shell" and "1 background shell still running" in r.status.reason
    doc = read_json(env.state_file, SCHEMA)
    assert doc["background_outputs"] == {str(out): out.stat().st_size}
    r = run(env, FakeBackend(), clock=clock, max_ticks=40, stall_limit_s=3)    # the job went silent
    assert (r.exit, r.state) == ("STALL", "BUSY_TOOL")


def test_no_done_while_background_work_runs_even_with_the_marker(env, tmp_path):
    env.builder.cwd = str(tmp_path / "bgtmp")
    _bg_waiting(env)
    env.marker.write_text("{}")
    r = run(env, FakeBackend(), max_ticks=6)
    assert (r.exit, r.state) == ("TICK_BUDGET", "BUSY_TOOL")


def _cli_status_file(env, pid: int, session_id: str, status: str = "idle") -> None:
    folder = env.config / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{pid}.json").write_text(json.dumps({"pid": pid, "sessionId": session_id, "status": status}))


def test_a_moved_transcript_is_followed_and_recorded(env, transcript_builder):
    env.builder.prompt("Run the task.")
    env.builder.text("Which folder should I use?")
    env.builder.turn_duration()
    env.write()
    new_id = "22222222-3333-4444-8555-666666666666"
    new = transcript_builder(session_id=new_id, start=env.builder.now)
    new.mode()
    new.slash_command("/clear", "")
    new_path = env.tpath().with_name(f"{new_id}.jsonl")
    clock = Clock(START)
    clock.actions[2] = [lambda: (new.write(new_path), _cli_status_file(env, os.getpid(), new_id))]
    _cli_status_file(env, os.getpid(), SID)
    r = run(env, FakeBackend(pid=os.getpid()), clock=clock, max_ticks=6)
    assert (r.exit, r.state, r.transcript_path) == ("TICK_BUDGET", "IDLE_TURN_COMPLETE", str(new_path))
    assert r.status.last_assistant_text == "Which folder should I use?"      # the turn the new file continues
    assert [(m["from_session_id"], m["to_session_id"]) for m in r.moves] == [(SID, new_id)]
    r = run(env, FakeBackend(pid=os.getpid()), max_ticks=2)                  # a new call keeps following it
    assert (r.transcript_path, r.state, len(r.moves)) == (str(new_path), "IDLE_TURN_COMPLETE", 1)
    assert r.status.last_assistant_text == "Which folder should I use?"


def test_a_move_that_cannot_be_followed_stalls_as_transcript_moved(env):
    env.builder.turn()
    env.write()
    _cli_status_file(env, os.getpid(), "33333333-4444-4555-8666-777777777777")
    r = run(env, FakeBackend(pid=os.getpid()), stall_limit_s=3)
    assert r.exit == "STALL" and r.reason.startswith("transcript_moved: the CLI continues as session 33333333")


def test_a_state_file_written_before_moves_existed_is_read(env):
    env.builder.turn()
    env.write()
    run(env, FakeBackend(), max_ticks=1)
    doc = json.loads(env.state_file.read_text())
    for key in ("moves", "move_pending", "background_outputs"):
        del doc[key]
    env.state_file.write_text(json.dumps(doc))
    assert run(env, FakeBackend(), max_ticks=1).exit == "TICK_BUDGET"


# ------------------------------------------------------------------ DONE on the CLI's own end-of-turn signal, waking on writes
def test_done_at_once_when_the_cli_wrote_turn_duration_and_says_idle(env):
    """turn_duration is the CLI's last record of a turn and its live status is idle by then (2.1.197): the first tick
    that sees both (and the marker) is DONE; a second timed observation would only add poll_interval_s."""
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    _cli_status_file(env, os.getpid(), SID, "idle")
    ticks = []
    clock = Clock(START)
    r = P.poll(env.cfg(), FakeBackend(pid=os.getpid()), clock=clock, sleep=clock.sleep, on_tick=ticks.append)
    assert (r.exit, r.ticks, clock.sleeps) == ("DONE", 1, 0)
    assert r.status.ended_by == "turn_duration" and r.status.session_status == "idle"


@pytest.mark.parametrize("cli_status", ["busy", "shell", None])
def test_no_done_at_once_unless_the_live_status_is_idle(env, cli_status):
    """busy after turn_duration: a queued prompt or Stop hook continuation is on its way; shell: a background shell
    runs (BUSY_TOOL). Without a live status the timed confirmation rule holds (done_stable_ticks)."""
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    if cli_status:
        _cli_status_file(env, os.getpid(), SID, cli_status)
    r = run(env, FakeBackend(pid=os.getpid()), max_ticks=1)
    assert r.exit == "TICK_BUDGET"


def test_no_done_at_once_for_an_end_turn_record_without_turn_duration(env):
    """The CLI says idle about 0.1 s before it writes turn_duration: the final assistant record alone, even with an
    idle status, needs the confirming tick."""
    env.builder.prompt()
    env.builder.text("DONE: ok")
    env.write()
    env.marker.write_text("{}")
    _cli_status_file(env, os.getpid(), SID, "idle")
    r = run(env, FakeBackend(pid=os.getpid()), max_ticks=1)
    assert (r.exit, r.state, r.status.ended_by) == ("TICK_BUDGET", "IDLE_TURN_COMPLETE", "assistant")


def test_a_screen_still_drawing_the_spinner_is_looked_at_again_soon(env):
    env.builder.turn()
    env.write()
    env.marker.write_text("{}")
    _cli_status_file(env, os.getpid(), SID, "idle")
    slept = []
    clock = Clock(START)

    def sleep(s):
        slept.append(s)
        clock.sleep(s)
    r = P.poll(env.cfg(), FakeBackend([busy(1), IDLE], pid=os.getpid()), clock=clock, sleep=sleep)
    assert r.exit == "DONE" and r.ticks == 2 and slept == [QUICK_RECHECK_S]


def test_a_write_to_the_transcript_wakes_poll_before_its_timed_tick(env):
    """With a 30 s tick, only the file event can explain a DONE right after the turn_duration write."""
    import threading

    env.builder.prompt()
    env.builder.text("DONE: ok")
    env.write()
    env.marker.write_text("{}")
    _cli_status_file(env, os.getpid(), SID, "idle")
    seen = threading.Event()

    def end_the_turn():
        seen.wait(30)
        env.append(env.builder.turn_duration)
    writer = threading.Thread(target=end_the_turn)
    writer.start()
    cfg = env.cfg(poll_interval_s=30, stall_limit_s=300)
    started = time.monotonic()
    r = P.poll(cfg, FakeBackend(pid=os.getpid()), on_tick=lambda d: seen.set(), watch=True)
    writer.join()
    assert (r.exit, r.ticks) == ("DONE", 2) and time.monotonic() - started < 30


def test_file_wake_counts_only_the_watched_files(tmp_path):
    """poll's own state file, another session's status file or another transcript in the same folder never wake it."""
    from live_trial.trial import wake

    watched, other = tmp_path / "t.jsonl", tmp_path / "poll-state.json"
    waker = wake.FileWake()
    assert waker.available
    waker.watch([watched, tmp_path / "not-yet" / "x.json", None])
    other.write_text("{}")
    assert waker.wait(0.2) is False
    with open(watched, "a") as fh:
        fh.write("{}\n")
    assert waker.wait(5) is True
    waker.close()
    slept: list[float] = []
    closed = wake.FileWake(sleep=slept.append)
    closed.close()                          # as on a system without inotify: the whole interval is slept
    assert closed.wait(0.25) is False and slept == [0.25]


def test_quick_wakes_in_the_clis_early_idle_never_make_done_before_the_turn_ends(env):
    """2.1.197 writes its status ``idle`` about 0.1 s before the turn's final assistant record and turn_duration
    (references/transcript-jsonl.md): then the transcript still ends at a tool_result and the classifier reads the
    idle CLI as a turn cancelled before any response. File events wake poll many times in that window; the fallback
    DONE (no turn_duration yet) must still wait for its stable ticks' whole span, so DONE comes only with the real
    end of the turn, and never as an interruption."""
    import threading

    env.builder.prompt()
    tid = env.builder.tool_use("Write", {"file_path": str(env.marker), "content": "{}"})
    env.builder.tool_result(tid, "File created successfully")
    env.write()
    env.marker.write_text("{}")
    _cli_status_file(env, os.getpid(), SID, "busy")
    ticked = threading.Event()

    def the_cli():
        ticked.wait(30)
        for _ in range(6):                 # the early idle, rewritten: each write wakes poll
            _cli_status_file(env, os.getpid(), SID, "idle")
            time.sleep(0.03)
        time.sleep(0.2)
        env.builder.text("DONE: ok")
        env.builder.turn_duration()
        env.write()
    cli = threading.Thread(target=the_cli)
    cli.start()
    r = P.poll(env.cfg(poll_interval_s=0.5, stall_limit_s=300), FakeBackend(pid=os.getpid()),
               on_tick=lambda d: ticked.set(), watch=True)
    cli.join()
    assert r.exit == "DONE" and "interrupted" not in r.reason, r.reason
    status = read_json(env.state_file, SCHEMA)
    assert status["transcript_offset"] == env.tpath().stat().st_size       # it saw the turn's last record
