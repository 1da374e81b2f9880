"""A real trial, recorded once and replayed offline (README "Replaying a real trial offline").

The model's service is a stand-in (the rehearsal server serving ``live-script.yaml`` with the service's own message
ids: tests/e2e/live_support.py), reached only the way a person's environment reaches it: ``ANTHROPIC_BASE_URL`` and a
key. ``run --record`` puts its recording proxy in front of it and writes the tape; ``run --replay`` plays the tape as a
rehearsal, with no key and no service. ``scriptkit:count`` runs a script whose output is a tool result on the tape:
changed, the replay leaves the tape at that tool result. One recording serves the module.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from live_trial.clock import epoch_of
from live_trial.jsonfile import schema_errors
from tests.e2e.live_support import USER_KEY, first_run_config, persons_env
from tests.e2e.run_support import FAST, PLUGINS, ROOT, SCENARIOS, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e
COUNT = ["scriptkit:count"]


def _stand_in():
    from live_trial.rehearsal.server import RehearsalServer

    return RehearsalServer(SCENARIOS / "live-script.yaml", message_id_prefix="msg_").start()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """``(tmp, result, workdir, env)`` of one ``run --record`` through the stand-in, in a person's config."""
    tmp = tmp_path_factory.mktemp("recorded")
    server = _stand_in()
    try:
        config = first_run_config(tmp / "me" / ".claude", trusted=[tmp])
        env = persons_env(server, config)
        proc = run_cmd(tmp, *COUNT, "--plugins-root", str(PLUGINS), *FAST, "--record", env=env)
        out = final_json(proc)
    finally:
        server.stop()
    (wd,) = workdirs(tmp)
    return tmp, out, wd, env


def offline_env(env: dict) -> dict:
    """A CI job's environment: no key, no address of a model's service."""
    return {k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}


def replay(tmp_path: Path, tape: Path, env: dict, plugins: Path = PLUGINS, *more: str) -> tuple[dict, Path]:
    proc = run_cmd(tmp_path, *COUNT, "--plugins-root", str(plugins), *FAST, *more, "--replay", str(tape),
                   env=offline_env(env))
    (wd,) = workdirs(tmp_path)
    return final_json(proc) | {"returncode": proc.returncode}, wd


def side_effects(wd: Path) -> tuple[dict, dict[str, bytes]]:
    """``side-effects/files.json`` and the bytes of each copy the trial took."""
    root = wd / "side-effects"
    copies = {p.relative_to(root / "files").as_posix(): p.read_bytes() for p in (root / "files").rglob("*")
              if p.is_file()}
    return json.loads((root / "files.json").read_text()), copies


@pytest.mark.budget(15)
def test_a_recorded_live_trial_passes_and_no_file_on_disk_holds_its_key(recorded):
    tmp, out, wd, _ = recorded
    assert out["status"] == "PASS" and out["scenario_origin"] == "live", out
    lines = [json.loads(x) for x in (wd / "model-tape.jsonl").read_text().splitlines()]
    assert all(schema_errors(doc, "model-tape.schema.json") == [] for doc in lines)
    assert [(d["role"], d["turn"]) for d in lines if d["kind"] == "messages" and d["role"] != "side"] == [
        ("session", 1), ("session", 2), ("session", 3), ("session", 4), ("session", 5), ("evaluator", 1)]
    assert all(d["response"]["status"] == 200 for d in lines if d["kind"] == "messages")
    assert "items: 3" in json.dumps(lines[-1]["request"]) and "<workdir>" in json.dumps(lines[-1]["request"])
    # the key the CLI sent on every request: relayed, written nowhere (the tape, the workdir, the eval root)
    leaks = [str(p) for p in (tmp / "eval").rglob("*") if p.is_file()
             and (USER_KEY.encode() in p.read_bytes() or USER_KEY[-20:].encode() in p.read_bytes())]
    assert leaks == []


@pytest.mark.budget(8)
def test_its_replay_needs_no_key_and_ends_with_the_same_verdict_and_side_effects(recorded, tmp_path):
    _, out, wd, env = recorded
    got, wd2 = replay(tmp_path, wd / "model-tape.jsonl", env)
    assert (got["returncode"], got["status"], got["scenario_origin"]) == (0, "PASS", "rehearsal"), got
    assert side_effects(wd2) == side_effects(wd) and (wd2 / "cwd" / "count.txt").read_text() == "items: 3\n"
    log = [json.loads(x) for x in (wd2 / "replay-log.jsonl").read_text().splitlines()]
    assert {r["match"] for r in log if r["kind"] == "messages" and r["role"] != "side"} == {"hash"}, log
    # a replayed PASS is a rehearsal PASS: its transcript says so by itself, and plan never reuses it as live
    transcript = (wd2 / "transcript.jsonl").read_text()
    assert '"id":"msg_rehearsal_' in transcript and '"id":"msg_0' not in transcript
    verdict = json.loads((wd2 / "verdict.json").read_text())
    assert verdict["scenario_origin"] == "rehearsal" and verdict["proof"] is False
    proc = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(PLUGINS / "scriptkit"),
                           "--eval-root", str(tmp_path / "eval"), "--json"], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env=offline_env(env))
    (row,) = json.loads(proc.stdout)["skills"]
    assert row["action"] == "run" and "rehearsal verdicts are never reused" in row["reason"], row


