"""``run`` end to end on the real claude CLI in real tmux, the model played by rehearsal scenarios (issues 2 and 7).

Each test starts ``python -m live_trial run`` as a user would and checks what it left: the exit code, the
schema-valid verdict, the collected evidence, and that no session or claude process remains.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.transcript.records import prompt_text
from tests.e2e.run_support import (
    EXAMPLES,
    ROOT,
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


def _verdict(result: dict) -> dict:
    doc = json.loads(open(result["verdict_path"]).read())
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    return doc


def _no_leftovers(workdir, state=None):
    state = state or json.loads((workdir / "trial-state.json").read_text())
    assert state["session"] not in tmux_sessions()
    if state.get("pane_pid"):
        assert not pid_alive(state["pane_pid"]), "the trial's claude process is still running"


@pytest.mark.budget(8)
def test_happy_path_pass_with_real_skill_and_write(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert result["status"] == "PASS" and result["scenario_origin"] == "rehearsal"
    doc = _verdict(result)
    assert result["summary"] == doc["summary"] and "台本どおりに答える練習相手" in result["summary"]   # scripted
    assert (doc["launch"], doc["completion"], doc["goal_result"], doc["poll_exit"]) == ("PASS", "PASS", "PASS", "DONE")
    wd = workdirs(tmp_path)[0]
    for name in ("pane.txt", "transcript.jsonl", "task.md", "evaluation.json", "out/status.json"):
        assert (wd / name).is_file(), name
    recs = records(wd / "transcript.jsonl")
    listing = [r for r in recs if r.get("type") == "attachment" and r["attachment"].get("type") == "skill_listing"]
    assert listing and "trialkit:mark" in json.dumps(listing[0]["attachment"])
    uses = [b for r in recs if r.get("type") == "assistant" for b in r["message"]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert [u["name"] for u in uses] == ["Skill", "Write"]
    ids = {r["message"]["id"] for r in recs if r.get("type") == "assistant"}
    assert ids and all(i.startswith("msg_rehearsal_") for i in ids), ids     # the transcript says it was scripted
    assert uses[0]["input"]["skill"] == "trialkit:mark"
    assert uses[1]["input"]["file_path"] == str(wd / "out" / "status.json")
    body = [r for r in recs if r.get("type") == "user" and r.get("isMeta") and "marked mark" in json.dumps(r)]
    assert body, "the SKILL.md body record is missing"
    first_prompt = next(r for r in recs if r.get("type") == "user" and isinstance(r["message"]["content"], str)
                        and not r.get("isMeta"))
    # the pasted task, as the harness reads it (2.1.332 stores a multi-line paste wrapped in <pasted_content>)
    assert prompt_text(first_prompt).rstrip() == (wd / "task.md").read_text().rstrip()
    _no_leftovers(wd)


@pytest.mark.budget(14)
def test_plain_question_is_answered_by_one_nudge_and_degrades(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-nudge.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 6, proc.stderr[-3000:]
    doc = _verdict(result)
    assert doc["nudge_count"] == 1 and doc["overall"]["verdict"] == "DEGRADED"
    wd = workdirs(tmp_path)[0]
    assert (wd / "nudge-1.md").is_file()
    log = [json.loads(x) for x in (wd / "trial-log.jsonl").read_text().splitlines()]
    nudges = [x for x in log if x["step"] == "stall" and x["decision"] == "nudge"]
    assert len(nudges) == 1 and nudges[0]["row"] == 4 and nudges[0]["state"] == "IDLE_TURN_COMPLETE"
    _no_leftovers(wd)


@pytest.mark.budget(10)
@pytest.mark.parametrize("kind,code,overall", [("contractual", 0, "PASS"), ("rescue", 6, "DEGRADED")])
def test_ask_user_question_gate_answered_by_label(tmp_path, kind, code, overall):
    proc = run_cmd(tmp_path, "trialkit:choose", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "choose-gate.yaml"), "--gate-response", "Casual",
                   "--gate-kind", kind, "--expect-gate", *FAST)       # the gate is shown: --expect-gate holds
    result = final_json(proc)
    assert proc.returncode == code, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["gate_response_count"], doc["gate_kind"], doc["overall"]["verdict"]) == (1, kind, overall)
    assert doc["gate_answers"] == [{"n": 1, "question": "Which greeting style?", "options": ["Formal", "Casual"],
                                    "answer": "Casual", "kind": kind}]      # --gate-kind: every answer of that kind
    if kind == "contractual":
        assert doc["gate_contract_evidence"]
    wd = workdirs(tmp_path)[0]
    answers = [r for r in records(wd / "transcript.jsonl") if r.get("type") == "user"
               and isinstance(r.get("toolUseResult"), dict) and "answers" in r["toolUseResult"]]
    assert answers and "Casual" in json.dumps(answers[0]["toolUseResult"]["answers"])
    _no_leftovers(wd)


@pytest.mark.budget(6)
def test_gate_with_no_response_left_fails(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:choose", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "choose-gate.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _verdict(result)
    assert doc["poll_exit"] == "GATE" and doc["overall"]["verdict"] == "FAIL"
    assert any("stopped at a question it had to ask" in n for n in doc["notes"])
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(6)
def test_a_skill_that_must_stop_at_a_gate_but_never_asks_fails(tmp_path):
    """README "Questions (gates)": a guard that never asked is broken, however well the rest went. What happened
    stays what happened: it ran to its end (completion PASS, the marker there), the verdict is FAIL for the question
    it never asked, and the reasons, the summary and the facts say the same thing."""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), "--expect-gate", *FAST)
    result = final_json(proc)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["launch"], doc["completion"], doc["poll_exit"], doc["stop_reason"], doc["overall"]["verdict"]) == (
        "PASS", "PASS", "DONE", "expected_gate_not_shown", "FAIL")
    reasons = doc["overall"]["reasons"]
    assert reasons[0] == "expected gate was not shown: it should have stopped at its question but never asked", reasons
    assert not any("did not complete" in r for r in reasons), reasons
    assert doc["goal_result"] is None and "goal not judged" in reasons          # no evaluator for a trial already FAIL
    assert (workdirs(tmp_path)[0] / "out" / "status.json").is_file()
    assert result["summary"] == doc["summary"] and "一度も質問しなかった" in result["summary"]
    assert "最後まで動きました" in result["summary"], result["summary"]      # it got to the end, as the facts say
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(6)
def test_an_answer_that_is_none_of_the_questions_options_is_blocked_as_the_persons_input(tmp_path):
    """README "Questions (gates)": --gate-response Purple where the question offers Formal and Casual. The skill asked
    its one question as it should: BLOCKED gate_answer_not_an_option (exit 3) naming the question, the options and
    the answer; nothing was pressed; and no warning that the skill asked fewer questions than expected."""
    proc = run_cmd(tmp_path, "trialkit:choose", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "choose-gate.yaml"), "--gate-response", "Purple", "--lang", "en",
                   *FAST)
    result = final_json(proc)
    assert proc.returncode == 3, (result, proc.stderr[-3000:])
    doc = _verdict(result)
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["blocked"], doc["gate_response_count"]) == (
        "gate_answer_not_an_option", "BLOCKED", True, 0)
    reasons = doc["overall"]["reasons"]
    assert reasons[0].startswith("blocked: the answer given ahead of time") and not any(
        "did not complete" in r or "was not among the choices" in r for r in reasons), reasons
    note = ('the answer "Purple" given ahead of time is not one of the options of the question "Which greeting '
            'style?": "Formal", "Casual"')
    assert any(n.startswith(note) for n in doc["notes"]), doc["notes"]
    assert not any("fewer questions" in w for w in doc["warnings"]), doc["warnings"]
    assert "not the skill's fault" in result["summary"], result["summary"]
    assert '("Formal", "Casual") instead of "Purple"' in result["notification"], result["notification"]
    wd = workdirs(tmp_path)[0]
    answered = [r for r in records(wd / "transcript.jsonl") if r.get("type") == "user"
                and isinstance(r.get("toolUseResult"), dict) and "answers" in r["toolUseResult"]]
    assert answered == []                                           # nothing was chosen for the person
    _no_leftovers(wd)


@pytest.mark.budget(6)
def test_a_session_that_never_calls_the_skill_under_trial_is_a_launch_fail(tmp_path):
    """READY and a delivered task are not a launch: the transcript must show the target's own Skill call."""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-wrong-skill.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["launch"], doc["stop_reason"], doc["overall"]["verdict"]) == ("FAIL", "skill_not_launched", "FAIL")
    assert any("no successful Skill call to trialkit:mark (Skill calls: trialkit:mark2)" in n for n in doc["notes"])
    wd = workdirs(tmp_path)[0]
    assert not (wd / "evaluation.json").exists(), "the goal of a skill that never ran was judged"
    _no_leftovers(wd)


