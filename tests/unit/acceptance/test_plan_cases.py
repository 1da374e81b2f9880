"""plan with repeated cases and the defer queue (README "Planning many skills", references/suite-format.md "Repeats"):
a case of k samples is reused only from a case verdict PASS with k of k whose attempts each still hold; a one-off PASS
never satisfies it, a FLAKY case is never reused, nor is a passing attempt of a FLAKY run for a case of one sample;
a deferred case waits in queue.json and goes first in the next plan; watched skills run in an exhaustive plan."""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.acceptance.case_verdict import Attempt, CaseRun, case_doc, write_case_verdict
from live_trial.acceptance.plan import record_deferrals
from live_trial.acceptance.queue import load_queue
from live_trial.acceptance.suite import load_suite
from live_trial.cli.main import main
from tests.unit.acceptance.test_plan import entry, env, make_plan, record  # noqa: F401 - env is a fixture
from tests.unit.fakes import write_state


def suite(env: dict, text: str) -> dict:
    path = env["tmp"] / "live-trials.yaml"
    path.write_text(text)
    return {env["plugins"] / "many": load_suite(path)}


def case_run(env: dict, target: str, run_id: str, verdicts: list[str], *, repeats: int, scenario_id: str,
             case: str = "three") -> Path:
    """A case run of ``target`` whose attempts ended with ``verdicts`` (each a recorded live trial)."""
    plugin, skill = target.split(":")
    folder = env["eval"] / plugin / skill / "live-trial-cases" / run_id
    attempts = []
    for n, verdict in enumerate(verdicts, start=1):
        wd = record(env, target, f"{run_id[:-4]}{n:04d}", **({} if verdict == "PASS" else
                                                              {"goal_result": "FAIL"}))
        write_state(wd, plugin, skill, case_run=CaseRun(run_id, folder, case, n, repeats).to_doc())
        doc = json.loads((wd / "verdict.json").read_text())
        attempts.append(Attempt(n, doc["overall"]["verdict"], None, "s", workdir=wd, run_id=wd.name,
                                skill_dir_tree_sha=doc["skill_dir_tree_sha"], scenario_id=scenario_id, origin="live"))
    write_case_verdict(folder, case_doc(CaseRun(run_id, folder, case, len(verdicts), repeats), target=target,
                                        plugin=plugin, skill=skill, attempts=attempts, retries_used=0,
                                        retries_max=2, stopped=None, summary="s", eval_root=env["eval"], proof=False,
                                        started_at="2026-12-01T00:00:00.000Z",
                                        written_at="2026-12-01T00:01:00.000Z"))
    return folder


THREE = "skills:\n  s1:\n    cases:\n      - {name: three, repeats: 3}\n"


def scenario_id_of(env: dict, text: str) -> str:
    doc = make_plan(env, "many", suites=suite(env, text), max_live_trials=9)
    return entry(doc, "many:s1")["scenario_id"]


def test_a_one_off_pass_never_satisfies_a_case_that_asks_for_three(env):
    record(env, "many:s1", "20261130T101500-aaaa")
    doc = make_plan(env, "many", suites=suite(env, THREE), max_live_trials=9)
    row = entry(doc, "many:s1")
    assert (row["action"], row["reason"]) == ("run", "no case verdict yet (the case asks for 3 samples; a one-off "
                                                     "PASS never counts)")
    assert [e.get("repeats") for b in doc["live_batches"] for e in b if e["target"] == "many:s1"] == [3]


def test_a_case_verdict_pass_three_of_three_is_reused_while_each_attempt_holds(env):
    scen = scenario_id_of(env, THREE)
    folder = case_run(env, "many:s1", "20261201T000000-cccc", ["PASS"] * 3, repeats=3, scenario_id=scen)
    row = entry(make_plan(env, "many", suites=suite(env, THREE), max_live_trials=9), "many:s1")
    assert row["action"] == "reuse", row["reason"]
    assert row["reason"].startswith("case run PASS, 3 of 3 samples passed (3 asked)")
    assert row["verdict"] == str((folder / "case-verdict.json").relative_to(env["eval"]))
    attempt = env["eval"] / "many" / "s1" / "live-trial" / "20261201T000000-0002" / "transcript.jsonl"
    attempt.write_text(attempt.read_text() + "\n")           # one attempt's transcript edited: no longer holds
    row = entry(make_plan(env, "many", suites=suite(env, THREE), max_live_trials=9), "many:s1")
    assert row["action"] == "run"
    assert row["reason"].startswith("attempt 2 of the case run PASS no longer holds: transcript does not match")


