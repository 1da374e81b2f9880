"""`live-trial verdict` and write_trial_verdict: written only when valid; every refusal exits 2 and writes nothing."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from live_trial.acceptance.verdict import build_verdict, write_trial_verdict, write_verdict
from live_trial.acceptance.verdict_doc import SCHEMA, scenario_id
from live_trial.cli.main import main
from live_trial.closure.index import Target
from live_trial.closure.manifest import ClosureError
from live_trial.closure.pinning import closure_digest, pin
from live_trial.closure.target import resolve_target
from live_trial.errors import RefusedInput, SchemaInvalid
from live_trial.jsonfile import schema_errors
from live_trial.transcript.builder import TranscriptBuilder
from tests.unit.fakes import skill_call, write_evaluation, write_poll_state, write_state

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"
MODEL = "claude-opus-4-8"


@pytest.fixture()
def tree(tmp_path: Path) -> dict:
    """Plugins (the union fixture plus a plugin with gate skills) and an empty trial workdir with a transcript."""
    plugins = tmp_path / "plugins"
    shutil.copytree(FIXTURE, plugins)
    gp = plugins / "gates"
    (gp / ".claude-plugin").mkdir(parents=True)
    (gp / ".claude-plugin" / "plugin.json").write_text('{"name": "gates"}')
    skills = {
        "asks": "---\nname: asks\ndescription: asks before pushing\nallowed-tools: Read, AskUserQuestion\n---\nbody\n",
        "guarded": "---\nname: guarded\ndescription: pushes\nallowed-tools: [Bash]\nexternal_mutation_guard: push\n---\n",
        "prose": "---\nname: prose\ndescription: pushes\nallowed-tools: [Bash, Skill]\n---\n"
                 "This skill asks with AskUserQuestion and has an external_mutation_guard.\n",
        "run-skill-live-trial": "---\nname: run-skill-live-trial\n---\n",
    }
    for name, text in skills.items():
        (gp / "skills" / name).mkdir(parents=True)
        (gp / "skills" / name / "SKILL.md").write_text(text)
    eval_root = tmp_path / "eval-log"
    wd = eval_root / "union-target" / "work" / "live-trial" / "20261130T101500-abcd"
    wd.mkdir(parents=True)
    b = TranscriptBuilder(model=MODEL)
    b.prompt("run")
    for target in ("union-target:work", "gates:asks", "gates:guarded", "gates:prose"):   # the launch of each target
        skill_call(b, target)
    b.turn("run", "DONE: ok", tools=1)
    b.write(wd / "transcript.jsonl")
    write_state(wd, "union-target", "work")
    write_poll_state(wd, "DONE")
    return {"plugins": plugins, "eval_root": eval_root, "wd": wd}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else b"") for p in sorted(folder.rglob("*"))}


def argv(tree: dict, *extra: str, target: str = "union-target:work", skill_dir: Path | None = None,
         goal: str = "PASS") -> list[str]:
    plugin, skill = target.split(":") if ":" in target else ("union-target", target)
    sd = skill_dir or tree["plugins"] / plugin / "skills" / skill
    if not (tree["wd"] / "evaluation.json").exists():      # the goal a person gives must be the evaluator's
        write_evaluation(tree["wd"], goal, evidence=[{"claim": "c", "source": "transcript.jsonl", "quote": "run",
                                                      "observed": "1 file written with 2 keys"}] if goal == "PASS" else None)
    out = ["verdict", "--workdir", str(tree["wd"]), "--target-skill", target, "--skill-dir", str(sd),
           "--session-id", "s-1", "--requested-model", MODEL, "--goal-result", goal, "--nudge-count", "0",
           "--gate-response-count", "0"]
    if goal == "PASS" and "--unverified" not in extra and "--evidence" not in extra:
        out += ["--evidence", "1 file written with 2 keys"]
    if tree.get("override"):
        out += ["--override", tree["override"]]
    return out + list(extra)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def written(tree: dict) -> dict:
    return json.loads((tree["wd"] / "verdict.json").read_text())


def test_pass_is_written_and_schema_valid(tree, capsys) -> None:
    code, out, err = run(argv(tree), capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith("WRITTEN: ") and "OVERALL: PASS" in out
    doc = written(tree)
    assert schema_errors(doc, SCHEMA) == []
    assert doc["overall"] == {"verdict": "PASS", "reasons": []}
    assert doc["actual_model"] == [MODEL] and doc["requested_model"] == MODEL
    assert doc["transcript_sha256"] == "sha256:" + hashlib.sha256((tree["wd"] / "transcript.jsonl").read_bytes()).hexdigest()
    t = resolve_target("union-target:work", tree["plugins"])
    assert doc["skill_dir_tree_sha"] == closure_digest(t, tree["plugins"])
    assert doc["closure_plugins"] == ["union-target", "union-manifest-dep", "union-contract-dep"]
    assert doc["tier"] == "live" and doc["downgrade_reason"] is None and doc["scenario_origin"] == "live"
    assert doc["session_id"] == "s-1" and doc["goal_ledger"] == "done"


def test_verdict_json_output(tree, capsys) -> None:
    code, out, _ = run(argv(tree, "--json"), capsys)
    assert code == 0 and json.loads(out)["overall"] == "PASS"


def test_degraded_with_nudges_and_rescue_gates(tree, capsys) -> None:
    args = argv(tree)
    args[args.index("--nudge-count") + 1] = "1"
    args[args.index("--gate-response-count") + 1] = "2"
    assert run(args, capsys)[0] == 0
    doc = written(tree)
    assert doc["overall"]["verdict"] == "DEGRADED" and doc["gate_kind"] == "rescue" and len(doc["overall"]["reasons"]) == 2


@pytest.mark.parametrize("skill, evidence", [("asks", "frontmatter allowed-tools: AskUserQuestion"),
                                             ("guarded", "frontmatter external_mutation_guard: \"push\"")])
def test_contractual_grounded_is_accepted(tree, capsys, skill, evidence) -> None:
    write_state(tree["wd"], "gates", skill)
    args = argv(tree, "--gate-kind", "contractual", target=f"gates:{skill}")
    args[args.index("--gate-response-count") + 1] = "1"
    code, _, err = run(args, capsys)
    assert code == 0, err
    doc = written(tree)
    assert doc["gate_kind"] == "contractual" and doc["gate_contract_evidence"] == [evidence]
    assert doc["overall"]["verdict"] == "PASS"


def test_contractual_with_zero_responses_is_normalised(tree, capsys) -> None:
    assert run(argv(tree, "--gate-kind", "contractual"), capsys)[0] == 0
    doc = written(tree)
    assert doc["gate_kind"] == "rescue" and doc["gate_contract_evidence"] == []
    assert any("normalised to rescue" in n for n in doc["notes"])


def test_proof_model_gate_uses_the_transcript(tree, capsys) -> None:
    args = argv(tree, "--proof")
    args[args.index("--requested-model") + 1] = "claude-sonnet-4-6"
    assert run(args, capsys)[0] == 0
    doc = written(tree)
    assert doc["overall"]["verdict"] == "FAIL" and "not the requested claude-sonnet-4-6" in doc["overall"]["reasons"][0]


def test_proof_without_transcript_fails(tree, capsys) -> None:
    (tree["wd"] / "transcript.jsonl").unlink()
    assert run(argv(tree, "--proof"), capsys)[0] == 0
    doc = written(tree)
    assert doc["overall"]["verdict"] == "FAIL" and doc["actual_model"] == [] and doc["transcript_sha256"] is None


def test_blocked(tree, capsys) -> None:
    args = argv(tree, "--blocked", goal="FAIL")
    assert run(args, capsys)[0] == 0
    assert written(tree)["overall"]["verdict"] == "BLOCKED"


def test_rehearsal_origin_and_downgrade(tree, capsys, tmp_path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("rules: []\n")
    assert run(argv(tree, "--rehearsal-scenario", str(scen)), capsys)[0] == 0
    doc = written(tree)
    assert doc["scenario_origin"] == "rehearsal" and doc["downgrade_reason"].startswith("rehearsal")
    assert doc["scenario_id"] == scenario_id("union-target:work", "", scen)


# ------------------------------------------------------------------ refusals: exit 2, nothing written
def refused(tree, capsys, args, needle: str) -> None:
    before = snapshot(tree["wd"].parent.parent.parent.parent)
    code, out, err = run(args, capsys)
    assert code == 2, (out, err)
    assert needle in err and len(err.strip().splitlines()) == 1
    assert snapshot(tree["wd"].parent.parent.parent.parent) == before


def test_refused_contractual_without_grounding(tree, capsys) -> None:
    write_state(tree["wd"], "gates", "prose")
    args = argv(tree, "--gate-kind", "contractual", target="gates:prose")
    args[args.index("--gate-response-count") + 1] = "1"
    refused(tree, capsys, args, "contractual is not grounded")


@pytest.mark.parametrize("target", ["gates:run-skill-live-trial", "x:run-skill-iter-improve", "run-skill-live-trial"])
def test_refused_denylisted_target(tree, capsys, target) -> None:
    refused(tree, capsys, argv(tree, target=target if ":" in target else "gates:run-skill-live-trial",
                               skill_dir=tree["plugins"] / "gates" / "skills" / "run-skill-live-trial")
            if target == "gates:run-skill-live-trial" else
            ["verdict", "--workdir", str(tree["wd"]), "--target-skill", target, "--skill-dir", str(tree["wd"]),
             "--launch", "PASS", "--completion", "PASS", "--poll-exit", "DONE"], "cannot be a trial target")


def test_refused_pass_without_evidence(tree, capsys) -> None:
    write_evaluation(tree["wd"], "FAIL", judged_by="fallback", answered=False)      # nobody judged the goal
    args = argv({**tree, "override": "the evaluator could not run"})
    i = args.index("--evidence")
    del args[i:i + 2]
    refused(tree, capsys, args, "needs evidence")


def test_refused_proxy_evidence(tree, capsys) -> None:
    args = argv(tree)
    args[args.index("--evidence") + 1] = "tests passed and CI green"
    refused(tree, capsys, args, "proxy")


def test_refused_negative_count(tree, capsys) -> None:
    args = argv(tree)
    args[args.index("--nudge-count") + 1] = "-1"
    refused(tree, capsys, args, "--nudge-count must be a whole number")


def test_refused_target_not_matching_skill_dir(tree, capsys) -> None:
    refused(tree, capsys, argv(tree, target="union-target:work",
                               skill_dir=tree["plugins"] / "union-target" / "skills" / "solo"), "does not match")


def test_refused_closure_error(tree, capsys) -> None:
    shutil.rmtree(tree["plugins"] / "union-contract-dep")
    refused(tree, capsys, argv(tree), "dependency plugin 'union-contract-dep' not found")


def test_refused_missing_workdir(tree, capsys) -> None:
    args = argv(tree)
    args[args.index("--workdir") + 1] = str(tree["wd"] / "nope")
    refused(tree, capsys, args, "workdir is not a folder")
    assert not (tree["wd"] / "nope").exists()


def test_unverified_registers_a_watch(tree, capsys) -> None:
    args = argv(tree, "--unverified", "replies reach the customer")
    code, out, _ = run(args, capsys)
    assert code == 0
    doc = written(tree)
    assert f"MOSTLY DONE: not confirmed yet: replies reach the customer (watch {doc['watch_id']} checks it daily)" in out
    assert doc["goal_ledger"] == "mostly_done" and doc["watch_id"] and doc["unverified"] == "replies reach the customer"
    from live_trial.notices import watch
    watches = watch.open_watches(tree["eval_root"], "union-target:work")
    assert [w["id"] for w in watches] == [doc["watch_id"]]


def test_a_rehearsal_watch_goes_to_its_own_ledger(tree, capsys, tmp_path) -> None:
    """A scripted PASS with --unverified used to register a watch in the eval root's ledger, and plan then kept the
    skill 'watching'. As in run, the watch goes to the rehearsal's own ledger in its workdir."""
    scen = tmp_path / "s.yaml"
    scen.write_text("rules: []\n")
    args = argv(tree, "--unverified", "replies reach the customer", "--rehearsal-scenario", str(scen))
    assert run(args, capsys)[0] == 0
    doc = written(tree)
    assert doc["watch_id"] and any("rehearsal's own ledger" in n for n in doc["notes"])
    from live_trial.notices import watch
    assert [w["id"] for w in watch.open_watches(tree["wd"] / "rehearsal-watches", "union-target:work")] == [
        doc["watch_id"]]
    assert watch.open_watches(tree["eval_root"], "union-target:work") == []
    assert not (tree["eval_root"] / "watches.json").exists()