@pytest.mark.budget(6)
def test_contractual_gate_kind_without_grounding_is_refused_before_anything(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), "--gate-kind", "contractual")
    assert proc.returncode == 2
    assert not (tmp_path / "eval").exists()


@pytest.mark.budget(10)
def test_done_reported_without_marker_is_a_contract_violation(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-no-marker.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["stop_reason"], doc["stall_row"], doc["completion"]) == ("contract_violation", 5, "FAIL")
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(6)
def test_cli_killed_mid_turn_is_a_recorded_crash(tmp_path):
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                     "--rehearsal", str(SCENARIOS / "mark-hang.yaml"), "--stall-limit", "60", "--hard-cap", "120")
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        wait_busy(state)
        os.kill(state["pane_pid"], signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    doc = _verdict(result)
    assert (doc["stop_reason"], doc["stall_row"]) == ("crash", 1)
    wd = workdirs(tmp_path)[0]
    assert (wd / "transcript.jsonl").is_file()
    _no_leftovers(wd)


@pytest.mark.budget(14)
def test_turn_that_never_ends_hits_hard_cap_and_is_blocked(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-hang.yaml"), "--stall-limit", "300", "--hard-cap", "6")
    result = final_json(proc)
    assert proc.returncode == 3, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["poll_exit"], doc["overall"]["verdict"]) == ("HARD_CAP", "BLOCKED")
    wd = workdirs(tmp_path)[0]
    assert any(json.loads(x).get("decision") == "WARN" or "80%" in x
               for x in (wd / "trial-log.jsonl").read_text().splitlines())
    _no_leftovers(wd)


@pytest.mark.budget(6)
def test_sigterm_to_the_harness_kills_the_session_and_keeps_the_evidence(tmp_path):
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                     "--rehearsal", str(SCENARIOS / "mark-hang.yaml"), "--stall-limit", "300", "--hard-cap", "300")
    try:
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        wait_busy(state)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    doc = _verdict(json.loads(out.strip().splitlines()[-1]))
    assert (doc["stop_reason"], doc["overall"]["verdict"]) == ("harness_terminated", "BLOCKED")
    assert doc["overall"]["reasons"] == ["blocked: the harness was stopped by a signal (SIGTERM) before the trial "
                                         "finished", "the skill's end was never reached: the trial stopped while the "
                                         "skill ran; its goal was not judged"]
    wd = workdirs(tmp_path)[0]
    assert (wd / "pane.txt").is_file() and (wd / "transcript.jsonl").is_file()
    _no_leftovers(wd, state)