def test_a_flaky_case_is_never_reused_nor_is_its_passing_attempt_for_a_single_case(env):
    scen = scenario_id_of(env, THREE)
    case_run(env, "many:s1", "20261201T000000-dddd", ["PASS", "DEGRADED", "PASS"], repeats=3, scenario_id=scen)
    row = entry(make_plan(env, "many", suites=suite(env, THREE), max_live_trials=9), "many:s1")
    assert (row["action"], row["reason"]) == ("run", "last case run was FLAKY (2 of 3 samples passed): a FLAKY case "
                                                     "is never reused as a PASS (case run 20261201T000000-dddd)")
    single = entry(make_plan(env, "many", max_live_trials=9), "many:s1")      # the default case: one sample
    assert single["action"] == "run"
    assert "attempt 3 of the case run 20261201T000000-dddd, whose case verdict is FLAKY" in single["reason"]


def test_fewer_samples_than_asked_is_no_reuse(env):
    text = THREE.replace("repeats: 3", "repeats: 2")
    scen = scenario_id_of(env, text)
    case_run(env, "many:s1", "20261201T000000-eeee", ["PASS", "PASS"], repeats=2, scenario_id=scen)
    assert entry(make_plan(env, "many", suites=suite(env, text), max_live_trials=9), "many:s1")["action"] == "reuse"
    row = entry(make_plan(env, "many", suites=suite(env, THREE), max_live_trials=9), "many:s1")
    assert row["action"] == "run" and "had 2 samples, the case asks for 3" in row["reason"]


def test_the_defer_queue_is_written_when_a_plan_runs_and_puts_the_waiting_cases_first(env, capsys):
    """README "A fair plan: the defer queue": plan only reads queue.json (looking twice changes nothing); the plan
    that runs records its deferred cases once (run again, or by its shards, it counts once), and they go first next."""
    argv = ["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"]),
            "--max-live-trials", "2", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert [e["target"] for b in first["live_batches"] for e in b] == ["many:s1", "many:s2"]
    assert entry(first, "many:s3")["reason"].startswith("over budget (--max-live-trials 2): waits (deferred for the "
                                                        "first time)")
    assert load_queue(env["eval"]) == {}                            # a look is no run
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert [e["target"] for b in again["live_batches"] for e in b] == ["many:s1", "many:s2"]   # the same plan
    for _ in range(2):                                              # run, then run again (or a second shard)
        record_deferrals(env["eval"], first)
    assert sorted(t for t, _ in load_queue(env["eval"])) == ["many:s3", "many:s4", "many:s5"]
    assert load_queue(env["eval"])[("many:s5", "default")].plans_waited == 1
    for target, run_id in (("many:s1", "20261201T000000-0001"), ("many:s2", "20261201T000000-0002")):
        record(env, target, run_id, goal_result="FAIL")             # the first two ran, and failed
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert sorted(e["target"] for b in second["live_batches"] for e in b) == ["many:s3", "many:s4"]
    s3 = entry(second, "many:s3")
    assert s3["fairness"]["rank"] == "waited" and s3["fairness"]["plans_waited"] == 1
    assert "goes first: it waited (deferred by 1 plan since" in s3["reason"]
    s1 = entry(second, "many:s1")
    assert (s1["action"], s1["fairness"]["rank"]) == ("defer", "failed")
    record_deferrals(env["eval"], second)
    assert load_queue(env["eval"])[("many:s5", "default")].plans_waited == 2


def test_a_queue_file_that_does_not_fit_refuses_the_plan_and_writes_nothing(env, capsys):
    env["eval"].mkdir(parents=True)
    (env["eval"] / "queue.json").write_text('{"cases": 3}')
    assert main(["plan", "--plugin-dir", str(env["plugins"] / "many"), "--eval-root", str(env["eval"])]) == 2
    assert "queue.json" in capsys.readouterr().err
    assert (env["eval"] / "queue.json").read_text() == '{"cases": 3}'


def test_a_proof_case_runs_whatever_the_budget(env):
    text = "skills:\n  s5:\n    cases:\n      - {name: proof, proof: true, model: claude-opus-4-8}\n"
    doc = make_plan(env, "many", suites=suite(env, text), max_live_trials=0)
    row = next(s for s in doc["skills"] if s["target"] == "many:s5")
    assert row["action"] == "run" and "a proof trial: never cut by the budget" in row["reason"]
    assert [e["target"] for b in doc["live_batches"] for e in b] == ["many:s5"]


def test_an_exhaustive_plan_runs_a_watched_skill_too(env):
    watch = {"id": "w-00000001", "target": "many:s1", "status": "open", "createdAt": "2026-12-01T00:00:00Z",
             "deadline": "2099-01-01T00:00:00Z"}
    assert entry(make_plan(env, "many", watches=[watch]), "many:s1")["action"] == "watching"
    row = entry(make_plan(env, "many", watches=[watch], profile="exhaustive"), "many:s1")
    assert (row["action"], row["reason"]) == ("run", "profile exhaustive re-runs every live skill, watched ones too")