# ------------------------------------------------------------------ the Python API the trial runner calls
def test_write_trial_verdict_api(tree) -> None:
    t = resolve_target("union-target:work", tree["plugins"])
    doc, path = write_trial_verdict(
        workdir=tree["wd"], target=t, plugins_root=tree["plugins"], session_id="s", requested_model=None,
        launch="PASS", completion="PASS", goal_result="FAIL", goal_blockers=["status.json says nothing"],
        evidence=[{"claim": "c", "source": "out/status.json", "observed": "1 file", "extra": "dropped"}],
        nudge_count=0, gate_response_count=0, gate_kind="rescue", poll_exit="DONE", proof=False, blocked=False,
        scenario_origin="live", scenario_path=None, args="", claude_version="2.1.197", stop_reason=None,
        notes=["n"], started_at="2026-11-30T10:15:00.000Z")
    assert path == tree["wd"] / "verdict.json" and json.loads(path.read_text()) == doc
    assert doc["overall"]["verdict"] == "DEGRADED" and doc["goal_blockers"] == ["status.json says nothing"]
    assert doc["evidence"] == [{"claim": "c", "source": "out/status.json", "observed": "1 file"}]


CRITERIA_SKILL = """---
name: crit
description: writes a report
allowed-tools: [Skill, Write]
feedback_contract:
  criteria:
    - {id: IN1, text: the parser is unit tested, verify_by: test}
    - {id: OUT1, text: the report has two rows, verify_by: evaluator}
    - {id: IN2, text: the schema is checked, verify_by: script}
    - {id: OUT2, text: the report is dated}
---
"""


