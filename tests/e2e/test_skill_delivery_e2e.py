"""The harness skill's first artifact, the person's choice and the improvement loop, on the real CLI (README "Use it
from Claude Code"; seed 001 artifact_delivery and feedback_contract, seed 002 diff tickets). A person's session,
played by a scripted model, calls run-skill-live-trial; its Bash steps run nested rehearsal trials of hello:greet on
their own tmux socket and config; the test answers the skill's one AskUserQuestion as the person would. The three
rounds of a skill that never converges are driven through the harness verbs directly (no host session: nested
sessions are costly)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from live_trial.notices.catalogue import nudge_text
from live_trial.rehearsal.config import rehearsal_env, seed_config
from live_trial.session import send
from live_trial.session.boot import BootRequest, boot
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records
from tests.e2e.run_support import ROOT, listening, tmux_sessions
from tests.e2e.session_support import TrackingBackend, session_name
from tests.e2e.test_claude_plugin_e2e import install_from_marketplace, result_text, tmux_on, tool_calls
from tests.e2e.waiting import screen_of, wait_for

pytestmark = pytest.mark.e2e
SCENARIOS = ROOT / "tests" / "e2e" / "scenarios"
QUESTION = "How far should the trial go?"


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


class Host:
    """A person's session with the plugin installed from the marketplace, its Bash on the PATH of this venv, nested
    trials on their own tmux socket."""

    def __init__(self, backend, tmp_path: Path, server, extra_env: dict[str, str]):
        self.backend, self.server = backend, server
        self.socket = f"lt-inner-{os.getpid()}"
        self.cwd = tmp_path / "cwd"
        self.cwd.mkdir()
        self.config = seed_config(tmp_path / "config", [self.cwd])
        for proc in install_from_marketplace(self.config, self.cwd):
            assert proc.returncode == 0, (proc.args, proc.stdout, proc.stderr)
        env = {**rehearsal_env(server.url, self.config), "LIVE_TRIAL_SOCKET": self.socket,
               "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", **extra_env}
        self.result = boot(BootRequest(session=session_name("host"), cwd=self.cwd, env_overrides=env, rehearsal=True,
                                       owner_pid=os.getpid(), timeout_s=90, setting_sources=None), backend)
        self.transcript = locate(self.result.session_id, self.cwd, self.config)
        self.seen_inner: set[str] = set()
        self.seen_outer: set[str] = set()

    def ask(self, text: str, tmp_path: Path) -> None:
        prompt = tmp_path / "prompt.md"
        prompt.write_text(text)
        send.send_file(self.backend, self.result.session, prompt, transcript_path=self.transcript)

    def seen(self) -> str:
        return "\n".join(f"{r['step']} {r['rule']} {r['template_misses']}" for r in self.server.requests[-6:]) + \
            "\n" + screen_of(self.backend, self.result.session)()

    def answer(self, label: str) -> None:
        """Answer the skill's one question as the person: the option ``label``."""
        wait_for(lambda: self.track() and QUESTION in self.backend.capture(self.result.session),
                 what="the skill's question", timeout_s=120, seen=self.seen)
        send.answer_gate(self.backend, self.result.session, label)

    def track(self) -> bool:
        """Note the tmux sessions of the nested trials' socket (``seen_inner``) and of the harness's default one
        (``seen_outer``); always True."""
        self.seen_inner.update(tmux_on(self.socket, "list-sessions", "-F", "#{session_name}").stdout.split())
        self.seen_outer.update(tmux_sessions())
        return True

    def told(self, needle: str, timeout_s: float = 120) -> str:
        """Wait until the session says ``needle`` (tracking the sessions meanwhile) and return that text."""
        def find() -> str:
            self.track()
            texts = [b.get("text") or "" for r in read_records(self.transcript).records if r.get("type") == "assistant"
                     for b in r["message"]["content"]]
            return next((t for t in texts if needle in t), "")
        return wait_for(find, what=f"the session to say {needle!r}", timeout_s=timeout_s, seen=self.seen)

    def calls(self) -> list[tuple[dict, dict | None]]:
        return tool_calls(read_records(self.transcript).records)

    def close(self) -> list[str]:
        left = tmux_on(self.socket, "list-sessions", "-F", "#{session_name}").stdout.split()
        tmux_on(self.socket, "kill-server")
        return left


