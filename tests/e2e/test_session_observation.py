"""``run`` on the real CLI when the session does more than one turn: background work, /compact and /clear typed by a
person mid-trial, a plugin the CLI drops, a Skill call by a bare name (references/transcript-jsonl.md).

Each test starts ``python -m live_trial run`` as a user would and checks the verdict it wrote and what it recorded.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from live_trial.session import screen
from live_trial.session.backend import Backend
from live_trial.transcript.records import is_task_notification, prompt_text, record_time
from tests.e2e.run_support import (
    PLUGINS,
    SCENARIOS,
    final_json,
    no_leftovers,
    popen_cmd,
    records,
    run_cmd,
    tmux_sessions,
    verdict_doc,
    wait_for_state,
    workdirs,
)
from tests.e2e.waiting import screen_of, wait_for

pytestmark = pytest.mark.e2e

STALL_S = 4
FAST = ["--stall-limit", str(STALL_S), "--hard-cap", "120"]


def _log(workdir: Path) -> list[dict]:
    return [json.loads(x) for x in (workdir / "trial-log.jsonl").read_text().splitlines()]


def _background_then_woken(recs: list[dict]) -> float:
    """Seconds from the background task's start (its tool_result) to the task notification that woke the model;
    asserts the marker was written after that wake-up."""
    started = next(r for r in recs if isinstance(r.get("toolUseResult"), dict)
                   and (r["toolUseResult"].get("backgroundTaskId") or r["toolUseResult"].get("status") == "async_launched"))
    woken = next(r for r in recs if is_task_notification(r) and r.get("isSidechain") is not True)
    writes = [r for r in recs if r.get("type") == "assistant" and r.get("isSidechain") is not True
              and any(b.get("type") == "tool_use" and b.get("name") == "Write" for b in r["message"]["content"])]
    assert writes and recs.index(writes[0]) > recs.index(woken), "the marker was written before the wake-up"
    return record_time(woken) - record_time(started)


@pytest.mark.budget(26)
@pytest.mark.parametrize("scenario,kind", [("mark-bg-shell.yaml", "shell"), ("mark-bg-agent.yaml", "agent")])
def test_background_work_outliving_the_stall_limit_passes_without_a_nudge(tmp_path, scenario, kind):
    """Work the session started and still runs is not a STALL (ARCHITECTURE invariant 8): the turn ends to wait for a
    background shell / subagent that runs three times the STALL limit; the CLI wakes the model when it ends."""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIOS / scenario),
                   *FAST)
    result = final_json(proc)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    doc = verdict_doc(result)
    assert (doc["overall"]["verdict"], doc["nudge_count"], doc["poll_exit"], doc["stall_row"]) == ("PASS", 0, "DONE", None)
    wd = workdirs(tmp_path)[0]
    assert not [x for x in _log(wd) if x["step"] == "stall"], "the harness treated the waiting session as stalled"
    assert not list(wd.glob("nudge-*.md"))
    waited = _background_then_woken(records(wd / "transcript.jsonl"))
    assert waited > 2 * STALL_S, f"the background {kind} ran only {waited:.1f}s: it did not outlive the STALL limit"
    no_leftovers(wd)


@pytest.mark.budget(24)
def test_a_silent_background_shell_gets_the_longer_wait_once_then_is_a_hang(tmp_path):
    """Seed 001 STALL table row 2, as for a silent foreground tool: the limit doubled once, then hang; the decision
    names the background shell."""
    scen = yaml.safe_load((SCENARIOS / "mark-bg-shell.yaml").read_text())
    start = next(r for r in scen["rules"] if r["id"] == "start-background-build")
    start["reply"]["content"][0]["tool_use"]["input"]["command"] = "sleep 120"
    path = tmp_path / "silent.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(path),
                   "--stall-limit", "3", "--hard-cap", "120")
    doc = verdict_doc(final_json(proc))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert (doc["stop_reason"], doc["stall_row"], doc["nudge_count"]) == ("hang", 2, 0)
    stalls = [x for x in _log(workdirs(tmp_path)[0]) if x["step"] == "stall"]
    assert [x["decision"] for x in stalls] == ["extend", "hang"]
    assert all(x["state"] == "BUSY_TOOL" and "1 background shell still running" in x["reason"] for x in stalls), stalls
    no_leftovers(workdirs(tmp_path)[0])


def _type_command(session: str, command: str, tmp_path: Path) -> None:
    """Type a slash command into the session as a person would (paste, then Enter once it shows). ``send_file`` does
    not fit: it confirms a prompt record, and a slash command writes none."""
    backend = Backend()
    text = tmp_path / f"{command.strip('/')}.txt"
    text.write_text(command)
    backend.paste_file(session, text)
    wait_for(lambda: (screen.parked_input(backend.capture(session)) or "").startswith(command),
             what=f"{command} in the input box", seen=screen_of(backend, session))
    backend.send_keys(session, "Enter")


def _wait_question(state: dict) -> None:
    backend = Backend()
    wait_for(lambda: "Shall I write the completion marker now?" in backend.capture(state["session"])
             and not screen.is_busy(backend.capture(state["session"])),
             what="the turn to end with the question", seen=screen_of(backend, state["session"]))


def _run_and_type(tmp_path: Path, scenario: Path, command: str) -> tuple[int, str, str, dict]:
    """Run a trial whose turn ends with a question; type ``command`` while the harness waits to nudge (STALL limit
    8 s); return the exit code, stdout, stderr and the trial state seen while polling."""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(scenario),
                     "--stall-limit", "8", "--hard-cap", "120")
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        _wait_question(state)
        _type_command(state["session"], command, tmp_path)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err, state


@pytest.mark.budget(32)
def test_compact_while_waiting_to_nudge_is_followed_by_the_nudge_and_noted(tmp_path):
    """/compact writes compaction and command records into the same transcript: none is a prompt, so the turn that
    ended with a question is still the newest turn, the nudge follows, and the verdict says the conversation was
    compacted."""
    code, out, err, state = _run_and_type(tmp_path, SCENARIOS / "mark-compact-nudge.yaml", "/compact")
    assert code == 6, out[-2000:] + err[-3000:]
    doc = verdict_doc(json.loads(out.strip().splitlines()[-1]))
    assert (doc["launch"], doc["completion"], doc["nudge_count"], doc["overall"]["verdict"]) == ("PASS", "PASS", 1, "DEGRADED")
    assert any("compacted 1 time(s)" in n for n in doc["notes"]), doc["notes"]
    wd = workdirs(tmp_path)[0]
    nudges = [x for x in _log(wd) if x["step"] == "stall" and x["decision"] == "nudge"]
    assert len(nudges) == 1 and nudges[0]["state"] == "IDLE_TURN_COMPLETE"
    recs = records(wd / "transcript.jsonl")
    assert [r for r in recs if r.get("subtype") == "compact_boundary"], "no compaction happened"
    no_leftovers(wd)


@pytest.mark.budget(32)
def test_clear_while_waiting_to_nudge_is_followed_into_the_new_transcript(tmp_path):
    """/clear continues the session under a new id in a new file: poll follows it, the nudge is confirmed in the new
    file, both files are kept, and the move is in trial-log.jsonl and the verdict's notes (never "lost")."""
    scen = yaml.safe_load((SCENARIOS / "mark-compact-nudge.yaml").read_text())
    eval_root = tmp_path / "eval"
    # after /clear the model no longer knows the marker's path: the scripted model writes it where a trial keeps it
    write = next(r for r in scen["rules"] if r["id"] == "nudged-write-marker")
    write["reply"]["content"] = [{"tool_use": {"name": "Bash", "input": {
        "command": f"for d in {eval_root}/trialkit/mark/live-trial/*/out; do "
                   "printf '{\"status\": \"ok\"}\\n' > \"$d/status.json\"; done",
        "description": "Write the completion marker"}}}]
    scen["rules"] = [r for r in scen["rules"] if r["id"] != "summary"]
    path = tmp_path / "clear.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    code, out, err, state = _run_and_type(tmp_path, path, "/clear")
    assert code == 6, out[-2000:] + err[-3000:]
    doc = verdict_doc(json.loads(out.strip().splitlines()[-1]))
    assert (doc["launch"], doc["completion"], doc["nudge_count"], doc["overall"]["verdict"]) == ("PASS", "PASS", 1, "DEGRADED")
    assert doc["stop_reason"] != "lost"
    assert any("continued in a new transcript" in n for n in doc["notes"]), doc["notes"]
    wd = workdirs(tmp_path)[0]
    moved = [x for x in _log(wd) if x["step"] == "poll" and x["decision"] == "transcript_moved"]
    assert len(moved) == 1 and moved[0]["from_session_id"] == state["session_id"]
    new_id = moved[0]["to_session_id"]
    assert (wd / "moved-from" / f"{state['session_id']}.jsonl").is_file()
    recs = records(wd / "transcript.jsonl")
    assert {r.get("sessionId") for r in recs if r.get("sessionId")} == {new_id}
    nudge = (wd / "nudge-1.md").read_text().strip()
    assert any(r.get("type") == "user" and prompt_text(r) == nudge for r in recs if isinstance(
        r.get("message"), dict) and isinstance(r["message"].get("content"), str)), "the nudge is not in the new file"
    no_leftovers(wd)