@pytest.mark.budget(8)
def test_sigterm_while_the_evaluator_judges_stops_it_and_leaves_no_process(tmp_path):
    """The evaluator may take up to 600 s; a SIGTERM then must not wait for it nor leave its claude -p behind."""
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                     "--rehearsal", str(SCENARIOS / "mark-slow-judge.yaml"), *FAST)
    try:
        wait_for_state(tmp_path, lambda s: s["phase"] == "evaluating")
        children = wait_for(lambda: _evaluator_pids(proc.pid), what="the evaluator's claude -p")
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]
    assert took < 30, f"the harness waited {took:.0f}s for the evaluator"
    assert children, "no evaluator process was found to check"
    assert not [p for p in children if pid_alive(p)], "the evaluator's claude -p outlived the harness"
    doc = _verdict(json.loads(out.strip().splitlines()[-1]))
    assert (doc["stop_reason"], doc["overall"]["verdict"], doc["goal_result"]) == ("harness_terminated", "BLOCKED", None)
    assert "the harness was stopped while the evaluator judged the goal" in doc["notes"]
    _no_leftovers(workdirs(tmp_path)[0])


def _evaluator_pids(harness_pid: int) -> list[int]:
    """Pids of the harness's descendant processes running ``claude -p`` (the evaluator)."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 2) for line in out.splitlines() if line.strip()]
    kids, found = {harness_pid}, []
    for _ in range(4):                                   # descendants a few levels down
        for pid, ppid, *args in rows:
            if int(ppid) in kids:
                kids.add(int(pid))
    for pid, _ppid, *args in rows:
        if int(pid) in kids and int(pid) != harness_pid and args and " -p " in f" {args[0]} ":
            found.append(int(pid))
    return found


@pytest.mark.budget(14)
def test_four_trials_from_one_plan_run_in_parallel_without_cross_talk(tmp_path):
    quiet = ROOT / "tests" / "e2e" / "suites" / "trialkit-quiet.yaml"     # trialkit:choose asks nothing here
    plan = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(PLUGINS / "trialkit"),
                           "--eval-root", str(tmp_path / "eval"), "--max-live-trials", "4", "--max-concurrency", "4",
                           "--suite", str(quiet), "--json"], capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan.stdout)
    proc = run_cmd(tmp_path, "--plan", str(plan_file), "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), *FAST, timeout=400)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = final_json(proc)
    assert len(result["trials"]) == 4 and {t["status"] for t in result["trials"]} == {"PASS"}
    wds = workdirs(tmp_path)
    assert len(wds) == 4
    for wd in wds:
        recs = records(wd / "transcript.jsonl")
        first = next(r for r in recs if r.get("type") == "user" and isinstance(r["message"]["content"], str)
                     and not r.get("isMeta"))
        assert prompt_text(first).rstrip() == (wd / "task.md").read_text().rstrip()
        _no_leftovers(wd)
    starts = sorted(json.loads((wd / "trial-state.json").read_text())["started_at"] for wd in wds)
    assert starts[-1] < max(json.loads((wd / "verdict.json").read_text())["written_at"] for wd in wds)


@pytest.mark.budget(12)
def test_plan_trials_without_cwd_each_get_their_own_empty_folder(tmp_path):
    """Two trials of a skill that writes into its working folder, side by side: neither sees, overwrites or takes
    credit for the other's file, and the folder the command ran in stays untouched."""
    plan = subprocess.run([sys.executable, "-m", "live_trial", "plan", "--plugin-dir", str(PLUGINS / "trialkit"),
                           "--eval-root", str(tmp_path / "eval"), "--json"], capture_output=True, text=True, timeout=60)
    doc = json.loads(plan.stdout)
    entry = {"target": "hello:greet", "plugins_root": str(EXAMPLES / "plugins"), "proof": False, "args": "World"}
    doc["live_batches"] = [[entry, dict(entry)]]
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(doc))
    here = tmp_path / "here"
    here.mkdir()
    proc = subprocess.run([sys.executable, "-m", "live_trial", "run", "--plan", str(plan_file), "--eval-root",
                           str(tmp_path / "eval"), "--rehearsal", str(EXAMPLES / "scenarios" / "greet-happy.yaml"),
                           "--json", *FAST], capture_output=True, text=True, timeout=400, cwd=here,
                          env={**os.environ, "PYTHONPATH": str(EXAMPLES.parent)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the two trials, then the plan's trialkit:choose row: it asks a question no suite answers, so no trial
    assert [t["status"] for t in final_json(proc)["trials"]] == ["PASS", "PASS", "NEEDS_ANSWER"]
    assert list(here.iterdir()) == []
    wds = workdirs(tmp_path)
    assert len(wds) == 2
    for wd in wds:
        state = json.loads((wd / "trial-state.json").read_text())
        assert state["cwd"] == str(wd / "cwd")
        assert (wd / "cwd" / "greeting.txt").read_text() == "Hello, World!\n"
        assert json.loads((wd / "side-effects" / "files.json").read_text())["added"] == ["greeting.txt"]
        _no_leftovers(wd)


@pytest.mark.budget(6)
@pytest.mark.parametrize("target,extra,needle", [
    ("nosuch:mark", [], "nosuch"),
    ("trialkit:nosuch", [], "nosuch"),
    ("trialkit:mark", ["--rehearsal", str(EXAMPLES / "plugins" / "hello" / ".claude-plugin" / "plugin.json")], "scenario"),
])
def test_bad_input_is_one_line_exit_2_and_creates_nothing(tmp_path, target, extra, needle):
    args = [target, "--plugins-root", str(PLUGINS)] + (extra or ["--rehearsal", str(SCENARIOS / "mark-happy.yaml")])
    proc = run_cmd(tmp_path, *args)
    assert proc.returncode == 2
    line = json.loads(proc.stdout.strip())
    assert needle in line["message"].lower() and "\n" not in line["message"]
    assert not (tmp_path / "eval").exists()


@pytest.mark.budget(6)
def test_missing_tmux_or_claude_is_blocked_with_a_recorded_verdict(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--claude-bin", "/nonexistent/claude",
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"))
    assert proc.returncode == 3, proc.stderr[-2000:]
    doc = _verdict(final_json(proc))
    assert doc["overall"]["verdict"] == "BLOCKED"
    no_tmux = tmp_path / "no-tmux"
    no_tmux.mkdir()
    proc = run_cmd(no_tmux, "trialkit:mark", "--plugins-root", str(PLUGINS),
                   "--rehearsal", str(SCENARIOS / "mark-happy.yaml"), env={"PATH": "/nonexistent"})
    assert proc.returncode == 3, proc.stderr[-2000:]
    doc = _verdict(final_json(proc))
    assert doc["overall"]["verdict"] == "BLOCKED" and doc["blocked"] is True


@pytest.mark.budget(8)
def test_readme_demo_trial_passes_with_evidence_from_real_files_and_uuids(tmp_path):
    """The README's first command (make demo), with its eval-root moved under tmp_path: the trial works in its own new
    folder <workdir>/cwd, which stays with the workdir and holds only what the session wrote."""
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "greet-happy.yaml"), "--args", "World", *FAST)
    result = final_json(proc)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = _verdict(result)
    wd = workdirs(tmp_path)[0]
    assert json.loads((wd / "trial-state.json").read_text())["cwd"] == str(wd / "cwd")
    assert sorted(p.name for p in (wd / "cwd").iterdir()) == ["greeting.txt"]
    assert (wd / "cwd" / "greeting.txt").read_text() == "Hello, World!\n"
    assert (wd / "side-effects" / "files" / "greeting.txt").read_text() == "Hello, World!\n"
    uuids = {r.get("uuid") for r in records(wd / "transcript.jsonl")}
    sources = [e["source"] for e in doc["evidence"]]
    assert "side-effects/files/greeting.txt" in sources and "out/status.json" not in sources
    assert any(s in uuids for s in sources), "no evidence item cites a real transcript record"
    for s in sources:
        assert s in uuids or (wd / s).is_file()
    _no_leftovers(wd)


@pytest.mark.budget(10)
def test_the_verdict_command_writes_what_run_wrote_for_the_same_workdir(tmp_path):
    """README "The steps, one by one": ``verdict`` with no goal flag takes the evaluator's judgement from
    evaluation.json and every other fact from what the trial recorded; with one clock its verdict.json is the one
    ``run`` wrote, byte for byte."""
    from live_trial.acceptance.verdict import CLOCK_ENV

    clock = {CLOCK_ENV: "2026-11-30T10:16:00.000Z"}
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "greet-happy.yaml"), "--args", "World", *FAST, env=clock)
    assert proc.returncode == 0, proc.stderr[-3000:]
    wd = workdirs(tmp_path)[0]
    run_wrote = (wd / "verdict.json").read_bytes()
    (wd / "verdict.json").rename(tmp_path / "run-verdict.json")
    again = subprocess.run([sys.executable, "-m", "live_trial", "verdict", "--workdir", str(wd), "--target-skill",
                            "hello:greet", "--skill-dir", str(EXAMPLES / "plugins" / "hello" / "skills" / "greet")],
                           capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, **clock})
    assert again.returncode == 0, again.stdout + again.stderr
    assert (wd / "verdict.json").read_bytes() == run_wrote
    doc = json.loads(run_wrote)
    assert (doc["overall"]["verdict"], doc["written_at"], doc["scenario_origin"]) == (
        "PASS", clock[CLOCK_ENV], "rehearsal")
    assert json.loads((wd / "trial-state.json").read_text())["environment"] == doc["environment"]  # recorded at start