def test_one_line_per_criterion_and_per_answered_question(tree) -> None:
    """README "Evidence, watches and messages to a person": the criteria table and the gate answer lines."""
    (tree["plugins"] / "gates" / "skills" / "crit").mkdir()
    (tree["plugins"] / "gates" / "skills" / "crit" / "SKILL.md").write_text(CRITERIA_SKILL)
    wd = tree["eval_root"] / "gates" / "crit" / "live-trial" / "20261130T101500-abcd"
    shutil.copytree(tree["wd"], wd)
    write_state(wd, "gates", "crit")
    t = resolve_target("gates:crit", tree["plugins"])
    checks = [{"id": "OUT1", "result": "pass", "evidence": "2 rows in side-effects/files/report.csv"},
              {"id": "OUT2", "result": "fail", "evidence": "0 dates"}]
    answers = [{"question": "Which style?", "options": ["Formal", "Casual"], "answer": "Casual", "kind": "rescue"}]
    doc = build_verdict(workdir=wd, target=t, plugins_root=tree["plugins"], session_id=None, requested_model=None,
                        launch="PASS", completion="PASS", goal_result="FAIL", poll_exit="DONE",
                        gate_response_count=1, gate_answers=answers, criteria_checks=checks)
    assert schema_errors(doc, SCHEMA) == [] and doc["schema_version"] == "live-trial-verdict/2"
    assert [(c["id"], c["verify_by"], c["result"]) for c in doc["criteria"]] == [
        ("IN1", "test", "not_checked_here"), ("OUT1", "evaluator", "pass"), ("IN2", "script", "not_checked_here"),
        ("OUT2", None, "fail")]
    assert doc["criteria"][0]["evidence"] == "verified by tests, which this trial does not run"
    assert doc["gate_answers"] == [{"n": 1, **answers[0]}] and doc["gate_kind"] == "rescue"
    assert doc["overall"]["verdict"] == "DEGRADED"
    not_run = build_verdict(workdir=wd, target=t, plugins_root=tree["plugins"], session_id=None, requested_model=None,
                            launch="PASS", completion="FAIL", goal_result=None, poll_exit="STALL",
                            not_judged_why="the goal was not judged: hang")
    assert [c["result"] for c in not_run["criteria"]] == ["not_checked_here", "not_judged", "not_checked_here",
                                                          "not_judged"]
    assert not_run["criteria"][1]["evidence"] == "the goal was not judged: hang"
    with pytest.raises(RefusedInput) as exc:
        build_verdict(workdir=wd, target=t, plugins_root=tree["plugins"], session_id=None, requested_model=None,
                      launch="PASS", completion="PASS", goal_result="PASS", poll_exit="DONE",
                      gate_response_count=2, gate_answers=answers)
    assert "1 gate answer line(s) for a gate response count of 2" in exc.value.message


