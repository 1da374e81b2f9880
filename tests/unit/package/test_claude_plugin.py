"""The harness as a Claude Code plugin (README "Use it from Claude Code"): the marketplace names the plugin in this
repository, the skill ``run-skill-live-trial`` carries the seed's frontmatter (seed 001: argument-hint, arguments,
user-invocable, allowed-tools limited to what it runs), its steps are the README's by-hand steps in the same order,
and the harness refuses it as a trial target (seed 001 "被験 skill denylist")."""
from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import pytest
import yaml

from live_trial.acceptance.delivery_state import transitions
from live_trial.cli.main import main
from live_trial.policy import improvement_max_iterations
from live_trial.resources import repo_root

ROOT = repo_root()
PLUGINS = ROOT / "claude-plugin"
PLUGIN = PLUGINS / "live-trial"
SKILL = PLUGIN / "skills" / "run-skill-live-trial" / "SKILL.md"


def frontmatter() -> dict:
    return yaml.safe_load(SKILL.read_text(encoding="utf-8").split("---\n", 2)[1])


def harness_steps(block: str) -> list[str]:
    """The harness commands of a shell block in order: ``live-trial <verb>`` (with the sub-verb of ``rehearsal`` and
    ``backend``), wherever a command starts (line start, after ``;``)."""
    found = re.findall(r"(?:^|;)\s*live-trial ([a-z-]+)(?: (serve|kill-session))?", block, re.M)
    return [" ".join(x for x in pair if x) for pair in found]


def fenced(text: str, start: str, end: str) -> str:
    block = text.split(start, 1)[1].split(end, 1)[0]
    return block.split("```bash\n", 1)[1].rsplit("```", 1)[0]


def test_the_marketplace_names_the_plugin_folder_and_its_manifest():
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    (entry,) = market["plugins"]
    assert (ROOT / entry["source"]).resolve() == PLUGIN.resolve()
    assert entry["name"] == manifest["name"] == "live-trial"
    assert entry["version"] == manifest["version"]


def test_the_skill_frontmatter_has_the_seeds_meaning_and_runs_only_the_harness():
    fm = frontmatter()
    assert fm["name"] == "run-skill-live-trial" and fm["user-invocable"] is True
    assert fm["argument-hint"] == "<plugin:skill> [args] [--proof] [--model <model-id>]"
    assert fm["arguments"] == ["target_skill", "trial_args", "proof_mode", "model"]
    assert "fresh" in fm["description"] and "verdict" in fm["description"]
    bash = [t for t in fm["allowed-tools"] if t.startswith("Bash")]
    assert all(re.fullmatch(r"Bash\((live-trial \*|python3 -m live_trial \*|command -v live-trial|"
                            r"STALL_LIMIT=\* live-trial poll \*)\)", t) for t in bash), bash


def body() -> str:
    return SKILL.read_text(encoding="utf-8").split("---\n", 2)[2]


def test_the_skill_allows_exactly_the_tools_its_body_calls():
    """Each tool the body calls ("the X tool", "with the X tool") is allowed and nothing else is; each Bash command
    the body runs matches an allowed Bash pattern, and each Bash pattern is used."""
    tools = frontmatter()["allowed-tools"]
    called = set(re.findall(r"\b(Read|Edit|Write|TaskStop|AskUserQuestion|Glob|Grep|Agent|Task|Skill|WebFetch|"
                            r"NotebookEdit|TodoWrite) tool\b", body()))
    assert called == {t for t in tools if not t.startswith("Bash")}, called
    commands = [c.strip() for c in re.findall(r"`((?:STALL_LIMIT=\d+ )?live-trial [^`]+|command -v live-trial|"
                                              r"python3 -m live_trial [^`]+)`", body())]
    commands += [line.split("#", 1)[0].strip() for line in fenced(body(), "<!-- steps:start -->",
                                                                    "<!-- steps:end -->").splitlines()
                 if line.startswith("live-trial")]
    patterns = [t[len("Bash("):-1] for t in tools if t.startswith("Bash(")]
    for command in commands:
        assert any(fnmatch.fnmatchcase(command, p) for p in patterns), command
    for pattern in patterns:
        assert any(fnmatch.fnmatchcase(c, pattern) for c in commands), f"{pattern} is allowed but never run"