@pytest.mark.budget(8)
def test_finished_but_goal_missed_is_degraded_with_a_blocker(tmp_path):
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "greet-eval-fail.yaml"), *FAST)
    result = final_json(proc)
    assert proc.returncode == 6, proc.stderr[-3000:]
    doc = _verdict(result)
    assert (doc["completion"], doc["goal_result"], doc["overall"]["verdict"]) == ("PASS", "FAIL", "DEGRADED")
    assert doc["goal_blockers"] and "greeting.txt" in doc["goal_blockers"][0]
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(18)
def test_resume_after_the_harness_is_killed_continues_the_same_trial(tmp_path):
    proc = popen_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS),
                     "--rehearsal", str(SCENARIOS / "mark-slow.yaml"), "--stall-limit", "30", "--hard-cap", "120")
    try:     # a 5 s answer must not read as a hang under load: this test is about resuming, not the STALL limit
        state = wait_for_state(tmp_path, lambda s: s["phase"] == "polling" and s.get("pane_pid"))
        wait_busy(state)
        wait_polled(state)
        proc.kill()  # SIGKILL: no cleanup at all
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    wd = workdirs(tmp_path)[0]
    assert state["session"] in tmux_sessions(), "the session must outlive its killed harness"
    poll_before = json.loads((wd / "poll-state.json").read_text())
    resumed = subprocess.run([sys.executable, "-m", "live_trial", "run", "--resume", str(wd), "--json"],
                             capture_output=True, text=True, timeout=240)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-3000:]
    doc = _verdict(final_json(resumed))
    assert doc["run_id"] == state["run_id"] and doc["overall"]["verdict"] == "PASS"
    poll_after = json.loads((wd / "poll-state.json").read_text())
    assert poll_after["started_at"] == poll_before["started_at"], "resume must keep the poll clocks"
    log = (wd / "trial-log.jsonl").read_text()
    assert '"resumed"' in log
    _no_leftovers(wd, state)


