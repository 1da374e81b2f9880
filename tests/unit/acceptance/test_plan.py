"""plan: tiers, reuse rules (and tampering), budget and batches, profiles, proof, watching (seed 001 事前計画)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from live_trial.acceptance.plan import SCHEMA, plan
from live_trial.acceptance.tier import derive_tier
from live_trial.acceptance.verdict import write_trial_verdict
from live_trial.acceptance.verdict_doc import sha256_file
from live_trial.cli.main import main
from live_trial.closure.target import resolve_target
from live_trial.jsonfile import schema_errors
from live_trial.transcript.builder import TranscriptBuilder
from tests.unit.fakes import skill_call, write_evaluation, write_poll_state, write_state

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"


@pytest.fixture()
def env(tmp_path: Path) -> dict:
    plugins = tmp_path / "plugins"
    shutil.copytree(FIXTURE, plugins)
    many = plugins / "many"
    (many / ".claude-plugin").mkdir(parents=True)
    (many / ".claude-plugin" / "plugin.json").write_text('{"name": "many"}')
    for i in range(1, 6):
        (many / "skills" / f"s{i}").mkdir(parents=True)
        (many / "skills" / f"s{i}" / "SKILL.md").write_text(f"---\nname: s{i}\nallowed-tools: [Skill]\n---\n")
    (many / "skills" / "reader").mkdir(parents=True)
    (many / "skills" / "reader" / "SKILL.md").write_text("---\nname: reader\nallowed-tools: Read, Grep\n---\n")
    return {"plugins": plugins, "eval": tmp_path / "eval-log", "tmp": tmp_path}


def record(env: dict, target: str, run_id: str, *, origin: str = "live", scenario: Path | None = None, **kw) -> Path:
    """Write a verdict for ``target`` the way a trial does (with a transcript); return its workdir."""
    plugin, skill = target.split(":")
    wd = env["eval"] / plugin / skill / "live-trial" / run_id
    wd.mkdir(parents=True)
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.turn("run", "DONE: ok")
    b.write(wd / "transcript.jsonl")
    if origin == "rehearsal":  # a rehearsal verdict comes from a rehearsal workdir (its trial-state.json says so)
        write_state(wd, plugin, skill, rehearsal={"scenario": str(scenario or "scen.yaml"), "port": 1})
    args = dict(workdir=wd, target=resolve_target(target, env["plugins"]), plugins_root=env["plugins"],
                session_id="s", requested_model=None, launch="PASS", completion="PASS", goal_result="PASS",
                poll_exit="DONE", scenario_origin=origin, scenario_path=scenario, claude_version="2.1.197",
                tmux_version="3.3a")
    args.update(kw)
    write_trial_verdict(**args)
    return wd


def make_plan(env: dict, *dirs: str, **kw) -> dict:
    kw.setdefault("watches", [])
    doc = plan([env["plugins"] / d for d in (dirs or ("union-target",))], env["eval"], **kw)
    assert schema_errors(doc, SCHEMA) == []
    return doc


def entry(doc: dict, target: str) -> dict:
    return next(s for s in doc["skills"] if s["target"] == target)


# ------------------------------------------------------------------ tiers
@pytest.mark.parametrize("frontmatter, tier", [
    ({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}, "live"),
    ({"allowed-tools": ["Read", "Skill"]}, "live"),
    ({"allowed-tools": "Agent"}, "live"),
    ({"allowed-tools": "Read, AskUserQuestion"}, "live"),
    ({"allowed-tools": ["ExitPlanMode"]}, "live"),
    ({"allowed-tools": ["Bash(python3 *)", "Read"]}, "fork"),
    ({"allowed-tools": "Write"}, "fork"),
    ({"allowed-tools": "Edit"}, "fork"),
    ({"allowed-tools": "Read", "goal_seek": {"engine": "inline"}}, "fork"),
    ({"allowed-tools": "Read, Grep, Glob"}, "static"),
    ({}, "static"),
])
def test_derive_tier(frontmatter, tier) -> None:
    assert derive_tier(frontmatter) == tier


# ------------------------------------------------------------------ reuse
def test_first_plan_runs_live_skills_only(env) -> None:
    doc = make_plan(env)
    assert entry(doc, "union-target:work")["action"] == "run"
    assert entry(doc, "union-target:work")["reason"] == "no verdict yet"
    assert entry(doc, "union-target:solo")["action"] == "not_live"   # Read, Write → fork
    assert doc["live_batches"] == [[{"target": "union-target:work", "plugins_root": str(env["plugins"].resolve()),
                                     "proof": False, "args": ""}]]
    assert not env["eval"].exists()  # planning creates nothing


def test_live_pass_is_reused_and_stays_reused(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    for _ in range(2):
        doc = make_plan(env)
        e = entry(doc, "union-target:work")
        assert e["action"] == "reuse", e["reason"]
        assert e["verdict"] == "union-target/work/live-trial/20261130T101500-aaaa/verdict.json"
        assert doc["live_batches"] == []


@pytest.mark.parametrize("path", ["union-target/skills/work/SKILL.md", "union-contract-dep/hooks/session_start.py",
                                  "union-manifest-dep/.claude-plugin/plugin.json"])
def test_one_byte_in_the_closure_makes_it_run(env, path) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    f = env["plugins"] / path
    f.write_bytes(f.read_bytes() + b"\n")
    e = entry(make_plan(env), "union-target:work")
    assert (e["action"], e["reason"]) == ("run", "behaviour closure changed since the last PASS")


def test_change_outside_the_closure_keeps_reuse(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    (env["plugins"] / "union-unused-dep" / "hooks" / "session_start.py").write_text("changed")
    (env["plugins"] / "union-target" / "references" / "unrelated.md").write_text("changed")
    assert entry(make_plan(env), "union-target:work")["action"] == "reuse"


def test_tampered_overall_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa", nudge_count=1)   # honest DEGRADED
    doc = json.loads((wd / "verdict.json").read_text())
    assert doc["overall"]["verdict"] == "DEGRADED"
    doc["overall"] = {"verdict": "PASS", "reasons": []}
    (wd / "verdict.json").write_text(json.dumps(doc))
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "does not follow from its inputs" in e["reason"]


def test_tampered_transcript_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    with open(wd / "transcript.jsonl", "ab") as fh:
        fh.write(b"\n")
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "transcript does not match" in e["reason"]


def test_missing_transcript_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    (wd / "transcript.jsonl").unlink()
    assert entry(make_plan(env), "union-target:work")["action"] == "run"


def test_schema_invalid_verdict_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    doc = json.loads((wd / "verdict.json").read_text())
    doc["extra"] = 1
    (wd / "verdict.json").write_text(json.dumps(doc))
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "does not fit the verdict schema" in e["reason"]


def test_unreadable_verdict_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    (wd / "verdict.json").write_text("{")
    assert "not readable JSON" in entry(make_plan(env), "union-target:work")["reason"]


def test_rehearsal_verdict_is_never_reused(env) -> None:
    scen = env["tmp"] / "scen.yaml"
    scen.write_text("rules: []\n")
    record(env, "union-target:work", "20261130T101500-aaaa", origin="rehearsal", scenario=scen)
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "rehearsal verdicts are never reused" in e["reason"]
    # plan --rehearsal-reuse SCENARIO: the rehearsal PASS counts, and the row and the plan say so
    doc = make_plan(env, reuse_rehearsal=True, scenario_path=scen)
    e = entry(doc, "union-target:work")
    assert e["action"] == "reuse" and "reused only because of --rehearsal-reuse" in e["reason"], e["reason"]
    assert doc["reuse_rehearsal"] is True and doc["rehearsal_scenario"] == str(scen.resolve())


def test_newest_verdict_decides(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    record(env, "union-target:work", "20261130T111500-bbbb", goal_result="FAIL")
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and e["reason"].startswith("last verdict is DEGRADED")


def test_scenario_change_makes_it_run(env, monkeypatch) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa", args="--fast")
    e = entry(make_plan(env), "union-target:work")
    assert (e["action"], e["reason"]) == ("run", "task contract (scenario_id) changed since the last PASS")


# ------------------------------------------------------------------ budget, profiles, proof, watching
def test_budget_batches_and_defer(env) -> None:
    doc = make_plan(env, "many", max_live_trials=3, max_concurrency=2)
    assert [[e["target"] for e in b] for b in doc["live_batches"]] == [["many:s1", "many:s2"], ["many:s3"]]
    assert doc["deferred"] == ["many:s4", "many:s5"]
    assert "over budget (--max-live-trials 3)" in entry(doc, "many:s4")["reason"]
    assert entry(doc, "many:reader")["action"] == "not_live"
    assert doc["counts"] == {"reuse": 0, "run": 3, "defer": 2, "watching": 0, "not_live": 1, "refused": 0,
                             "needs_answer": 0}


def test_zero_budget_defers_everything(env) -> None:
    doc = make_plan(env, "many", max_live_trials=0)
    assert doc["live_batches"] == [] and len(doc["deferred"]) == 5


def test_reuse_does_not_use_budget(env) -> None:
    record(env, "many:s1", "20261130T101500-aaaa")
    doc = make_plan(env, "many", max_live_trials=2)
    assert entry(doc, "many:s1")["action"] == "reuse"
    assert [e["target"] for b in doc["live_batches"] for e in b] == ["many:s2", "many:s3"]


def test_exhaustive_reruns_every_live_skill(env) -> None:
    record(env, "many:s1", "20261130T101500-aaaa")
    doc = make_plan(env, "many", profile="exhaustive", max_live_trials=2, max_concurrency=2)
    assert [e["target"] for b in doc["live_batches"] for e in b] == [f"many:s{i}" for i in range(1, 6)]
    assert len(doc["live_batches"]) == 3 and doc["deferred"] == []


def test_proof_is_never_reused(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa", proof=True, requested_model="claude-opus-4-8")
    doc = make_plan(env, proof=True)
    e = entry(doc, "union-target:work")
    assert e["action"] == "run" and "proof" in e["reason"]
    assert doc["live_batches"][0][0]["proof"] is True


def test_open_watch_means_watching(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    doc = make_plan(env, watches=[{"id": "w-1", "target": "union-target:work", "status": "open"}])
    e = entry(doc, "union-target:work")
    assert (e["action"], e["watch_ids"]) == ("watching", ["w-1"]) and doc["live_batches"] == []
    assert entry(make_plan(env, watches=[{"id": "w-1", "target": "union-target:work"}], proof=True),
                 "union-target:work")["action"] == "run"


def test_a_watch_never_hides_a_change_of_the_skill(env, capsys) -> None:
    """Seed 000 + README "Planning": the closure is compared first; an edited skill under watch runs again and its
    old watch is closed quietly (no notice) by the plan command."""
    from live_trial.notices import watch
    from live_trial.notices.notify import read_notifications

    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    sha = json.loads((wd / "verdict.json").read_text())["skill_dir_tree_sha"]
    old = watch.register_watch(env["eval"], objective="o", unverified="u", target="union-target:work",
                               workdir=str(wd), closure=sha)
    by_verdict = watch.register_watch(env["eval"], objective="o", unverified="u2", target="union-target:work",
                                      workdir=str(wd))                       # no closure: read from its verdict
    assert entry(make_plan(env, watches=watch.open_watches(env["eval"])), "union-target:work")["action"] == "watching"
    md = env["plugins"] / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text() + "\nOne more step.\n")
    e = entry(make_plan(env, watches=watch.open_watches(env["eval"])), "union-target:work")
    assert (e["action"], e["watch_ids"], e["superseded_watch_ids"]) == ("run", [], [old["id"], by_verdict["id"]])
    assert e["reason"].startswith("behaviour closure changed since the last PASS; watch ") and "superseded" in e["reason"]
    before = len(read_notifications(env["eval"]))
    assert main(["plan", "--plugin-dir", str(env["plugins"] / "union-target"), "--eval-root", str(env["eval"]),
                 "--json"]) == 0
    assert entry(json.loads(capsys.readouterr().out.strip().splitlines()[-1]), "union-target:work")["action"] == "run"
    ledger = {w["id"]: w for w in watch.load_ledger(env["eval"])["watches"]}
    assert {ledger[i]["status"] for i in (old["id"], by_verdict["id"])} == {"superseded"}
    assert ledger[old["id"]]["history"][-1]["event"] == "superseded" and not ledger[old["id"]]["notified"]
    assert len(read_notifications(env["eval"])) == before                          # quietly: no notice
    assert watch.open_watches(env["eval"]) == []


def test_a_watch_whose_closure_cannot_be_known_still_means_watching(env) -> None:
    record(env, "union-target:work", "20261130T101500-aaaa")
    e = entry(make_plan(env, watches=[{"id": "w-1", "target": "union-target:work", "workdir": "/nowhere"}]),
              "union-target:work")
    assert (e["action"], e.get("superseded_watch_ids")) == ("watching", None)


def test_the_plan_command_reads_open_watches_from_the_ledger(env, capsys) -> None:
    from live_trial.cli.main import main
    from live_trial.notices import watch
    watch.register_watch(env["eval"], objective="o", unverified="u", target="union-target:work")
    assert main(["plan", "--plugin-dir", str(env["plugins"] / "union-target"), "--eval-root", str(env["eval"]),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert entry(doc, "union-target:work")["action"] == "watching"


def test_denylisted_and_broken_skills_are_refused(env) -> None:
    many = env["plugins"] / "many" / "skills"
    (many / "run-skill-live-trial").mkdir()
    (many / "run-skill-live-trial" / "SKILL.md").write_text("---\nallowed-tools: [Skill]\n---\n")
    (many / "broken").mkdir()
    (many / "broken" / "SKILL.md").write_text("---\nallowed-tools: [Skill]\nscript_refs: [scripts/missing.py]\n---\n")
    doc = make_plan(env, "many")
    assert entry(doc, "many:run-skill-live-trial")["action"] == "refused"
    e = entry(doc, "many:broken")
    assert e["action"] == "refused" and "missing file" in e["reason"]


def test_plugin_dir_may_be_a_folder_of_plugins(env) -> None:
    doc = plan([env["plugins"]], env["eval"], watches=[])
    assert {s["plugin"] for s in doc["skills"]} >= {"many", "union-target", "union-manifest-dep"}


# ------------------------------------------------------------------ CLI
def test_plan_cli_json_and_table(env, capsys) -> None:
    base = ["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"])]
    assert main(base + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert schema_errors(doc, SCHEMA) == [] and doc["counts"]["run"] == 2
    assert main(base) == 0
    out = capsys.readouterr().out
    assert out.startswith("PLANNED: 2 to run") and "many:s3" in out


def test_plan_cli_writes_out_file_for_run(env, capsys) -> None:
    out_file = env["tmp"] / "plan.json"
    assert main(["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"]),
                 "--out", str(out_file)]) == 0
    from live_trial.cli.plan_run import plan_items
    from live_trial.jsonfile import read_json
    assert [[e["target"] for e in b] for b in plan_items(read_json(out_file, SCHEMA))] == [["many:s1", "many:s2"]]


@pytest.mark.parametrize("extra, needle", [
    (["--max-concurrency", "0"], "--max-concurrency must be"),
    (["--max-live-trials", "-1"], "--max-live-trials must be"),
])
def test_plan_cli_refusals(env, capsys, extra, needle) -> None:
    code = main(["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"])] + extra)
    assert code == 2 and needle in capsys.readouterr().err
    assert not env["eval"].exists()


def test_plan_cli_missing_plugin_dir(env, capsys) -> None:
    assert main(["plan", "--plugin-dir", str(env["tmp"] / "nope"), "--eval-root", str(env["eval"])]) == 2
    assert "plugin dir is not a folder" in capsys.readouterr().err


def test_nudge_edited_away_is_not_reused(env) -> None:
    """A nudge is a second human prompt in the transcript: editing nudge_count and overall is caught."""
    wd = record(env, "union-target:work", "20261130T101500-aaaa", nudge_count=1)
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.turn("run", "Should I continue?")
    b.turn("nudge: continue without asking", "DONE: ok")
    b.write(wd / "transcript.jsonl")
    doc = json.loads((wd / "verdict.json").read_text())
    doc.update(nudge_count=0, overall={"verdict": "PASS", "reasons": []},
               transcript_sha256=sha256_file(wd / "transcript.jsonl"))
    (wd / "verdict.json").write_text(json.dumps(doc))
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "2 human prompts" in e["reason"]


def test_contractual_without_grounding_is_not_reused(env) -> None:
    """rescue → contractual edited in (overall consistent with it) on a skill that cannot ground it."""
    wd = record(env, "union-target:work", "20261130T101500-aaaa", gate_response_count=1)
    doc = json.loads((wd / "verdict.json").read_text())
    assert doc["overall"]["verdict"] == "DEGRADED"
    doc.update(gate_kind="contractual", gate_contract_evidence=["frontmatter allowed-tools: AskUserQuestion"],
               overall={"verdict": "PASS", "reasons": []})
    (wd / "verdict.json").write_text(json.dumps(doc))
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "does not follow from its inputs (DEGRADED)" in e["reason"]  # the answer's kind
    doc["gate_answers"][0]["kind"] = "contractual"
    (wd / "verdict.json").write_text(json.dumps(doc))
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "not grounded" in e["reason"]


def test_a_rescue_answer_among_contractual_ones_is_not_a_pass(env) -> None:
    """Per-answer kinds: one rescue answer degrades even when the others are contractual (seed 001 gate kinds)."""
    md = env["plugins"] / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("  - Skill\n", "  - Skill\n  - AskUserQuestion\n"))
    answers = [{"question": "Push?", "options": ["Yes", "No"], "answer": "Yes", "kind": "contractual"},
               {"question": "Which one?", "options": ["A", "B"], "answer": "A", "kind": "rescue"}]
    wd = record(env, "union-target:work", "20261130T101500-aaaa", gate_response_count=2, gate_answers=answers)
    doc = json.loads((wd / "verdict.json").read_text())
    assert (doc["gate_kind"], doc["overall"]["verdict"]) == ("mixed", "DEGRADED")
    assert doc["gate_contract_evidence"] == ["frontmatter allowed-tools: AskUserQuestion"]
    e = entry(make_plan(env), "union-target:work")
    # the skill asks and its (default) case gives no answer: no trial that could only stop at the question
    assert e["action"] == "needs_answer" and e["reason"].startswith("needs an answer to its question")
    assert e["reason"].endswith("(would run because: last verdict is DEGRADED (run 20261130T101500-aaaa))")


def test_a_pass_judged_under_the_older_evidence_rules_is_run_again(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    doc = json.loads((wd / "verdict.json").read_text())
    for key in ("criteria", "gate_answers"):
        del doc[key]
    doc["schema_version"] = "live-trial-verdict/1"
    (wd / "verdict.json").write_text(json.dumps(doc))
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []        # still read
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and e["reason"].startswith(
        "last PASS was judged under the older evidence rules (live-trial-verdict/1")


def test_grounded_contractual_pass_is_reused(env) -> None:
    md = env["plugins"] / "union-target" / "skills" / "work" / "SKILL.md"
    md.write_text(md.read_text().replace("  - Skill\n", "  - Skill\n  - AskUserQuestion\n"))
    record(env, "union-target:work", "20261130T101500-aaaa", gate_response_count=1, gate_kind="contractual")
    assert entry(make_plan(env), "union-target:work")["action"] == "reuse"


# ------------------------------------------------------------------ origin re-derived from the workdir (laundering)
def test_hand_verdict_on_rehearsal_workdir_is_not_reused(env, capsys) -> None:
    """The bug: `verdict` by hand on a `run --rehearsal` workdir (no --rehearsal-scenario) used to say live."""
    wd = env["eval"] / "union-target" / "work" / "live-trial" / "20261130T101500-aaaa"
    wd.mkdir(parents=True)
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.prompt("run")
    skill_call(b, "union-target:work")
    b.turn("run", "DONE: ok")
    b.write(wd / "transcript.jsonl")
    write_state(wd, "union-target", "work", rehearsal={"scenario": str(env["tmp"] / "gone.yaml"), "port": 1})
    write_poll_state(wd, "DONE")
    write_evaluation(wd, "PASS", evidence=[{"claim": "c", "source": "transcript.jsonl", "quote": "run",
                                           "observed": "1 file written with 3 keys"}])
    (wd / "claude-config").mkdir()
    code = main(["verdict", "--workdir", str(wd), "--target-skill", "union-target:work",
                 "--skill-dir", str(env["plugins"] / "union-target" / "skills" / "work"),
                 "--plugins-root", str(env["plugins"]), "--goal-result", "PASS", "--evidence", "1 file written with 3 keys",
                 "--claude-version", "2.1.197"])
    assert code == 0, capsys.readouterr()
    assert json.loads((wd / "verdict.json").read_text())["scenario_origin"] == "rehearsal"
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "rehearsal verdicts are never reused" in e["reason"]


@pytest.mark.parametrize("mark", ["state", "claude-config"])
@pytest.mark.parametrize("reuse_rehearsal", [False, True])
def test_live_verdict_in_a_rehearsal_workdir_is_never_reused(env, mark, reuse_rehearsal) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")  # recorded live
    assert entry(make_plan(env), "union-target:work")["action"] == "reuse"
    if mark == "state":  # the workdir says rehearsal after all (e.g. a verdict.json copied or edited)
        write_state(wd, "union-target", "work", rehearsal={"scenario": "s.yaml", "port": 1})
    else:
        (wd / "claude-config").mkdir()
    scen = env["tmp"] / "s.yaml"
    scen.write_text("rules: []\n")
    e = entry(make_plan(env, reuse_rehearsal=reuse_rehearsal, scenario_path=scen), "union-target:work")
    assert e["action"] == "run", e["reason"]
    assert "says scenario_origin live but its workdir is rehearsal" in e["reason"]


def test_rehearsal_verdict_in_a_live_workdir_is_not_reused(env) -> None:
    scen = env["tmp"] / "scen.yaml"
    scen.write_text("rules: []\n")
    wd = record(env, "union-target:work", "20261130T101500-aaaa", origin="rehearsal", scenario=scen)
    (wd / "trial-state.json").unlink()
    e = entry(make_plan(env, reuse_rehearsal=True, scenario_path=scen), "union-target:work")
    assert e["action"] == "run" and "its workdir is live" in e["reason"]


def test_live_verdict_with_live_state_is_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    write_state(wd, "union-target", "work")
    assert entry(make_plan(env), "union-target:work")["action"] == "reuse"


def test_unreadable_trial_state_is_not_reused(env) -> None:
    wd = record(env, "union-target:work", "20261130T101500-aaaa")
    (wd / "trial-state.json").write_text("[")
    e = entry(make_plan(env), "union-target:work")
    assert e["action"] == "run" and "cannot tell the origin" in e["reason"]


def test_plan_sends_a_failed_notice_again(env, capsys, monkeypatch) -> None:
    """A person is always told (seed 000): plan, like run and `watch daily`, resends a notice whose webhook failed."""
    from live_trial.notices import notify as nt
    from live_trial.notices import webhook
    from live_trial.notices.resend import notification_id

    env["eval"].mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("LIVE_TRIAL_WEBHOOK_URL", "http://127.0.0.1:9/hook")
    answers = [500, 500, 204]              # the first send and its retry fail; the resend gets through
    sent = []

    def post(url, body, timeout):
        sent.append(body)
        return answers[len(sent) - 1]
    monkeypatch.setattr(webhook, "http_post", post)
    nt.notify(env["eval"], "done", "greet", "1 file written", "en", sleep=lambda s: None,
              clock=lambda: "2026-01-01T00:00:00.000Z")
    assert main(["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"]), "--json"]) == 0
    capsys.readouterr()
    recs = nt.read_notifications(env["eval"])
    assert [r["webhook"]["status"] for r in recs] == ["failed", "sent"] and len(sent) == 3
    assert recs[1]["text"] == recs[0]["text"] and recs[1]["refs"]["resend_of"] == notification_id(recs[0])


# ------------------------------------------------------------------ run --plan
def _plan_file(env: dict, *targets: str) -> Path:
    doc = make_plan(env, "many")
    doc["live_batches"] = [[{"target": t, "plugins_root": str(env["plugins"]), "proof": False, "args": ""}
                            for t in targets]]
    path = env["tmp"] / "plan.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("extra", [["--gate-response", "Casual"], ["--gate-kind", "contractual"], ["--expect-gate"]])
def test_run_plan_refuses_options_that_describe_one_skills_questions(env, capsys, extra) -> None:
    """They were silently dropped before: every gated skill of the plan then FAILed at its question."""
    plan = _plan_file(env, "many:s1")
    code = main(["run", "--plan", str(plan), "--eval-root", str(env["eval"]), "--cwd", str(env["tmp"])] + extra)
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("REFUSED: ") and "cannot apply to a whole plan" in err and "\n" not in err
    assert not env["eval"].exists()


def test_run_plan_reports_an_entry_that_fails_before_its_workdir_and_goes_on(env, capsys) -> None:
    """A closure error (BOOT_FAIL) in one entry is that entry's row, not the end of the batch and its table."""
    shutil.rmtree(env["plugins"] / "union-contract-dep")
    plan = _plan_file(env, "union-target:work", "many:nosuch")
    code = main(["run", "--plan", str(plan), "--eval-root", str(env["eval"]), "--cwd", str(env["tmp"]), "--json"])
    doc = json.loads(capsys.readouterr().out)
    rows = {r["target"]: r for r in doc["trials"]}
    assert rows["union-target:work"]["status"] == "BOOT_FAIL" and "union-contract-dep" in rows["union-target:work"]["summary"]
    assert rows["many:nosuch"]["status"] == "REFUSED"
    assert code == doc["exit_code"] == 2


def test_run_plan_lists_the_skills_it_reused(env, capsys) -> None:
    """A second run of the same plan used to print an empty table: a reused skill must say it was not run again."""
    doc = make_plan(env, "many")
    skill = doc["skills"][0]
    skill.update(action="reuse", reason="the last PASS still matches (closure digest, scenario_id, transcript)",
                 verdict=str(env["eval"] / "many" / skill["skill"] / "live-trial" / "r1" / "verdict.json"))
    doc["live_batches"] = []
    plan = env["tmp"] / "plan.json"
    plan.write_text(json.dumps(doc))
    code = main(["run", "--plan", str(plan), "--eval-root", str(env["eval"]), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [(t["target"], t["status"]) for t in out["trials"]] == [(skill["target"], "REUSED")]
    assert out["trials"][0]["summary"].startswith("not run again: the last PASS still matches")
    assert out["trials"][0]["workdir"].endswith("live-trial/r1")