def test_contractual_answers_need_grounding_and_a_rescue_one_still_degrades(tree) -> None:
    t = resolve_target("gates:asks", tree["plugins"])
    wd = tree["eval_root"] / "gates" / "asks" / "live-trial" / "20261130T101500-abcd"
    shutil.copytree(tree["wd"], wd)
    write_state(wd, "gates", "asks")
    both = [{"question": "Push?", "options": ["Yes", "No"], "answer": "Yes", "kind": "contractual"},
            {"question": "Which?", "options": ["A"], "answer": "A", "kind": "rescue"}]
    kw = dict(workdir=wd, plugins_root=tree["plugins"], session_id=None, requested_model=None, launch="PASS",
              completion="PASS", goal_result="PASS", poll_exit="DONE", gate_response_count=2, gate_answers=both)
    doc = build_verdict(target=t, **kw)
    assert (doc["gate_kind"], doc["overall"]["verdict"]) == ("mixed", "DEGRADED")
    assert doc["overall"]["reasons"] == ["1 rescue gate response(s): a person had to step in"]
    assert doc["gate_contract_evidence"] == ["frontmatter allowed-tools: AskUserQuestion"]
    assert build_verdict(target=t, **{**kw, "gate_kind": "contractual"})["gate_kind"] == "mixed"   # lines decide
    with pytest.raises(RefusedInput) as exc:
        build_verdict(target=resolve_target("union-target:work", tree["plugins"]), **{**kw, "workdir": tree["wd"]})
    assert exc.value.code == "ungrounded_contractual"


def test_invalid_document_is_never_written(tree) -> None:
    t = resolve_target("union-target:work", tree["plugins"])
    doc = build_verdict(workdir=tree["wd"], target=t, plugins_root=tree["plugins"], session_id=None,
                          requested_model=None, launch="PASS", completion="PASS", goal_result="PASS")
    doc["overall"]["verdict"] = "GREAT"
    with pytest.raises(SchemaInvalid):
        write_verdict(tree["wd"], doc)
    assert not (tree["wd"] / "verdict.json").exists()
    assert sorted(p.name for p in tree["wd"].iterdir()) == ["poll-state.json", "transcript.jsonl", "trial-state.json"]


def test_the_poll_exit_and_completion_are_read_from_the_poll_state(tree, capsys) -> None:
    assert run(argv(tree), capsys)[0] == 0
    assert (written(tree)["poll_exit"], written(tree)["completion"]) == ("DONE", "PASS")