def test_every_path_the_frontmatter_names_exists_and_the_loop_bound_is_the_policys():
    fm = frontmatter()
    refs = [r for key in ("schema_refs", "reference_refs", "script_refs") for r in fm[key]]
    assert refs and all((SKILL.parent / r).resolve().is_file() for r in refs), [
        r for r in refs if not (SKILL.parent / r).resolve().is_file()]
    named = {Path(r).name for r in fm["schema_refs"]}
    assert {"live-trial-verdict.schema.json", "delivery.schema.json", "improvement.schema.json"} <= named
    assert {"delivery_cmd.py", "verdict_cmd.py", "evaluate_cmd.py"} <= {Path(r).name for r in fm["script_refs"]}
    contract = fm["feedback_contract"]
    assert contract["activation_state"] == "semantic_evaluator_started"
    assert contract["max_iterations"] == improvement_max_iterations() == 3
    assert [c["id"] for c in contract["criteria"]] == ["IN1", "IN2", "OUT1", "OUT2", "OUT3"]
    machine = fm["artifact_delivery"]["state_machine"]
    spelled = {(t["from"], e, t["to"]) for t in machine["transitions"] for e in t["event"].split("|")}
    assert spelled == {(f, e, t) for (f, e), t in transitions().items() if f is not None}
    assert machine["pre_choice_forbidden"] == ["semantic-evaluator", "task-fork", "subagent", "multi-worker",
                                               "revise-loop"]


def test_the_skill_steps_are_the_readme_delivery_steps_in_the_same_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    readme = harness_steps(fenced(text, "<!-- delivery:start -->", "<!-- delivery:end -->"))
    skill = harness_steps(fenced(SKILL.read_text(encoding="utf-8"), "<!-- steps:start -->", "<!-- steps:end -->"))
    assert readme == ["prepare", "boot", "send", "poll", "collect", "verdict", "backend kill-session", "reap",
                      "delivery", "delivery", "delivery", "delivery", "evaluate", "verdict"], readme
    assert [step for step in skill if step != "rehearsal serve"] == readme
    assert harness_steps(fenced(text, "<!-- by-hand:start -->", "<!-- by-hand:end -->")) == [
        "prepare", "rehearsal serve", "boot", "send", "poll", "collect", "evaluate", "verdict",
        "backend kill-session", "reap"]


def test_the_skill_passes_proof_and_model_through_and_re_calls_poll_with_its_state_file():
    body = SKILL.read_text(encoding="utf-8").split("---\n", 2)[2]
    steps = fenced(body, "<!-- steps:start -->", "<!-- steps:end -->")
    assert "[--proof] [--model <model-id>]" in steps.split("live-trial rehearsal", 1)[0]   # given to prepare
    assert "--state-file <WORKDIR>/poll-state.json" in steps
    assert "same `--state-file`" in body and "600000" in body
    assert "verdict.json" in body and "python3 -m live_trial" in body and "live_trial is not installed: run `pip install" in body


@pytest.mark.parametrize("verb", ["run", "prepare"])
def test_the_harness_refuses_its_own_skill_as_a_trial_target(tmp_path, capsys, monkeypatch, verb):
    """`live-trial run live-trial:run-skill-live-trial` is refused: exit 2, one line naming the denylist, nothing
    created (a trial of it would start trials inside a trial)."""
    monkeypatch.chdir(tmp_path)
    code = main([verb, "live-trial:run-skill-live-trial", "--plugins-root", str(PLUGINS),
                 "--eval-root", str(tmp_path / "eval")])
    out = capsys.readouterr()
    assert code == 2
    line = (out.out + out.err).strip()
    assert line.startswith("REFUSED: run-skill-live-trial cannot be a trial target") and "\n" not in line, line
    assert list(tmp_path.iterdir()) == []


def test_the_readme_adds_and_installs_the_plugin_by_the_names_the_marketplace_gives():
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it from Claude Code\n", 1)[1].split("\n## ", 1)[0]
    plugin = market["plugins"][0]["name"]
    assert f"/plugin install {plugin}@{market['name']}" in section
    assert f"claude plugin install {plugin}@{market['name']}" in section
    assert f"/{plugin}:run-skill-live-trial " in section and "/plugin marketplace add " in section


def test_a_plan_of_the_plugin_refuses_its_skill(tmp_path, capsys, monkeypatch):
    """``plan`` over the plugin itself lists its one skill as ``refused`` with the denylist's reason, writing nothing."""
    monkeypatch.chdir(tmp_path)
    code = main(["plan", "--plugin-dir", str(PLUGIN), "--plugins-root", str(PLUGINS), "--eval-root",
                 str(tmp_path / "eval"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [(s["target"], s["action"]) for s in doc["skills"]] == [("live-trial:run-skill-live-trial", "refused")]
    assert "cannot be a trial target" in doc["skills"][0]["reason"]
    assert list(tmp_path.iterdir()) == []
