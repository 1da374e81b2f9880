"""An activation case in the suite file and in the plan (references/suite-format.md "Activation cases"; README "Does it
start by itself?"): its keys and what is refused; its plan row (its prompt set as its scenario_id, its sessions
counted in the budget, its prompts in live_batches); and reuse only of an activation PASS while the prompts and the
skill listing of the loaded plugins hold, never of an acceptance verdict, never as one."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.acceptance.activation import (
    NOT_TRIGGERED,
    TRIGGERED,
    PromptSample,
    activation_doc,
    decide,
    write_activation,
)
from live_trial.acceptance.activation_reuse import plugin_skills, skills_digest
from live_trial.acceptance.case_plan import entry_case, entry_trials
from live_trial.acceptance.suite import SUITE_FILE, load_suite
from live_trial.errors import RefusedInput
from live_trial.jsonfile import schema_errors
from tests.unit.acceptance.test_plan import env, make_plan, record  # noqa: F401 - env is a fixture

CASE = ("skills:\n  s1:\n    cases:\n      - name: words\n        kind: activation\n        repeats: 2\n"
        "        prompts:\n          - {prompt: make it, should_trigger: true}\n"
        "          - {prompt: not this, should_trigger: false, repeats: 3}\n")


def suite(root: Path, text: str):
    path = root / SUITE_FILE
    path.write_text(text)
    return load_suite(path)


def problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(RefusedInput) as caught:
        suite(tmp_path, text)
    return caught.value.details["problems"]


def test_an_activation_case_reads_its_prompts_and_counts_its_sessions(tmp_path: Path):
    case, = suite(tmp_path, CASE).cases["s1"]
    assert case.activation and [(p.text, p.should_trigger, p.sessions(case.repeats)) for p in case.prompts] == [
        ("make it", True, 2), ("not this", False, 3)]
    assert case.trials() == 5


@pytest.mark.parametrize("extra,words", [
    ("        args: x\n", "args is for the acceptance trial of then_acceptance: true"),
    ("        criteria: [{id: C1, text: t}]\n", "criteria is for the acceptance trial"),
    ("        replay: t.jsonl\n", "a tape holds one session"),
    ("          - {prompt: make it, should_trigger: false}\n", "a prompt is written twice"),
    ("          - {prompt: /hello:greet Ada, should_trigger: true}\n", "prompt 3 starts with /"),
])
def test_what_an_activation_case_cannot_say_is_refused_with_its_line(tmp_path: Path, extra: str, words: str):
    (tmp_path / "t.jsonl").write_text("")
    text = CASE + extra if extra.startswith("          ") else CASE.replace("        repeats: 2\n",
                                                                                "        repeats: 2\n" + extra)
    assert any(words in p for p in problems(tmp_path, text)), problems(tmp_path, text)


def test_prompts_on_a_task_case_are_refused(tmp_path: Path):
    found = problems(tmp_path, "skills:\n  s1:\n    cases:\n      - name: t\n        stop_after_trigger: true\n")
    assert "stop_after_trigger belongs to an activation case: add kind: activation" in found[0]


def test_the_acceptance_keys_are_taken_with_then_acceptance(tmp_path: Path):
    case, = suite(tmp_path, CASE.replace("        repeats: 2\n", "        repeats: 2\n        then_acceptance: true\n"
                                                                      "        args: Ada\n")).cases["s1"]
    assert (case.then_acceptance, case.args, case.trials()) == (True, "Ada", 6)


def test_the_plan_row_is_an_activation_row_with_its_prompts_in_the_batch(env):  # noqa: F811
    doc = make_plan(env, "many", suites={env["plugins"] / "many": suite(env["tmp"], CASE)}, max_live_trials=9)
    assert schema_errors(doc, "plan.schema.json") == []
    row = next(s for s in doc["skills"] if s["target"] == "many:s1" and s["case"] == "words")
    assert (row["kind"], row["action"], row["reason"]) == ("activation", "run", "no activation result yet")
    batch, = [e for b in doc["live_batches"] for e in b if e.get("case") == "words"]
    assert batch["kind"] == "activation" and batch["prompts"] == [
        {"prompt": "make it", "should_trigger": True, "sessions": 2},
        {"prompt": "not this", "should_trigger": False, "sessions": 3}]
    assert entry_trials(batch) == 5 and entry_case(batch).prompts[1].repeats == 3


def test_its_sessions_count_in_the_plans_budget(env):  # noqa: F811
    doc = make_plan(env, "many", suites={env["plugins"] / "many": suite(env["tmp"], CASE)}, max_live_trials=6)
    row = next(s for s in doc["skills"] if s.get("case") == "words")
    others = [s["target"] for s in doc["skills"] if s["action"] == "run" and s.get("case") != "words"]
    assert row["action"] == "run" and len(others) == 1          # 5 sessions + 1 trial: the budget of 6 is spent


def _result(env, scenario_id: str, verdict_of: str = "PASS", *, skills=None, names=None, origin="live") -> Path:
    """An activation run of the case ``words`` of many:s1 recorded as ``verdict_of``."""
    samples = [PromptSample(1, 1, TRIGGERED, "turn_end"), PromptSample(1, 2, TRIGGERED if verdict_of == "PASS" else
                                                                      NOT_TRIGGERED, "turn_end")]
    samples += [PromptSample(2, r, NOT_TRIGGERED, "turn_end") for r in (1, 2, 3)]
    got = decide([("make it", True, 2), ("not this", False, 3)], samples)
    skills = skills if skills is not None else plugin_skills([("many", env["plugins"] / "many")])
    listed = names if names is not None else sorted(skills)
    folder = env["eval"] / "many" / "s1" / "live-trial-activation" / "20261201T000000-aaaa"
    doc = activation_doc(got, samples, run_id=folder.name, target="many:s1", plugin="many", skill="s1", case="words",
                         eval_root=env["eval"], summary="s",
                         listing={"digest": "sha256:" + "0" * 64, "names": listed, "entries": {}},
                         prompt_set=scenario_id, skills_digest=skills_digest(skills), stop_after_trigger=False,
                         retries=(0, 2), stopped=None, origin=origin, scenario=None, claude_version="2.1.332",
                         started_at="2026-12-01T00:00:00Z", written_at="2026-12-01T00:00:20Z")
    return write_activation(folder, doc)


def _row(env) -> dict:
    doc = make_plan(env, "many", suites={env["plugins"] / "many": suite(env["tmp"], CASE)}, max_live_trials=9)
    return next(s for s in doc["skills"] if s.get("case") == "words")


def test_an_activation_pass_is_reused_while_the_prompts_and_the_listing_hold(env):  # noqa: F811
    prompt_set = _row(env)["scenario_id"]
    path = _result(env, prompt_set)
    row = _row(env)
    assert row["action"] == "reuse", row["reason"]
    assert row["reason"].startswith("activation PASS with the same prompts and the same skill listing")
    assert row["verdict"] == str(path.relative_to(env["eval"]))
    skill_md = env["plugins"] / "many" / "skills" / "s2" / "SKILL.md"   # a sibling's description changes the listing
    skill_md.write_text("---\nname: s2\ndescription: now it greets too\nallowed-tools: [Skill]\n---\n")
    row = _row(env)
    assert (row["action"], row["reason"].split(":")[0]) == ("run", "the skill listing changed")


def test_a_new_sibling_skill_changes_the_listing(env):  # noqa: F811
    prompt_set = _row(env)["scenario_id"]
    _result(env, prompt_set)
    (env["plugins"] / "many" / "skills" / "s9").mkdir()
    (env["plugins"] / "many" / "skills" / "s9" / "SKILL.md").write_text("---\nname: s9\n---\n")
    assert _row(env)["action"] == "run"


def test_other_prompts_or_a_flaky_result_run_again_and_an_acceptance_pass_never_stands_for_it(env):  # noqa: F811
    prompt_set = _row(env)["scenario_id"]
    record(env, "many:s1", "20261130T101500-aaaa")              # an acceptance PASS of the skill
    assert _row(env)["action"] == "run"
    _result(env, "sha256:" + "2" * 64)                          # a result of other prompts
    row = _row(env)
    assert (row["action"], row["reason"]) == ("run", "the prompts (or their scenario) changed since the last "
                                                     "activation run")
    _result(env, prompt_set, "FLAKY")
    row = _row(env)
    assert row["action"] == "run" and "a FLAKY activation is never reused" in row["reason"]


def test_a_rehearsals_result_is_never_reused_for_the_real_model(env):  # noqa: F811
    _result(env, "sha256:" + "3" * 64, origin="rehearsal")      # its prompt set names its scenario
    row = _row(env)
    assert row["action"] == "run" and row["reason"].startswith("the last activation run was a rehearsal: a scripted "
                                                               "model's choice is never reused for the real model")