def test_stall_row_and_reasons_are_recorded(tree, capsys) -> None:
    args = argv(tree, "--stall-row", "5", "--stop-reason", "reported done without the marker",
                "--failure-reason", "contract violation", goal="FAIL")
    write_poll_state(tree["wd"], "STALL")
    assert run(args, capsys)[0] == 0
    doc = written(tree)
    assert (doc["stall_row"], doc["stop_reason"], doc["failure_reason"]) == (
        5, "reported done without the marker", "contract violation")
    assert doc["overall"]["verdict"] == "FAIL"


@pytest.mark.parametrize("change", [
    {"gate_kind": "contractual", "gate_response_count": 0, "gate_contract_evidence": ["x"]},
    {"gate_kind": "contractual", "gate_response_count": 1, "gate_contract_evidence": []},
    {"gate_kind": "rescue", "gate_response_count": 1, "gate_contract_evidence": ["x"]},
])
def test_schema_holds_gate_kind_rules(tree, change) -> None:
    t = resolve_target("union-target:work", tree["plugins"])
    doc = build_verdict(workdir=tree["wd"], target=t, plugins_root=tree["plugins"], session_id=None,
                          requested_model=None, launch="PASS", completion="PASS", goal_result="PASS", poll_exit="DONE")
    assert schema_errors(doc, SCHEMA) == []
    doc.update(change)
    assert schema_errors(doc, SCHEMA) != []


# ------------------------------------------------------------------ seed 000: weak evidence refused, real counts accepted
def tree_hash(root: Path) -> str:
    """sha256 over every path and file content under ``root`` (the eval-log root)."""
    h = hashlib.sha256()
    for rel, data in snapshot(root).items():
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def refused_hashed(tree, capsys, args, code: str, needle: str = "") -> str:
    before = tree_hash(tree["eval_root"])
    rc, out, err = run(args + ["--json"], capsys)
    assert rc == 2, (out, err)
    assert tree_hash(tree["eval_root"]) == before and not (tree["wd"] / "verdict.json").exists()
    assert err == "" and len(out.strip().splitlines()) == 1
    doc = json.loads(out)
    assert doc.get("code") == code, doc
    assert needle in json.dumps(doc, ensure_ascii=False)
    return doc["message"]


@pytest.mark.parametrize("evidence, code", [
    ("1", "evidence_required"), ("tests passed: 12", "proxy_evidence"), ("CI green on 3 jobs", "proxy_evidence"),
    ("1 marker written", "proxy_evidence"), ("score: 9/10 (1 file)", "proxy_evidence"),
])
def test_refused_weak_evidence_changes_nothing(tree, capsys, evidence, code) -> None:
    refused_hashed(tree, capsys, argv(tree, "--evidence", evidence), code, "1 file written with 3 keys")


@pytest.mark.parametrize("evidence", ["1 file written with 3 keys", "2 messages sent",
                                      "greeting.txt holds 1 line 'Hello, World!'", "返信を3件送信した",
                                      "3 rows updated in the users table"])
def test_real_counted_evidence_is_written(tree, capsys, evidence) -> None:
    code, out, err = run(argv(tree, "--evidence", evidence), capsys)
    assert code == 0, err
    doc = written(tree)
    assert doc["goal_ledger"] == "done" and doc["evidence_text"] == evidence
    assert doc["evidence"] == [{"claim": "goal reached", "source": "--evidence", "observed": evidence}]


def _uuids(tree) -> list[str]:
    from live_trial.transcript.reader import read_records
    return [r["uuid"] for r in read_records(tree["wd"] / "transcript.jsonl").records if r.get("uuid")]


def _items(*items: dict) -> str:
    return json.dumps(list(items), ensure_ascii=False)


def test_evidence_items_with_real_sources_are_written(tree, capsys) -> None:
    (tree["wd"] / "out").mkdir()
    (tree["wd"] / "out" / "greeting.txt").write_text("Hello, World!\n")
    items = [{"claim": "greeting written", "source": "out/greeting.txt", "observed": "1 file with 1 line"},
             {"claim": "one reply", "source": _uuids(tree)[-1], "observed": "2 messages sent"}]
    code, out, err = run(argv(tree, "--evidence", _items(*items)), capsys)
    assert code == 0, err
    doc = written(tree)
    assert doc["evidence"] == items and doc["goal_ledger"] == "done"
    assert schema_errors(doc, SCHEMA) == []


@pytest.mark.parametrize("source", ["out/missing.txt", "../outside.txt", "0b0c7a4e-1111-2222-3333-444455556666"])
def test_evidence_item_with_missing_source_is_refused(tree, capsys, source) -> None:
    (tree["wd"].parent / "outside.txt").write_text("x")  # exists, but not under the workdir
    err = refused_hashed(tree, capsys, argv(tree, "--evidence", _items(
        {"claim": "c", "source": source, "observed": "1 file with 1 line"})), "evidence_source_missing", source)
    assert "does not exist" in err