@pytest.mark.budget(8)
def test_a_changed_script_makes_the_replay_stop_blocked_at_its_tool_result_with_the_turn_named(recorded, tmp_path):
    _, _, wd, env = recorded
    plugins = tmp_path / "plugins"
    shutil.copytree(PLUGINS / "scriptkit", plugins / "scriptkit")
    script = plugins / "scriptkit" / "skills" / "count" / "scripts" / "count.sh"
    script.write_text(script.read_text().replace("items: 3", "items: 4"))
    got, wd2 = replay(tmp_path, wd / "model-tape.jsonl", env, plugins)
    assert (got["returncode"], got["status"], got["stop_reason"]) == (3, "BLOCKED", "replay_diverged"), got
    verdict = json.loads((wd2 / "verdict.json").read_text())
    said = " ".join(verdict["notes"] + verdict["overall"]["reasons"])
    assert "turn 3 of the session" in said and "the tool_result of Bash" in said, said
    assert 'recorded "items: 3' in said and 'now "items: 4' in said, said
    assert not (wd2 / "cwd" / "count.txt").exists()          # the run stopped where it left the tape
    # promptly: the trial stopped at the next poll tick, never after the STALL limit
    log = [json.loads(x) for x in (wd2 / "trial-log.jsonl").read_text().splitlines()]
    diverged = next(r for r in log if r["decision"] == "diverged")
    stopped = next(r for r in log if r.get("stop_reason") == "replay_diverged" and r["decision"] == "blocked")
    assert epoch_of(stopped["at"]) - epoch_of(diverged["at"]) < 2.0, (diverged, stopped)
    assert not any(r["step"] == "stall" for r in log)


def diverged_at(wd: Path) -> tuple[dict, str]:
    """The replay log's line of the request the tape did not cover, and what the verdict's reasons and notes say."""
    log = [json.loads(x) for x in (wd / "replay-log.jsonl").read_text().splitlines()]
    verdict = json.loads((wd / "verdict.json").read_text())
    return next(r for r in log if r["match"] == "none"), " ".join(verdict["notes"] + verdict["overall"]["reasons"])


@pytest.mark.budget(14)
def test_another_task_or_an_evaluator_shown_a_file_more_leaves_the_tape_at_that_turn(recorded, tmp_path):
    """Both releases end a conversation's first request with a system message of their own, the same for any task:
    the replay compares the task and the evaluator's prompt themselves. Another ``--args`` leaves the tape at the
    session's turn 1; a silent hook writing a file more leaves it at the evaluator's turn 1 (its prompt lists the
    file): BLOCKED, the goal not judged, the turn and the request numbered as the replay log numbers them."""
    _, _, wd, env = recorded
    got, wd2 = replay(tmp_path / "args", wd / "model-tape.jsonl", env, PLUGINS, "--args", "Bob")
    assert (got["returncode"], got["status"], got["stop_reason"]) == (3, "BLOCKED", "replay_diverged"), got
    line, said = diverged_at(wd2)
    assert (line["role"], line["turn"]) == ("session", 1), line
    assert f"turn 1 of the session (request {line['n']}): message 1 (user): its text changed" in said, said
    assert 'now "' in said and "Bob" in said and "&lt;" not in said and "&quot;" not in said, said
    assert not (wd2 / "cwd" / "count.txt").exists()
    plugins = tmp_path / "plugins"
    shutil.copytree(PLUGINS / "scriptkit", plugins / "scriptkit")
    (plugins / "scriptkit" / "hooks").mkdir()
    (plugins / "scriptkit" / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command", "command": "touch extra-file.txt"}]}]}}))
    got, wd3 = replay(tmp_path / "hook", wd / "model-tape.jsonl", env, plugins)
    assert (got["returncode"], got["status"], got["stop_reason"]) == (3, "BLOCKED", "replay_diverged"), got
    line, said = diverged_at(wd3)
    assert (line["role"], line["turn"]) == ("evaluator", 1), line
    assert f"turn 1 of the evaluator (request {line['n']})" in said and "extra-file.txt" in said, said
    assert json.loads((wd3 / "verdict.json").read_text())["goal_result"] is None
    assert (wd3 / "cwd" / "count.txt").read_text() == "items: 3\n"      # the session itself replayed as recorded


@pytest.mark.budget(8)
def test_the_scenario_written_from_the_tape_plays_to_the_same_verdict(recorded, tmp_path):
    """`rehearsal from-tape` writes one rule per recorded model turn; rehearsed, it gives the recording's verdict and
    side effects."""
    _, out, wd, env = recorded
    scenario = tmp_path / "count.yaml"
    proc = subprocess.run([sys.executable, "-m", "live_trial", "rehearsal", "from-tape", str(wd / "model-tape.jsonl"),
                           "-o", str(scenario)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stderr.startswith("WRITTEN: "), proc.stderr
    doc = yaml.safe_load(scenario.read_text())
    assert [r["id"] for r in doc["rules"]] == ["evaluator-turn-1", *(f"session-turn-{n}" for n in range(1, 6))]
    assert "{{cwd}}/count.txt" in scenario.read_text()      # the recorded folder, found again in the request
    proc = run_cmd(tmp_path, *COUNT, "--plugins-root", str(PLUGINS), *FAST, "--rehearsal", str(scenario),
                   env=offline_env(env))
    got = final_json(proc)
    assert (proc.returncode, got["status"], got["scenario_origin"]) == (0, out["status"], "rehearsal"), got
    (wd2,) = workdirs(tmp_path)
    assert side_effects(wd2) == side_effects(wd)
