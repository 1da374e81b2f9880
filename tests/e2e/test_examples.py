"""Every example scenario (examples/scenarios/, README "The steps, one by one") reaches the state its name and its
header promise when ``live-trial run --rehearsal`` plays it to its example skill (``hello:greet``, or
``hello:greet-style`` for the one that asks for a style) on the real CLI: each
calls the skill (launch PASS), then shows its gate, nudge, missing marker, API error, hang, silent tool, slow stream or
retried overload, and ends with the stop reason and verdict written in its header."""
from __future__ import annotations

import json

import pytest

from tests.e2e.run_support import EXAMPLES, final_json, no_leftovers, run_cmd, verdict_doc, workdirs

pytestmark = pytest.mark.e2e

HELLO = ["--plugins-root", str(EXAMPLES / "plugins"), "--hard-cap", "90"]
#: the skill a scenario plays when it is not hello:greet, and its arguments when not World
TARGETS = {"greet-style-casual": "hello:greet-style"}
ARGS = {"greet-ada": "Ada"}
#: where the example scenarios are: examples/scenarios/, and the ones the example plugin's suite plays, in the plugin
FOLDERS = (EXAMPLES / "scenarios", EXAMPLES / "plugins" / "hello" / "scenarios")


def scenario(name: str):
    return next(folder / f"{name}.yaml" for folder in FOLDERS if (folder / f"{name}.yaml").is_file())

#: scenario -> (extra run options, exit code, overall, stop reason, STALL row, more fields of the verdict)
EXPECTED = {
    "greet-happy": ([], 0, "PASS", None, None, {"goal_result": "PASS"}),
    "greet-eval-fail": ([], 6, "DEGRADED", None, None, {"goal_result": "FAIL"}),
    "ask-user-question": (["--gate-response", "Blue"], 6, "DEGRADED", None, None,
                          {"gate_response_count": 1, "goal_result": "PASS"}),
    "plain-question": ([], 6, "DEGRADED", None, 4, {"nudge_count": 1, "goal_result": "PASS"}),
    "done-no-marker": ([], 1, "FAIL", "contract_violation", 5, {"completion": "FAIL"}),
    "api-error-400": ([], 1, "FAIL", "api_error", 6, {"completion": "FAIL"}),
    "hang": (["--stall-limit", "3"], 1, "FAIL", "hang", 2, {"completion": "FAIL"}),
    "overloaded-then-ok": ([], 0, "PASS", None, None, {"goal_result": "PASS"}),
    "bash-sleep": (["--stall-limit", "10"], 0, "PASS", None, None, {"goal_result": "PASS"}),
    "slow-stream": (["--stall-limit", "30"], 0, "PASS", None, None, {"goal_result": "PASS"}),
    "greet-ada": ([], 0, "PASS", None, None, {"goal_result": "PASS"}),
    # the activation case's scenario also plays the acceptance task of its then_acceptance trial
    "greet-activation": ([], 0, "PASS", None, None, {"goal_result": "PASS"}),
    "greet-style-casual": (["--gate-response-contractual", "Casual"], 0, "PASS", None, None,
                           {"goal_result": "PASS", "gate_kind": "contractual", "gate_response_count": 1}),
}


@pytest.mark.budget(1)
def test_the_table_names_every_example_scenario():
    assert sorted(EXPECTED) == sorted(p.stem for folder in FOLDERS for p in folder.glob("*.yaml"))


@pytest.mark.budget(20)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_reaches_its_named_state(name, tmp_path):
    extra, code, overall, stop, row, fields = EXPECTED[name]
    limits = [] if "--stall-limit" in extra else ["--stall-limit", "4"]
    proc = run_cmd(tmp_path, TARGETS.get(name, "hello:greet"), *HELLO, "--args", ARGS.get(name, "World"),
                   "--rehearsal", str(scenario(name)), *extra, *limits)
    doc = verdict_doc(final_json(proc))
    assert (proc.returncode, doc["overall"]["verdict"]) == (code, overall), (doc["overall"], doc["notes"])
    assert doc["launch"] == "PASS", doc["notes"]                # it called the skill: never "launch failed"
    assert (doc["stop_reason"], doc["stall_row"]) == (stop, row), doc["notes"]
    assert {k: doc[k] for k in fields} == fields
    wd = workdirs(tmp_path)[0]
    log = [json.loads(line) for line in (wd / "trial-log.jsonl").read_text().splitlines()]
    stalls = [e["decision"] for e in log if e["step"] == "stall"]
    if name in ("bash-sleep", "slow-stream", "overloaded-then-ok", "greet-happy", "greet-style-casual", "greet-ada",
                "greet-activation"):
        assert stalls == [], stalls                              # a silent tool or a slow stream is no STALL
    if name == "hang":
        assert stalls == ["extend", "hang"]                      # twice the STALL limit once, then a hang
    if name == "ask-user-question":
        assert [(a["question"], a["answer"], a["kind"]) for a in doc["gate_answers"]] == [
            ("Which colour should the greeting use?", "Blue", "rescue")]
        assert json.loads((wd / "out" / "status.json").read_text())["summary"] == "asked; answer: Blue"
    if name == "greet-ada":
        assert 'args: "Ada"' in (wd / "task.md").read_text()
        assert (wd / "cwd" / "greeting.txt").read_text() == "Hello, Ada!\n"
    if name == "greet-style-casual":
        assert [(a["question"], a["answer"], a["kind"]) for a in doc["gate_answers"]] == [
            ("Which greeting style?", "Casual", "contractual")]
        assert (wd / "cwd" / "greeting.txt").read_text() == "Hi, World!\n"
    if name == "api-error-400":
        assert any("API answered with an error" in n and "400" in n for n in doc["notes"]), doc["notes"]
    if doc["goal_result"] == "PASS":
        assert "side-effects/files/greeting.txt" in [e["source"] for e in doc["evidence"]]
    no_leftovers(wd)