@pytest.mark.parametrize("observed", ["tests passed: 12", "CI green on 3 jobs", "1 marker written", "1",
                                      "score: 9/10 (1 file)"])
def test_evidence_item_with_proxy_observation_is_refused(tree, capsys, observed) -> None:
    (tree["wd"] / "out").mkdir()
    (tree["wd"] / "out" / "greeting.txt").write_text("Hello, World!\n")
    refused_hashed(tree, capsys, argv(tree, "--evidence", _items(
        {"claim": "c", "source": "out/greeting.txt", "observed": "1 file with 1 line"},
        {"claim": "c", "source": _uuids(tree)[0], "observed": observed})),
        "evidence_required" if observed == "1" else "proxy_evidence", "evidence item 1")


def test_malformed_evidence_list_is_refused(tree, capsys) -> None:
    refused_hashed(tree, capsys, argv(tree, "--evidence", "[{\"claim\": "), "bad_evidence")


# ------------------------------------------------------------------ harness files are no evidence (bugs: bypasses)
@pytest.fixture()
def marked(tree: dict) -> dict:
    """The tree's workdir as a real trial leaves it: the harness's files, the skill's greeting and the marker, and a
    transcript whose Write calls wrote them (uuids: ``write_greeting``, ``write_marker``, ``marker_result``)."""
    wd = tree["wd"]
    (wd / "out").mkdir()
    (wd / "out" / "greeting.txt").write_text("Hello, World!\n")
    (wd / "out" / "status.json").write_text('{"status": "ok", "summary": "greeted"}\n')
    for name in ("task.md", "nudge-1.md", "trial-log.jsonl", "cwd-snapshot.json", ".trial.lock", "pane.txt"):
        (wd / name).write_text("{}\n")
    write_poll_state(wd, "DONE")
    write_evaluation(wd, "FAIL", judged_by="fallback", answered=False)      # the evaluator judged nothing
    write_state(wd, "union-target", "work")
    (wd / "claude-config").mkdir()
    (wd / "claude-config" / "settings.json").write_text("{}\n")
    b = TranscriptBuilder(model=MODEL)
    b.prompt("Run the task.")
    skill_call(b, "union-target:work")
    greeting = b.tool_use("Write", {"file_path": str(wd / "out" / "greeting.txt"), "content": "Hello, World!\n"})
    ids = {"write_greeting": b.last_uuid}
    b.tool_result(greeting, "File created successfully")
    marker = b.tool_use("Write", {"file_path": str(wd / "out" / "status.json"), "content": "{}"})
    ids["write_marker"] = b.last_uuid
    b.tool_result(marker, "File created successfully")
    ids["marker_result"] = b.last_uuid
    b.text("DONE: ok")
    b.turn_duration()
    b.write(wd / "transcript.jsonl")
    # no evaluator judged this goal: a PASS by hand rests on --override, and the evidence rules still hold for it
    return {**tree, **ids, "override": "the evidence rules of a PASS by hand"}


def _one(source: str) -> str:
    return _items({"claim": "done", "source": source, "observed": "1 file with status ok"})


@pytest.mark.parametrize("source", ["out/status.json", "out/../out/status.json", "./out//status.json",
                                    "out/status.json:1", "{wd}/out/status.json", "{wd}/./out//status.json",
                                    "write_marker", "marker_result", "transcript.jsonl#write_marker"])
def test_every_spelling_of_the_marker_is_refused(marked, capsys, source):
    src = source.format(wd=marked["wd"])
    for key in ("write_marker", "marker_result"):
        src = src.replace(key, marked[key])
    msg = refused_hashed(marked, capsys, argv(marked, "--evidence", _one(src)), "marker_evidence", "out/status.json")
    assert "not the completion marker" in msg and "cite an artifact the skill produced" in msg


@pytest.mark.parametrize("source", ["trial-state.json", "task.md", "nudge-1.md", "trial-log.jsonl", "poll-state.json",
                                    "cwd-snapshot.json", ".trial.lock", "evaluation.json",
                                    "claude-config/settings.json", "{wd}/trial-state.json", "./out/../task.md"])
def test_a_pass_citing_only_harness_files_is_refused(marked, capsys, source):
    src = source.format(wd=marked["wd"])
    msg = refused_hashed(marked, capsys, argv(marked, "--evidence", _one(src)), "harness_evidence")
    assert "another file the harness itself writes" in msg


@pytest.mark.parametrize("source", ["out/greeting.txt", "./out//greeting.txt", "{wd}/out/greeting.txt", "pane.txt",
                                    "write_greeting"])
def test_what_the_skill_produced_is_still_evidence(marked, capsys, source):
    src = source.format(wd=marked["wd"]).replace("write_greeting", marked["write_greeting"])
    code, out, err = run(argv(marked, "--evidence", _one(src)), capsys)
    assert code == 0, err
    assert written(marked)["evidence"][0]["source"] == src


