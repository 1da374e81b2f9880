"""E2E: the real ``claude`` CLI in real tmux (through live_trial.session.backend) against the rehearsal server.

Checks that the scenario format drives the real client: the hello plugin's skill is listed, invoked
through the Skill tool, its SKILL.md body is loaded, and the Write tool writes the files; that the
evaluator path (``claude -p --json-schema``) returns structured_output; and that a hanging stream is
released when the session is killed. Every session started here is killed in ``finally``.
"""
from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from live_trial.rehearsal.config import rehearsal_env, settings_args
from live_trial.rehearsal.scenario import load_scenario
from live_trial.session import screen, send
from live_trial.session.backend import Backend
from live_trial.session.claude_bin import find_claude
from live_trial.transcript.order import causal_order
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records
from live_trial.transcript.status import IDLE_TURN_COMPLETE, classify
from live_trial.transcript import skill_calls as launch

from .waiting import screen_of, wait_for

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "examples" / "plugins" / "hello"
SCENARIOS = ROOT / "examples" / "scenarios"
BOOT_WAIT_S = 60      # generous: 2 shared cores, several suites at once
TURN_WAIT_S = 120


def _session_name(slug: str) -> str:
    return f"lt-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{secrets.token_hex(2)}-{slug}"


def _task_text(marker: Path) -> str:
    """The task as the lead's template renders it (references/task-template.md), kept minimal here."""
    template = (ROOT / "references" / "task-template.md").read_text(encoding="utf-8")
    return (template.replace("{{TARGET_SKILL}}", "hello:greet").replace("{{ARGS}}", "World")
            .replace("{{MARKER_PATH}}", str(marker)))


class _Claude:
    """One interactive claude in a tmux session on the test socket, against a rehearsal server."""

    def __init__(self, tmp_path: Path, server, rehearsal_config, slug: str) -> None:
        self.backend = Backend()  # socket: env LIVE_TRIAL_SOCKET (set by conftest)
        self.name = _session_name(slug)
        self.cwd = tmp_path / "work"
        (self.cwd / "out").mkdir(parents=True)
        self.config = rehearsal_config(self.cwd, skip_bypass_dialog=True)
        self.session_id = str(uuid.uuid4())
        self.env = {**os.environ, **rehearsal_env(server.url, self.config)}
        self.argv = [str(find_claude().path), "--session-id", self.session_id, "--setting-sources", "local",
                     *settings_args(self.config),
                     "--plugin-dir", str(HELLO), "--dangerously-skip-permissions"]

    def boot(self) -> None:
        self.backend.new_session(self.name, self.argv, cwd=self.cwd, env=self.env)
        wait_for(lambda: screen.is_ready(self.backend.capture(self.name)), what="claude's prompt",
                 timeout_s=BOOT_WAIT_S, seen=screen_of(self.backend, self.name))

    def send_task(self, text: str) -> None:
        task = self.cwd.parent / "task.md"
        task.write_text(text, encoding="utf-8")
        send.send_file(self.backend, self.name, task, transcript_path=self.transcript_path())

    def transcript_path(self) -> Path:
        return locate(self.session_id, self.cwd, self.config)

    def records(self) -> list[dict]:
        path = self.transcript_path()
        return read_records(path).records if path.exists() else []

    def kill(self) -> None:
        self.backend.kill_session(self.name)


def _turn_complete(records: list[dict]) -> bool:
    return any(r.get("type") == "system" and r.get("subtype") == "turn_duration" for r in records)