def bash_outputs(calls) -> list[tuple[str, str, bool]]:
    return [(c["input"]["command"], result_text(r), bool(r and r.get("is_error"))) for c, r in calls
            if c["name"] == "Bash"]


def steps(calls) -> list[str]:
    """Each call as a short word: the harness verb (with the backend / delivery verb and event), else the tool."""
    out = []
    for c, _ in calls:
        command = c["input"].get("command", "")
        if c["name"] != "Bash":
            out.append(c["name"])
        elif command.startswith("live-trial "):
            words = command.split()
            word = words[1] + (f" {words[2]}" if words[1] in ("backend", "rehearsal") or words[2:3] == ["round"]
                               else "")
            out.append(word + (f" {words[words.index('--event') + 1]}" if "--event" in words else ""))
        else:
            out.append(command)
    return out


@pytest.mark.budget(40)
def test_the_skill_delivers_the_first_artifact_nudges_and_ends_when_the_person_accepts_it(
        backend, tmp_path, rehearsal_server):
    """accept-as-is: the first artifact (goal not judged, the nudge the skill sent through `backend nudge` counted in
    the verdict), the guards, the presentation, the harness refusing `evaluate` before the choice, one question, and
    handoff_complete with the goal not judged, said so."""
    host = Host(backend, tmp_path, rehearsal_server(SCENARIOS / "skill-delivers-the-first-artifact.yaml"),
                {"STALL_LIMIT": "4"})
    shutil.copytree(ROOT / "examples" / "plugins", host.cwd / "examples" / "plugins")
    shutil.copytree(ROOT / "examples" / "scenarios", host.cwd / "examples" / "scenarios")
    try:
        host.ask("Use the skill run-skill-live-trial to try hello:greet with World, rehearsed with "
                 "examples/scenarios/plain-question.yaml.\n", tmp_path)
        host.answer("accept-as-is")
        told = host.told("The first artifact of hello:greet")
        calls = host.calls()
    finally:
        left = host.close()
    assert left == []
    assert steps(calls) == [
        "Skill", "command -v live-trial", "prepare", "rehearsal serve", "boot", "send", "poll",
        "backend has-session", "backend capture-pane", "backend nudge", "poll", "collect", "verdict",
        "backend kill-session", "reap", "TaskStop", "delivery minimum_guard_pass", "delivery present_actual_artifact",
        "evaluate", "AskUserQuestion", "delivery record_user_choice", "delivery accept-as-is", "Read"], steps(calls)
    outputs = bash_outputs(calls)
    prepared = outputs[1][1]
    workdir = Path(re.search(r"^WORKDIR=(\S+)$", prepared, re.M).group(1))
    evaluate = next(o for o in outputs if o[0].startswith("live-trial evaluate"))
    assert evaluate[2] and "REFUSED: evaluate runs only after the person's choice" in evaluate[1], evaluate
    assert not (workdir / "evaluation.json").exists()                 # no evaluator ran before (or without) a choice
    nudged = next(o for o in outputs if " nudge " in o[0])
    assert nudged[1].startswith("NUDGED: ") and not nudged[2], nudged
    assert (workdir / "nudge-1.md").read_text() == nudge_text("ja")   # the seed's fixed text, the default language
    doc = json.loads((workdir / "verdict.json").read_text())
    assert (doc["launch"], doc["completion"], doc["goal_result"], doc["nudge_count"]) == ("PASS", "PASS", None, 1)
    assert doc["overall"]["verdict"] == "DEGRADED" and "1 nudge(s) were needed: not self-driven" in \
        doc["overall"]["reasons"]
    delivery = json.loads((workdir / "delivery.json").read_text())
    assert [h["event"] for h in delivery["history"]] == ["create_artifact", "minimum_guard_pass",
                                                        "present_actual_artifact", "record_user_choice",
                                                        "accept-as-is"]
    assert (delivery["state"], delivery["choice"], delivery["handoff"]["converged"]) == (
        "handoff_complete", "accept-as-is", None)
    presented = next(o[1] for o in outputs if "present_actual_artifact" in o[0])
    assert f"VERDICT: {workdir / 'verdict.json'} {delivery['artifact']['sha256']}" in presented
    assert f"REPORT: {workdir / 'report.html'} (" in presented and (workdir / "report.html").is_file()
    question = next(c for c, _ in calls if c["name"] == "AskUserQuestion")["input"]["questions"]
    assert len(question) == 1 and [o["label"] for o in question[0]["options"]] == [
        "accept-as-is", "light", "standard", "detailed"]
    assert f"HANDOFF: {delivery['handoff']['message']}" in told and "DEGRADED" in told
    # the nested trial: its own tmux socket and config, its lease following the person's claude, its server stopped
    inner = json.loads((workdir / "trial-state.json").read_text())
    assert inner["session"] in host.seen_inner and inner["session"] not in host.seen_outer
    assert Path(inner["config_dir"]).resolve() == (workdir / "claude-config").resolve()
    assert inner["owner_pid"] == host.result.pane_pid and (workdir / "transcript.jsonl").stat().st_size > 0
    stopped = [result_text(r) for c, r in calls if c["name"] == "TaskStop"]
    assert len(stopped) == 1 and "Successfully stopped task" in stopped[0], stopped
    assert not listening(inner["rehearsal"]["port"])