def _plugin(root: Path, name: str, manifest: dict, frontmatter: str = "") -> Path:
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, **manifest}))
    (folder / "skills" / "mark").mkdir(parents=True)
    (folder / "skills" / "mark" / "SKILL.md").write_text(
        f"---\nname: mark\ndescription: Write the completion marker ({name})\nallowed-tools: Write\n{frontmatter}---\n"
        "# Mark\n\nWrite the completion marker named in the task, then answer DONE.\n")
    return folder


@pytest.mark.budget(8)
def test_a_manifest_the_cli_rejects_fails_before_boot_as_plugin_not_loaded(tmp_path):
    """`"version": 1`: the CLI would drop the plugin silently; its own validator names the field, so the trial stops
    before any session starts (FAIL, plugin_not_loaded), quoting the CLI's line and the file."""
    plugins = tmp_path / "plugins"
    folder = _plugin(plugins, "badver", {"version": 1})
    started = time.monotonic()
    proc = run_cmd(tmp_path, "badver:mark", "--plugins-root", str(plugins), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), *FAST)
    took = time.monotonic() - started
    doc = verdict_doc(final_json(proc))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert (doc["stop_reason"], doc["launch"], doc["overall"]["verdict"]) == ("plugin_not_loaded", "FAIL", "FAIL")
    note = next(n for n in doc["notes"] if "plugin validate" in n)
    assert "version: Invalid input: expected string, received number" in note
    assert str(folder / ".claude-plugin" / "plugin.json") in note
    wd = workdirs(tmp_path)[0]
    assert not [x for x in _log(wd) if x["step"] == "boot" and x["decision"] == "READY"], "a session was started"
    assert not (wd / "transcript.jsonl").exists()
    print(f"plugin_not_loaded by the validator: run took {took:.1f}s")