@pytest.mark.budget(6)
def test_greet_happy_drives_the_real_cli(tmp_path, rehearsal_server, rehearsal_config):
    scenario = load_scenario(SCENARIOS / "greet-happy.yaml")
    scenario.model = "rehearsal-e2e-model"
    server = rehearsal_server(scenario)
    claude = _Claude(tmp_path, server, rehearsal_config, "rh-greet")
    marker = claude.cwd / "out" / "status.json"
    try:
        claude.boot()
        claude.send_task(_task_text(marker))
        done = server.wait_for(lambda r: r["rule"] == "report-done", TURN_WAIT_S)
        assert done, f"scenario did not reach report-done; requests: {server.requests}"
        records = wait_for(lambda: (lambda rs: rs if _turn_complete(rs) else None)(claude.records()),
                           what="turn_duration in the transcript")
        capture = claude.backend.capture(claude.name)
    finally:
        claude.kill()

    # every record type is known, and the one Skill call counts once: 2.1.332 repeats its tool_use in an
    # api-request-blob record, which no reader of the harness sees
    path = claude.transcript_path()
    read = read_records(path)
    assert (read.skipped_unknown, read.skipped_malformed) == (0, 0), read.first_error
    every_line = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert launch.skill_calls(every_line) == launch.skill_calls(launch.skill_call_records(path)) \
        == [("hello:greet", True)]
    # skill listing names the plugin skill
    listings = [r for r in records if r.get("type") == "attachment"
                and (r.get("attachment") or {}).get("type") == "skill_listing"]
    assert listings and "hello:greet" in json.dumps(listings[0]["attachment"])
    # the Skill tool call, its successful result and the SKILL.md body record
    tool_uses = {b["id"]: b for r in records if r.get("type") == "assistant"
                 for b in r["message"]["content"] if b.get("type") == "tool_use"}
    results = {b["tool_use_id"]: (r, b) for r in records if r.get("type") == "user"
               and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"}
    skill_calls = [t for t in tool_uses.values() if t["name"] == "Skill"]
    assert [t["input"] for t in skill_calls] == [{"skill": "hello:greet", "args": "World"}]
    rec, res = results[skill_calls[0]["id"]]
    assert not res.get("is_error") and "hello:greet" in json.dumps(res["content"])
    assert (rec.get("toolUseResult") or {}).get("success") is True
    bodies = [r for r in records if r.get("type") == "user" and r.get("isMeta")
              and "Base directory for this skill" in json.dumps(r["message"]["content"])]
    assert bodies and "greeting.txt" in json.dumps(bodies[0]["message"]["content"])
    # the files written by the real Write tool
    writes = [t for t in tool_uses.values() if t["name"] == "Write"]
    assert [Path(t["input"]["file_path"]).name for t in writes] == ["greeting.txt", "status.json"]
    for write in writes:
        rec, res = results[write["id"]]
        assert not res.get("is_error") and rec["toolUseResult"]["type"] == "create"
    assert (claude.cwd / "greeting.txt").read_text() == "Hello, World!\n"
    assert json.loads(marker.read_text())["status"] == "ok"
    # the served model is what the transcript records; the final report is on screen
    models = {r["message"]["model"] for r in records if r.get("type") == "assistant"}
    assert models == {"rehearsal-e2e-model"}
    assert "DONE: ok" in capture
    # a title side query (2.1.197; 2.1.332 sends none) is what the transcript's ai-title record holds; no unmatched
    # or mis-templated main request
    reqs = server.requests
    titles = [r["aiTitle"] for r in records if r.get("type") == "ai-title"]
    assert any(r["side_query"] for r in reqs) == bool(titles)
    assert set(titles) <= {scenario.side_query_text}
    assert [r["rule"] for r in server.main_requests()] == ["skill-call", "write-greeting", "write-marker",
                                                           "report-done"]
    assert all(not r["template_misses"] for r in reqs)


@pytest.mark.budget(6)
def test_evaluator_json_schema_gets_structured_output(tmp_path, rehearsal_server, rehearsal_config):
    """The evaluator path: claude -p --json-schema, read-only tools, answer through StructuredOutput.

    The answer shape is the evaluator's (live_trial.judge.answer: verdict, blockers, evidence
    {claim, source, observed}, checks); the Skill record uuid is templated from the prompt's index line.
    """
    server = rehearsal_server(SCENARIOS / "greet-happy.yaml")
    workdir = tmp_path / "trial"
    (workdir / "out").mkdir(parents=True)
    (workdir / "out" / "status.json").write_text('{"status": "ok"}\n')
    config = rehearsal_config(workdir)
    evidence = {"type": "object", "required": ["claim", "source", "observed"],
                "properties": {k: {"type": "string"} for k in ("claim", "source", "observed")}}
    schema = {"type": "object", "required": ["verdict", "blockers", "evidence", "checks"],
              "properties": {"verdict": {"enum": ["PASS", "FAIL"]},
                             "blockers": {"type": "array", "items": {"type": "string"}},
                             "evidence": {"type": "array", "items": evidence},
                             "checks": {"type": "array"}}}
    skill_uuid = str(uuid.uuid4())
    prompt = (f"Judge the trial. Working directory: {workdir}\nIndex of its records (uuid | type | tools | beginning):\n"
              f"- {uuid.uuid4()} | user | - | # Live trial task\n"
              f"- {skill_uuid} | assistant | Skill | {{\"skill\": \"hello:greet\"}}\n")
    argv = [str(find_claude().path), "-p", "--output-format", "json", "--json-schema", json.dumps(schema),
            "--session-id", str(uuid.uuid4()), "--tools", "Read,Glob,Grep"]
    proc = subprocess.run(argv, cwd=workdir, env={**os.environ, **rehearsal_env(server.url, config)},
                          input=prompt, capture_output=True, text=True, timeout=TURN_WAIT_S)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["is_error"] is False
    answer = out["structured_output"]
    assert answer["verdict"] == "PASS" and answer["blockers"] == []
    assert [e["source"] for e in answer["evidence"]] == ["side-effects/files/greeting.txt", skill_uuid]
    reqs = server.requests
    assert [r["rule"] for r in reqs] == ["evaluator-verdict"] and reqs[0]["template_misses"] == []
    assert sorted(reqs[0]["tools"]) == ["Glob", "Grep", "Read", "StructuredOutput"]


@pytest.mark.budget(6)
def test_hanging_stream_is_released_when_the_session_is_killed(tmp_path, rehearsal_server, rehearsal_config):
    server = rehearsal_server(SCENARIOS / "hang.yaml")
    claude = _Claude(tmp_path, server, rehearsal_config, "rh-hang")
    try:
        claude.boot()
        claude.send_task(_task_text(claude.cwd / "out" / "status.json"))
        assert server.wait_for(lambda r: r.get("hung"), TURN_WAIT_S), server.requests
        wait_for(lambda: screen.is_busy(claude.backend.capture(claude.name)), what="the spinner while hanging",
                 seen=screen_of(claude.backend, claude.name))
        assert not _turn_complete(claude.records())
    finally:
        claude.kill()
    assert server.wait_for(lambda r: r["rule"] == "hang-forever" and r.get("client_closed"), 30), server.requests
    assert not claude.backend.has_session(claude.name)


def _marker_state(claude: _Claude) -> dict | None:
    marker = claude.cwd / "out" / "status.json"
    return json.loads(marker.read_text()) if marker.exists() else None


def _last_assistant_texts(records: list[dict]) -> list[str]:
    """The assistant's text blocks in the order they happened (file order is not that order: references/
    transcript-jsonl.md "Order"; seen here: the text before the Skill call written after the final text)."""
    return [b.get("text", "") for r in causal_order(records) if r.get("type") == "assistant"
            for b in r["message"]["content"] if b.get("type") == "text"]


# scenario -> (keys/lines to send after the first turn settled, rules expected in order, marker expected, last text)
EXAMPLE_RUNS = {
    "ask-user-question": (["Enter"], ["skill-call", "ask", "answered", "write-marker", "report-done"],
                          "asked; answer: Red", "DONE: ok"),
    "plain-question": (["line:Please continue on your own."],
                       ["skill-call", "ask-in-text", "after-nudge-greeting", "after-nudge-marker", "after-nudge-done"],
                       "continued after a nudge", "DONE: ok"),
    "done-no-marker": ([], ["skill-call", "claims-done"], None, "DONE: ok"),
    "api-error-400": ([], ["skill-call", "api-400"], None,
                      "API Error: 400 rehearsal: the request was refused (scripted 400)"),
    "overloaded-then-ok": ([], ["overloaded", "overloaded", "skill-call", "write-greeting", "write-marker",
                                "report-done"], "after two 529s", "DONE: ok"),
}


@pytest.mark.budget(6)
@pytest.mark.parametrize("name", sorted(EXAMPLE_RUNS))
def test_example_scenarios_play_on_the_real_cli(name, tmp_path, rehearsal_server, rehearsal_config):
    """Each example scenario the other modules rely on does on the real CLI what its header says."""
    actions, rules, summary, last_text = EXAMPLE_RUNS[name]
    server = rehearsal_server(SCENARIOS / f"{name}.yaml")
    claude = _Claude(tmp_path, server, rehearsal_config, f"rh-{name}"[:40])
    try:
        claude.boot()
        claude.send_task(_task_text(claude.cwd / "out" / "status.json"))
        first = rules[0]
        assert server.wait_for(lambda r: r["rule"] == first, TURN_WAIT_S), server.requests
        for action in actions:
            if action == "Enter":  # a gate: wait until the dialog is drawn, then pick the highlighted option
                box = wait_for(lambda: screen.dialog(claude.backend.capture(claude.name)), what="the question dialog",
                               seen=screen_of(claude.backend, claude.name))
                highlighted = box.selected
                assert highlighted is not None, box
                # as the harness answers a gate: 2.1.332 drops an Enter pressed in the dialog's first ~0.3 s, so an
                # Enter the dialog did not take is pressed again (send.answer_gate, README "Keys pressed again")
                send.answer_gate(claude.backend, claude.name, highlighted.label)
            else:  # a nudge: wait for the first turn to end, then type a new prompt
                wait_for(lambda: _turn_complete(claude.records()), what="the first turn's end")
                claude.backend.send_line(claude.name, action[len("line:"):])
        assert server.wait_for(lambda r: r["rule"] == rules[-1] and len(server.main_requests()) >= len(rules),
                               TURN_WAIT_S), server.requests
        expected_turns = 2 if name == "plain-question" else 1
        records = wait_for(lambda: (lambda rs: rs if _turns_ended(rs) >= expected_turns
                                    and last_text in _last_assistant_texts(rs) else None)(claude.records()),
                           what=f"{expected_turns} completed turn(s) and the text {last_text!r}",
                           seen=lambda: str(claude.records()[-3:]))
    finally:
        claude.kill()
    served = [r["rule"] for r in server.main_requests()]
    assert [r for i, r in enumerate(served) if r != "api-400" or served[i - 1:i] != ["api-400"]] == rules
    state = _marker_state(claude)
    assert (state or {}).get("summary") == summary
    assert _last_assistant_texts(records)[-1] == last_text
    if name == "api-error-400":
        errors = [r for r in records if r.get("isApiErrorMessage")]
        assert errors and errors[0]["apiErrorStatus"] == 400 and errors[0]["message"]["model"] == "<synthetic>"
        # 2.1.197 sends the refused request once and writes turn_duration after the error record; 2.1.332 sends it
        # 6 times and writes none. Either way the harness reads the turn as ended by the API error.
        after = causal_order(records)
        after = after[after.index(errors[0]) + 1:]
        assert served.count("api-400") == (1 if any(map(_is_turn_end, after)) else 6), served
        st = classify(records)
        assert (st.state, st.api_error) == (IDLE_TURN_COMPLETE, 400), st


def _is_turn_end(record: dict) -> bool:
    return record.get("type") == "system" and record.get("subtype") == "turn_duration"


def _turns_ended(records: list[dict]) -> int:
    """Turns that ended: each ``turn_duration``, and an API error record with no ``turn_duration`` after it (2.1.332
    writes none there; ``status.classify`` ends the turn on that record)."""
    ordered = causal_order(records)
    return sum(1 for i, r in enumerate(ordered) if _is_turn_end(r) or (
        r.get("isApiErrorMessage") is True and not any(map(_is_turn_end, ordered[i + 1:]))))
