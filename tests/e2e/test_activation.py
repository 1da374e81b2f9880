"""Does the skill start by itself (README "Does it start by itself?"): an activation case of the example skill
``hello:greet`` on the real CLI in real tmux, its model played by a script that tells the prompts apart.

One case of five prompts, each pasted alone into a session of its own, two at a time: the should-trigger prompts the
script answers with the Skill call (by its qualified and by its bare name) are right; the should-not prompt it answers
with the Skill call is wrong and named first; the should-trigger prompt it answers with the sibling skill is wrong and
names the sibling; the plain answer is right. After each call of the skill the script's next message hangs and the
STALL limit is far above this test's own time: only ``stop_after_trigger`` ends those sessions, and nothing of them is
left running. The pasted text is the prompt alone: the skill's name is nowhere in it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.transcript.records import human_prompts, prompt_text
from tests.e2e.run_support import EXAMPLES, SCENARIOS, carrying_tag, final_json, records, run_cmd, tmux_sessions

pytestmark = pytest.mark.e2e

PROMPTS = [("Please write a file that welcomes Ada.", True), ("Could you make me a welcome file for Bob?", True),
           ("What is 2 + 2?", False), ("Welcome me in a style I pick.", True), ("Tell me a joke.", False)]
#: far above the test's own time: a session still waiting for the hung message when the test ends would fail it
STALL_LIMIT_S = 600


def suite(tmp_path: Path) -> Path:
    lines = ["skills:", "  greet:", "    cases:", "      - name: choices", "        kind: activation",
             "        prompts:"]
    lines += [f"          - {{prompt: {json.dumps(p)}, should_trigger: {str(s).lower()}}}" for p, s in PROMPTS]
    lines += ["        stop_after_trigger: true", f"        scenario: {SCENARIOS / 'activation-choices.yaml'}",
              f"        stall_limit: {STALL_LIMIT_S}", "        hard_cap: 900"]
    path = tmp_path / "live-trials.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.budget(30)
def test_prompts_pasted_alone_start_the_skill_or_not_as_the_transcript_shows(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = run_cmd(tmp_path, "hello:greet", "--case", "choices", "--suite", str(suite(tmp_path)), "--plugins-root",
                   str(EXAMPLES / "plugins"), "--max-concurrency", "2", timeout=120)
    took = time.monotonic() - started
    out = final_json(proc)
    assert (proc.returncode, out["status"], out["kind"]) == (1, "FAIL", "activation"), proc.stderr[-2000:]
    doc = json.loads(Path(out["verdict_path"]).read_text())
    assert schema_errors(doc, "activation.schema.json") == []
    # what the five sessions cost, added up (README "What a trial costs"): a rehearsal paid nothing, its scripted
    # tokens are priced at list price (or the model is named as unpriced)
    usage = out["usage"]
    assert usage == doc["usage"] and usage["billed"] is False and usage["cost_usd"] == 0, usage
    assert usage["estimate_usd"] > 0 or usage.get("unpriced_models"), usage
    by_n = {p["n"]: p for p in doc["prompts"]}
    assert {n: (p["status"], p["triggered"], p["samples"]) for n, p in by_n.items()} == {
        1: ("right", 1, 1), 2: ("right", 1, 1), 3: ("wrong", 1, 1), 4: ("wrong", 0, 1), 5: ("right", 0, 1)}
    assert [p["n"] for p in doc["prompts"]][:2] == [3, 4]         # the prompts that went wrong come first
    assert doc["reasons"][0].startswith('prompt 3 "What is 2 + 2?" should not start the skill: it did in 1 of 1')
    assert "invoked at step 0" in doc["reasons"][0]
    assert doc["reasons"][1].startswith('prompt 4 "Welcome me in a style I pick." should start the skill')
    assert "hello:greet-style invoked instead" in doc["reasons"][1]
    assert doc["confusion"] == {"true_positive": 2, "false_negative": 1, "false_positive": 1, "true_negative": 1}
    assert (doc["precision"], doc["recall"]) == (round(2 / 3, 4), round(2 / 3, 4))
    runs = {p["n"]: p["runs"][0] for p in doc["prompts"]}
    assert (runs[1]["via"], runs[1]["step"], runs[2]["via"], runs[2]["step"]) == ("skill_call", 0, "skill_call", 0)
    assert (runs[4]["others"], runs[4]["ended"], runs[4]["note"]) == (["hello:greet-style"], "gate",
                                                                      "Which greeting style?")
    assert runs[4]["step"] is None and runs[5]["ended"] == "turn_end"
    # the hung sessions were ended right after the skill was invoked, long before the STALL limit
    assert [runs[n]["ended"] for n in (1, 2, 3)] == ["stopped_after_trigger"] * 3
    assert took < 90 and all(runs[n]["seconds"] < 30 for n in (1, 2, 3)), (took, runs)
    root = tmp_path / "eval"
    sessions = []
    for p in doc["prompts"]:
        workdir = root / p["runs"][0]["workdir"]
        state = json.loads((workdir / "trial-state.json").read_text())
        sessions.append(state["session"])
        pasted = (workdir / "task.md").read_text()
        assert pasted == p["prompt"]                             # the prompt alone: no Skill literal, no marker
        prompt, = human_prompts(records(workdir / "transcript.jsonl"))
        assert prompt_text(prompt).strip() == p["prompt"]
        assert "greet" not in pasted.lower() and "hello" not in pasted.lower()
        assert not (workdir / "verdict.json").exists()           # an activation session is never an acceptance trial
    # nothing of any session is left: no tmux session, no process carrying a session's tag
    assert [s for s in sessions if s in tmux_sessions()] == []
    assert [s for s in sessions if carrying_tag(s)] == []
    page = (Path(out["workdir"]) / "report.html").read_text()
    assert "What is 2 + 2?" in page and "hello:greet-style" in page and 'id="precision"' in page


@pytest.mark.budget(20)
def test_a_scenario_that_answers_nothing_after_the_skill_call_is_no_gap_when_the_case_stops_at_the_trigger(
        tmp_path: Path) -> None:
    """The CLI asks its next request right after the Skill call, often before the harness's Escape: a scenario with
    no rule for it must not turn the trigger the case measures into a BLOCKED session (README "Does it start by
    itself?"); the gap is named in the run's note."""
    lines = ["skills:", "  greet:", "    cases:", "      - name: gap", "        kind: activation", "        prompts:",
             '          - {prompt: "Please write a file that welcomes Ada.", should_trigger: true}',
             '          - {prompt: "What is 2 + 2?", should_trigger: false}',
             "        stop_after_trigger: true", f"        scenario: {SCENARIOS / 'activation-gap-after-call.yaml'}",
             f"        stall_limit: {STALL_LIMIT_S}", "        hard_cap: 900"]
    (tmp_path / "live-trials.yaml").write_text("\n".join(lines) + "\n")
    proc = run_cmd(tmp_path, "hello:greet", "--case", "gap", "--suite", str(tmp_path / "live-trials.yaml"),
                   "--plugins-root", str(EXAMPLES / "plugins"), "--max-concurrency", "2", timeout=120)
    out = final_json(proc)
    assert (proc.returncode, out["status"]) == (0, "PASS"), (out.get("reasons"), proc.stderr[-2000:])
    doc = json.loads(Path(out["verdict_path"]).read_text())
    runs = {p["n"]: p["runs"][0] for p in doc["prompts"]}
    assert (runs[1]["outcome"], runs[1]["ended"], runs[1]["step"]) == ("triggered", "stopped_after_trigger", 0), runs
    assert (runs[2]["outcome"], runs[2]["ended"]) == ("not_triggered", "turn_end"), runs
    # when the gap was met before the Escape, the run says so (the race goes either way: both are a trigger)
    assert runs[1]["note"] is None or "the scenario does not cover this run" in runs[1]["note"], runs[1]