def plugin_saying_hi(cwd: Path) -> Path:
    """hello:greet under ``cwd/plugins`` whose SKILL.md says the greeting is "Hi" (the promise stays "Hello, World!"),
    and the scenario that plays a skill as its body says under ``cwd/scenarios``; returns the SKILL.md."""
    shutil.copytree(ROOT / "examples" / "plugins" / "hello", cwd / "plugins" / "hello")
    skill = cwd / "plugins" / "hello" / "skills" / "greet" / "SKILL.md"
    text = skill.read_text()
    assert "Content: `Hello, <name>!` and a" in text
    skill.write_text(text.replace("Content: `Hello, <name>!` and a", "Content: `Hi` and a"))
    (cwd / "scenarios").mkdir()
    shutil.copy(SCENARIOS / "greet-as-the-skill-says.yaml", cwd / "scenarios")
    return skill


@pytest.mark.budget(50)
def test_standard_on_a_degraded_trial_writes_a_ticket_fixes_the_skill_and_passes_in_the_second_round(
        backend, tmp_path, rehearsal_server):
    """standard: the fresh evaluator finds the goal missed (DEGRADED), the diff ticket names the blocker, the scripted
    session edits the skill's file, the new trial of the same case passes (its own evaluator), the ledger holds two
    rounds with the changed file's digests, and the end says it converged in 1 round."""
    host = Host(backend, tmp_path, rehearsal_server(SCENARIOS / "skill-loops-to-pass.yaml"), {"LIVE_TRIAL_LANG": "en"})
    skill = plugin_saying_hi(host.cwd)
    before = skill.read_bytes()
    try:
        host.ask("Use the skill run-skill-live-trial to try hello:greet with World from plugins/, rehearsed with "
                 "scenarios/greet-as-the-skill-says.yaml.\n", tmp_path)
        host.answer("standard")
        told = host.told("The trial of hello:greet ended.", timeout_s=180)
        calls = host.calls()
    finally:
        left = host.close()
    assert left == []
    trial = ["prepare", "rehearsal serve", "boot", "send", "poll", "collect"]
    assert steps(calls) == [
        "Skill", "command -v live-trial", *trial, "verdict", "backend kill-session", "reap", "TaskStop",
        "delivery minimum_guard_pass", "delivery present_actual_artifact", "AskUserQuestion",
        "delivery record_user_choice", "delivery standard", "evaluate", "verdict", "ticket", "Read", "Edit",
        *trial, "evaluate", "verdict", "backend kill-session", "reap", "TaskStop", "delivery round",
        "delivery improvement_complete"], steps(calls)
    outputs = bash_outputs(calls)
    assert not [o for o in outputs if o[2]], [o for o in outputs if o[2]]       # no step refused or failed
    prepares = [o[1] for o in outputs if o[0].startswith("live-trial prepare")]
    w0, w1 = (Path(re.search(r"^WORKDIR=(\S+)$", p, re.M).group(1)) for p in prepares)
    first = json.loads((w0 / "verdict-first.json").read_text())
    completed = json.loads((w0 / "verdict.json").read_text())
    assert (first["goal_result"], first["overall"]["verdict"]) == (None, "DEGRADED")
    assert (completed["goal_result"], completed["overall"]["verdict"]) == ("FAIL", "DEGRADED")
    assert completed.get("override") is None
    ticket = (w0 / "ticket-1.md").read_text()
    assert ticket.startswith("# Diff ticket: round 1 of at most 3 (standard) for hello:greet")
    assert completed["goal_blockers"][0] in ticket and "## What already works" in ticket
    assert skill.read_bytes() != before and "Content: `Hello, World!` and a" in skill.read_text()
    second = json.loads((w1 / "verdict.json").read_text())
    assert (second["goal_result"], second["overall"]["verdict"]) == ("PASS", "PASS")
    assert (w1 / "side-effects" / "files" / "greeting.txt").read_text() == "Hello, World!\n"
    ledger = json.loads((w0 / "improvement.json").read_text())
    assert [(r["n"], r["trial"]["overall"]) for r in ledger["rounds"]] == [(0, "DEGRADED"), (1, "PASS")]
    (changed,) = ledger["rounds"][1]["changed"]
    assert changed["path"] == "SKILL.md" and changed["before"] != changed["after"] is not None
    sessions = [r["trial"]["evaluator_session"] for r in ledger["rounds"]]
    assert None not in sessions and len(set(sessions)) == 2                        # a fresh evaluator each round
    assert ledger["rounds"][1]["ticket"]["path"] == "ticket-1.md"
    delivery = json.loads((w0 / "delivery.json").read_text())
    assert delivery["state"] == "handoff_complete" and delivery["handoff"]["converged"] is True
    assert delivery["handoff"]["message"].startswith("hello:greet converged in 1 round(s)")
    assert f"HANDOFF: {delivery['handoff']['message']}" in told