def test_a_harness_file_next_to_real_evidence_is_written_but_a_fail_needs_none(marked, capsys):
    both = _items({"claim": "marker", "source": str(marked["wd"] / "out" / "status.json"), "observed": "1 file, 2 keys"},
                  {"claim": "greeting", "source": "out/greeting.txt", "observed": "1 file with 1 line"})
    assert run(argv(marked, "--evidence", both), capsys)[0] == 0
    (marked["wd"] / "verdict.json").unlink()
    code, out, err = run(argv(marked, "--evidence", _one("trial-state.json"), goal="FAIL"), capsys)
    assert code == 0, err


@pytest.mark.parametrize("extra", [{"score": 9}, {"Rating": "A"}, {"grade": "B"}, {"confidence": 0.8},
                                   {"quality_score": 3}, {"meta": {"qualityScore": 3}}])
def test_a_score_key_in_an_evidence_item_is_refused(marked, capsys, extra):
    item = {"claim": "greeting", "source": "out/greeting.txt", "observed": "1 file with 1 line", **extra}
    msg = refused_hashed(marked, capsys, argv(marked, "--evidence", _items(item)), "score_field", "evidence item 0")
    assert "score-like field" in msg
    refused_hashed(marked, capsys, argv(marked, "--evidence", _items(item), goal="FAIL"), "score_field")


def test_an_item_without_a_score_key_is_still_written(marked, capsys):
    item = {"claim": "greeting", "source": "out/greeting.txt", "observed": "1 file with 1 line", "note": "checkpoints"}
    assert run(argv(marked, "--evidence", _items(item)), capsys)[0] == 0


# ------------------------------------------------------------------ the origin comes from the workdir (bug: laundering)
def test_hand_verdict_on_a_rehearsal_workdir_is_rehearsal(tree, capsys, tmp_path) -> None:
    scen = tmp_path / "s.yaml"
    scen.write_text("rules: []\n")
    write_state(tree["wd"], "union-target", "work", rehearsal={"scenario": str(scen), "port": 4242})
    code, out, err = run(argv(tree), capsys)  # no --rehearsal-scenario: the caller claims live
    assert code == 0, err
    doc = written(tree)
    assert doc["scenario_origin"] == "rehearsal" and doc["downgrade_reason"].startswith("rehearsal")
    assert any("overridden to rehearsal" in n and "trial-state.json" in n for n in doc["notes"])
    assert doc["scenario_id"] == scenario_id("union-target:work", "", scen)  # the recorded scenario is used


def test_claude_config_folder_makes_it_rehearsal(tree, capsys) -> None:
    (tree["wd"] / "claude-config").mkdir()
    assert run(argv(tree), capsys)[0] == 0
    doc = written(tree)
    assert doc["scenario_origin"] == "rehearsal" and any("claude-config/" in n for n in doc["notes"])


def test_live_workdir_with_state_stays_live(tree, capsys) -> None:
    write_state(tree["wd"], "union-target", "work")
    assert run(argv(tree), capsys)[0] == 0
    doc = written(tree)
    assert doc["scenario_origin"] == "live" and not any("overridden" in n for n in doc["notes"])


def test_api_caller_claiming_live_is_overridden(tree) -> None:
    write_state(tree["wd"], "union-target", "work", rehearsal={"scenario": "/nowhere.yaml", "port": 1})
    doc = build_verdict(workdir=tree["wd"], target="union-target:work", plugins_root=tree["plugins"],
                          session_id="s", requested_model=None, launch="PASS", completion="PASS",
                          goal_result="PASS", poll_exit="DONE", scenario_origin="live", claude_version="x",
                          tmux_version="y")
    assert doc["scenario_origin"] == "rehearsal"


def test_target_not_matching_trial_state_is_refused(tree, capsys) -> None:
    write_state(tree["wd"], "union-target", "solo")
    refused_hashed(tree, capsys, argv(tree), "target_mismatch", "union-target:solo")


def test_unreadable_trial_state_is_refused(tree, capsys) -> None:
    (tree["wd"] / "trial-state.json").write_text("{not json")
    refused_hashed(tree, capsys, argv(tree), "bad_trial_state", "trial-state.json")


# ------------------------------------------------------------------ the closure tested is the closure at boot
def _at_boot(tree) -> tuple[Target, dict]:
    t = resolve_target("union-target:work", tree["plugins"])
    pinned = pin(t, tree["plugins"])
    return t, {"digest": pinned.digest, "plugins": [p.name for p in pinned.plugins],
               "plugin_dirs": [str(p.root) for p in pinned.plugins], "file_count": len(pinned.files)}


def _build(tree, t, at_boot):
    return build_verdict(workdir=tree["wd"], target=t, plugins_root=tree["plugins"], session_id=None,
                           requested_model=None, launch="PASS", completion="PASS", goal_result="FAIL",
                           poll_exit="DONE", closure_at_boot=at_boot)