@pytest.mark.budget(12)
def test_an_api_error_turn_is_named_in_the_verdict(tmp_path):
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "api-error-400.yaml"), *FAST)
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = _verdict(final_json(proc))
    assert (doc["stop_reason"], doc["stall_row"]) == ("api_error", 6)
    assert any("API answered with an error" in n and "400" in n for n in doc["notes"]), doc["notes"]
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(14)
def test_example_plain_question_gets_a_nudge(tmp_path):
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(EXAMPLES / "scenarios" / "plain-question.yaml"), *FAST)
    doc = _verdict(final_json(proc))
    assert doc["nudge_count"] == 1, doc
    assert proc.returncode == 6 and doc["overall"]["verdict"] == "DEGRADED"
    _no_leftovers(workdirs(tmp_path)[0])


@pytest.mark.budget(24)
@pytest.mark.parametrize("scenario, says", [("first-request-400.yaml", "adaptive thinking is not supported"),
                                            ("first-request-hang.yaml", "")])
def test_a_model_that_never_answered_the_task_is_blocked_never_the_skills_failure(tmp_path, scenario, says):
    """README "Whose failure it is": a 400 on the task's first request, or no answer at all, says nothing of the
    skill (the model never saw it run): BLOCKED model_never_answered, the service's own line in the notes. The 400,
    which the CLI does not retry, ends the trial at once, not a STALL limit (here 600 s) later."""
    refused = scenario == "first-request-400.yaml"
    started = time.monotonic()
    proc = run_cmd(tmp_path, "hello:greet", "--plugins-root", str(EXAMPLES / "plugins"),
                   "--rehearsal", str(SCENARIOS / scenario),
                   *(["--stall-limit", "600", "--hard-cap", "900"] if refused else FAST))
    took = time.monotonic() - started
    assert not refused or took < 60, took
    doc = _verdict(final_json(proc))
    assert proc.returncode == 3 and doc["overall"]["verdict"] == "BLOCKED", json.dumps(doc)[-3000:]
    assert doc["stop_reason"] == "model_never_answered" and doc["blocked"], doc["stop_reason"]
    note = next(n for n in doc["notes"] if n.startswith("the model's service never answered the task"))
    assert says in note and (says or note.endswith("so the skill was never reached")), doc["notes"]
    assert any(r.startswith("the skill was never reached") for r in doc["overall"]["reasons"]), doc["overall"]
    _no_leftovers(workdirs(tmp_path)[0])