@pytest.mark.budget(10)
def test_a_plugin_the_cli_drops_at_start_stops_the_trial_at_the_skill_listing(tmp_path):
    """A dependency of a dependency is not loaded (a trial loads direct dependencies only): the validator passes, the
    CLI drops both plugins, the first prompt's skill listing lacks the target, and the trial stops at once."""
    plugins = tmp_path / "plugins"
    _plugin(plugins, "chaina", {"version": "1.0.0", "dependencies": ["chainb"]})
    _plugin(plugins, "chainb", {"version": "1.0.0", "dependencies": ["chainc"]})
    started = time.monotonic()
    proc = run_cmd(tmp_path, "chaina:mark", "--plugins-root", str(plugins), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), "--stall-limit", "300", "--hard-cap", "600")
    took = time.monotonic() - started
    doc = verdict_doc(final_json(proc))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert (doc["stop_reason"], doc["launch"], doc["overall"]["verdict"]) == ("plugin_not_loaded", "FAIL", "FAIL")
    assert any("skill listing does not name it" in n and "chainb needs chainc" in n for n in doc["notes"]), doc["notes"]
    wd = workdirs(tmp_path)[0]
    log = _log(wd)
    assert [x["decision"] for x in log if x["step"] == "loading"] == ["not_listed"]
    assert not [x for x in log if x["step"] in ("poll", "stall")], "the trial waited instead of stopping at once"
    no_leftovers(wd)
    print(f"plugin_not_loaded at the skill listing: run took {took:.1f}s (STALL limit 300s)")


@pytest.mark.budget(10)
def test_a_bare_name_skill_call_the_cli_resolved_to_the_target_is_a_launch(tmp_path):
    """`Skill({skill: "mark"})`: the CLI resolves the bare name and attributes the next assistant record to
    trialkit:mark; that is the target's launch, not "no Skill call to the target"."""
    scen = yaml.safe_load((SCENARIOS / "mark-happy.yaml").read_text())
    call = next(r for r in scen["rules"] if r["id"] == "skill-call")
    call["reply"]["content"][1]["tool_use"]["input"]["skill"] = "mark"
    path = tmp_path / "bare.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal", str(path), *FAST)
    doc = verdict_doc(final_json(proc))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert (doc["launch"], doc["overall"]["verdict"]) == ("PASS", "PASS")
    recs = records(workdirs(tmp_path)[0] / "transcript.jsonl")
    uses = [b["input"]["skill"] for r in recs if r.get("type") == "assistant" for b in r["message"]["content"]
            if b.get("type") == "tool_use" and b.get("name") == "Skill"]
    assert uses == ["mark"]
    assert "trialkit:mark" in {r.get("attributionSkill") for r in recs}


@pytest.mark.budget(8)
def test_boot_refuses_a_plugin_the_cli_rejects_before_starting_anything(tmp_path):
    """`boot --target-skill`: BOOT_FAIL (exit 2) quoting the validator, and no tmux session is created."""
    import subprocess
    import sys

    plugins = tmp_path / "plugins"
    _plugin(plugins, "badkw", {"version": "1.0.0", "keywords": "x"})
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    before = set(tmux_sessions())
    session = "lt-20261201T000000-abcd-badkw"
    proc = subprocess.run([sys.executable, "-m", "live_trial", "boot", session, str(cwd), "--target-skill", "badkw:mark",
                           "--plugins-root", str(plugins)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "IS_SANDBOX": "1"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("BOOT_FAIL:") and "keywords: Invalid input: expected array, received string" in proc.stderr
    assert set(tmux_sessions()) == before