def test_a_skill_edited_during_the_trial_is_recorded_as_tested_not_as_now(tree) -> None:
    """README "Planning": a PASS is reused only while what it tested is what would run now; recording the edited files
    would let plan reuse a PASS of files that never ran."""
    t, at_boot = _at_boot(tree)
    skill_md = tree["plugins"] / "union-target" / "skills" / "work" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nEdited while the trial ran.\n")
    now = pin(t, tree["plugins"]).digest
    doc = _build(tree, t, at_boot)
    assert doc["skill_dir_tree_sha"] == at_boot["digest"] != now
    assert doc["closure_plugins"] == at_boot["plugins"] and doc["closure_file_count"] == at_boot["file_count"]
    assert any("changed during the trial" in n for n in doc["notes"])
    assert not any("changed during" in n for n in _build(tree, t, _at_boot(tree)[1])["notes"])


def test_a_closure_broken_during_the_trial_still_gets_a_verdict(tree) -> None:
    t, at_boot = _at_boot(tree)
    shutil.rmtree(tree["plugins"] / "union-contract-dep")
    doc = _build(tree, t, at_boot)
    assert doc["skill_dir_tree_sha"] == at_boot["digest"]
    assert any("can no longer be built" in n and "union-contract-dep" in n for n in doc["notes"])
    with pytest.raises(ClosureError):      # without the boot-time closure it is still refused
        _build(tree, t, None)


# ------------------------------------------------------------------ only into a trial's own folder
def test_a_folder_without_trial_state_is_refused(tree, capsys) -> None:
    """verdict used to write verdict.json into any folder it was given."""
    (tree["wd"] / "trial-state.json").unlink()
    refused(tree, capsys, argv(tree), "not a trial workdir (no trial-state.json)")


def test_a_symlinked_workdir_is_refused(tree, capsys, tmp_path) -> None:
    link = tmp_path / "link-to-workdir"
    link.symlink_to(tree["wd"], target_is_directory=True)
    args = argv(tree)
    args[args.index("--workdir") + 1] = str(link)
    refused(tree, capsys, args, "the workdir is a symlink")


def test_verdict_json_is_readable_by_its_owner_only(tree, capsys) -> None:
    assert run(argv(tree), capsys)[0] == 0
    assert (tree["wd"] / "verdict.json").stat().st_mode & 0o777 == 0o600


def test_the_verdict_says_what_happened_in_one_sentence_in_the_message_language(tree, capsys, monkeypatch) -> None:
    monkeypatch.delenv("LIVE_TRIAL_LANG", raising=False)
    assert run(argv(tree), capsys)[0] == 0
    ja = written(tree)["summary"]
    assert ja.startswith("work（union-target のスキル）は最後まで自分で動き") and ja.count("。") == 1
    (tree["wd"] / "verdict.json").unlink()       # a second verdict is refused without --override: judge it afresh
    assert run(argv(tree, "--lang", "en"), capsys)[0] == 0
    assert written(tree)["summary"] == ("work (a skill of union-target) ran to the end on its own, and the result it "
                                        "was meant to produce was checked and is there.")


def test_the_real_cause_of_a_failure_is_in_the_reasons(tree) -> None:
    """The evaluator's blockers and its own failure (the CLI's line, e.g. "Not logged in", kept in evaluation.json) and
    the notes recorded with a stop are in overall.reasons, not only in evaluation.json."""
    t = resolve_target("union-target:work", tree["plugins"])
    (tree["wd"] / "evaluation.json").write_text(json.dumps({"judged_by": "fallback", "attempts": [
        {"problems": ["the CLI reported an error (success): Not logged in · Please run /login"]}]}))
    common = dict(workdir=tree["wd"], target=t, plugins_root=tree["plugins"], session_id="s", requested_model=None,
                  launch="PASS", gate_response_count=0, nudge_count=0)
    doc = build_verdict(**common, completion="PASS", goal_result="FAIL", poll_exit="DONE",
                        goal_blockers=["the evaluator gave no valid judgement", "report.md does not exist"])
    assert doc["overall"]["verdict"] == "DEGRADED"
    assert doc["overall"]["reasons"][1:] == [
        "the evaluator found: the evaluator gave no valid judgement", "the evaluator found: report.md does not exist",
        "the evaluator could not judge: the CLI reported an error (success): Not logged in · Please run /login"]
    (tree["wd"] / "evaluation.json").unlink()
    doc = build_verdict(**common, completion="FAIL", goal_result=None, poll_exit="STALL", stop_reason="api_error",
                        notes=["the model's API answered with an error (401): Not logged in"])
    assert doc["overall"]["reasons"][-1] == "the model's API answered with an error (401): Not logged in"
    passed = build_verdict(**common, completion="PASS", goal_result="PASS", poll_exit="DONE", notes=["a note"])
    assert passed["overall"]["reasons"] == [] and "summary" not in passed