def harness(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.budget(35)
def test_a_skill_that_never_converges_stops_after_three_rounds_through_the_harness_verbs(tmp_path):
    """The loop's bound on the real CLI without a host session: the first artifact, standard, then three rounds of a
    ticket, a change of the skill's file and a new trial of the same case (`run`, its own fresh evaluator) that stays
    DEGRADED; a fourth ticket is refused with nothing changed, and improvement_complete ends the delivery saying it did
    not converge, what still fails, and where the installed run-skill-iter-improve is."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    skill = plugin_saying_hi(cwd)
    scenario = "scenarios/greet-as-the-skill-says.yaml"
    socket = f"lt-rounds-{os.getpid()}"
    env = {**os.environ, "LIVE_TRIAL_SOCKET": socket, "LIVE_TRIAL_LANG": "en"}
    server = None
    try:
        prepared = harness(cwd, env, "prepare", "hello:greet", "--plugins-root", "plugins", "--args", "World",
                           "--rehearsal", scenario, "--delivery")
        assert prepared.returncode == 0, prepared.stderr
        values = dict(re.findall(r"^([A-Z_]+)=(\S+)$", prepared.stdout, re.M))
        lines = [line for line in prepared.stdout.splitlines() if line.startswith("live-trial ")]
        server = subprocess.Popen([sys.executable, "-m", "live_trial", *lines[0].rstrip(" &").split()[1:]], cwd=cwd,
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for line in lines[1:8]:            # boot, send, poll, collect, verdict, kill-session, reap
            done = harness(cwd, env, *line.split()[1:])
            assert done.returncode == 0, (line, done.stdout, done.stderr)
        server.terminate()
        server.wait(timeout=10)
        w0 = Path(values["WORKDIR"])
        for event in ("minimum_guard_pass", "present_actual_artifact", "record_user_choice", "standard"):
            done = harness(cwd, env, "delivery", "record", str(w0), "--event", event,
                           *(["--choice", "standard"] if event == "record_user_choice" else []))
            assert done.returncode == 0, (event, done.stdout, done.stderr)
        for step in ("evaluate", "verdict"):
            line = [x for x in lines if x.startswith(f"live-trial {step} ")][-1]
            done = harness(cwd, env, *line.split()[1:])
            assert done.returncode == 0, (line, done.stdout, done.stderr)
        for n in (1, 2, 3):
            ticket = harness(cwd, env, "ticket", str(w0))
            assert ticket.returncode == 0 and ticket.stdout.startswith(f"TICKET: round {n} of at most 3"), ticket
            skill.write_text(skill.read_text().replace("Content: `Hi", f"Content: `Hi{n}"))
            run = harness(cwd, env, "run", "hello:greet", "--plugins-root", "plugins", "--args", "World",
                          "--rehearsal", scenario, "--json")
            assert run.returncode == 6, (run.stdout[-2000:], run.stderr[-2000:])        # DEGRADED again
            closed = harness(cwd, env, "delivery", "round", str(w0), "--trial", json.loads(run.stdout)["workdir"])
            assert closed.returncode == 0 and closed.stdout.startswith(f"ROUND: {n} of at most 3 closed: DEGRADED")
        before = {p: p.read_bytes() for p in w0.iterdir() if p.is_file()}
        fourth = harness(cwd, env, "ticket", str(w0), "--json")
        assert fourth.returncode == 2 and json.loads(fourth.stdout)["code"] == "round_limit", fourth
        assert {p: p.read_bytes() for p in w0.iterdir() if p.is_file()} == before
        config = tmp_path / "person-config"
        (config / "skills" / "run-skill-iter-improve").mkdir(parents=True)
        (config / "skills" / "run-skill-iter-improve" / "SKILL.md").write_text(
            "---\nname: run-skill-iter-improve\ndescription: improve a skill in depth\n---\n")
        end = harness(cwd, {**env, "CLAUDE_CONFIG_DIR": str(config)}, "delivery", "record", str(w0), "--event",
                      "improvement_complete")
        assert end.returncode == 0, end.stderr
    finally:
        if server is not None and server.poll() is None:
            server.kill()
        left = tmux_on(socket, "list-sessions", "-F", "#{session_name}").stdout.split()
        tmux_on(socket, "kill-server")
    assert left == []
    ledger = json.loads((w0 / "improvement.json").read_text())
    assert [(r["n"], r["trial"]["overall"]) for r in ledger["rounds"]] == [
        (0, "DEGRADED"), (1, "DEGRADED"), (2, "DEGRADED"), (3, "DEGRADED")]
    assert all(len(r["changed"]) == 1 for r in ledger["rounds"][1:])
    assert len({r["trial"]["evaluator_session"] for r in ledger["rounds"]}) == 4
    delivery = json.loads((w0 / "delivery.json").read_text())
    message = delivery["handoff"]["message"]
    assert (delivery["state"], delivery["handoff"]["converged"], delivery["handoff"]["rounds"]) == (
        "handoff_complete", False, 3)
    assert message.startswith("hello:greet did not converge: 3 round(s) run, at most 3 for the choice standard. "
                              "Still failing: goal FAIL")
    assert 'greeting.txt does not hold the promised line "Hello, World!"' in message
    assert f"run-skill-iter-improve is installed here: {config / 'skills' / 'run-skill-iter-improve' / 'SKILL.md'}" \
        in message
    assert end.stdout.splitlines()[1] == f"HANDOFF: {message}"
