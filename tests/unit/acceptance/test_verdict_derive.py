"""The verdict in two steps (README "What a trial leaves behind"): the workdir is read once (gather_facts) and the
verdict derived from those facts and the trial's findings without reading anything (derive_verdict); ``verdict`` on a
workdir ``run`` drove to its judgement derives, from what the trial recorded, the verdict ``run`` wrote."""
from __future__ import annotations

import builtins
import io
import json
import os
import subprocess

import pytest

from live_trial.acceptance.claims import Claims, TrialRecords, settle
from live_trial.acceptance.derive import derive_verdict
from live_trial.acceptance.findings import Findings, ledger_kind, recorded_findings
from live_trial.acceptance.verdict import CLOCK_ENV, write_verdict
from live_trial.acceptance.verdict_doc import SCHEMA
from live_trial.acceptance.verdict_facts import gather_facts
from live_trial.cli.main import main
from live_trial.closure.pinning import pin
from live_trial.closure.target import resolve_target
from live_trial.jsonfile import read_json, schema_errors, write_json
from live_trial.notices.outcome import summariser
from live_trial.transcript.builder import TranscriptBuilder
from tests.unit.fakes import write_evaluation
from tests.unit.acceptance.test_verdict_cmd import tree

__all__ = ["tree"]       # the fixture, used by name

WHEN = "2026-11-30T10:16:00.000Z"
ITEM = {"claim": "the report holds its line", "source": "side-effects/files/report.txt", "quote": "a,1",
        "observed": "1 file with 1 line"}
ENV = {"claude_version": "2.1.332", "tmux_version": "3.3a", "python": "3.11.7", "platform": "Linux-test"}


def _recorded(wd, plugins, **facts) -> dict:
    """Make ``wd``'s trial-state.json what ``run`` records at phase judged: its facts, closure and environment."""
    state = read_json(wd / "trial-state.json", "trial-state.schema.json")
    t = resolve_target("union-target:work", plugins)
    pinned = pin(t, plugins)
    state.update(phase="judged", model="claude-opus-4-8", lang="en", environment=ENV, claude_version="2.1.332",
                 closure={"digest": pinned.digest, "plugins": [p.name for p in pinned.plugins],
                          "plugin_dirs": [str(p.root) for p in pinned.plugins], "file_count": len(pinned.files)},
                 facts={"launch": "PASS", "completion": "PASS", "goal": "PASS", "goal_blockers": [],
                        "evidence": [ITEM], "unverified": [], "checks": [], "poll_exit": "DONE", "stop_reason": None,
                        "stall_row": None, "blocked": False, "gate_seen": False, "notes": ["a note"],
                        "warnings": [], **facts})
    write_json(wd / "trial-state.json", state, "trial-state.schema.json")
    (wd / "side-effects" / "files").mkdir(parents=True, exist_ok=True)
    (wd / "side-effects" / "files" / "report.txt").write_text("a,1\n")
    write_evaluation(wd, "PASS", evidence=[ITEM])
    return state


def _facts(tree):
    return gather_facts(tree["wd"], resolve_target("union-target:work", tree["plugins"]), tree["plugins"])


def _no_io(*_a, **_k):
    raise AssertionError("derive_verdict read or ran something")


def test_the_pure_part_opens_no_file_and_runs_nothing(tree, monkeypatch) -> None:
    _recorded(tree["wd"], tree["plugins"])
    facts = _facts(tree)
    findings = recorded_findings(facts.origin.state)
    say = summariser("en")
    first = derive_verdict(facts, findings, summarise=say, clock=lambda: WHEN)      # lazy imports and caches warm
    for owner, name in ((builtins, "open"), (io, "open"), (os, "open"), (os, "stat"), (os, "lstat"),
                        (os, "scandir"), (os, "listdir"), (subprocess, "Popen")):
        monkeypatch.setattr(owner, name, _no_io)
    again = derive_verdict(facts, findings, summarise=say, clock=lambda: WHEN)
    monkeypatch.undo()
    assert again == first and again.to_doc() == first.to_doc() and again.written_at == WHEN
    assert schema_errors(again.to_doc(), SCHEMA) == []
    with pytest.raises(AssertionError):         # the guard itself bites
        monkeypatch.setattr(builtins, "open", _no_io)
        open(tree["wd"] / "trial-state.json")
    monkeypatch.undo()


def test_the_closure_and_environment_recorded_at_start_are_the_ones_recorded(tree, monkeypatch) -> None:
    """No tmux -V and no boot-time closure given: both come from trial-state.json."""
    state = _recorded(tree["wd"], tree["plugins"])
    from live_trial.session.backend import Backend

    asked = []
    monkeypatch.setattr(Backend, "tmux_version", lambda self: asked.append("tmux -V") or "9.9")
    skill_md = tree["plugins"] / "union-target" / "skills" / "work" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nEdited while the trial ran.\n")
    facts = _facts(tree)
    doc = derive_verdict(facts, recorded_findings(facts.origin.state), clock=lambda: WHEN).to_doc()
    assert doc["environment"] == ENV and asked == []
    del state["environment"]            # a workdir from before the environment was recorded: asked now
    write_json(tree["wd"] / "trial-state.json", state, "trial-state.schema.json")
    assert _facts(tree).environment.to_doc()["tmux_version"] == "9.9" and asked == ["tmux -V"]
    assert _facts(tree).environment.claude_version == "2.1.332"       # the version trial-state.json records
    assert doc["skill_dir_tree_sha"] == state["closure"]["digest"] != facts.closure.now.digest
    assert any("changed during the trial" in n for n in doc["notes"])


def test_findings_are_recorded_only_once_run_reached_its_judgement(tree) -> None:
    state = _recorded(tree["wd"], tree["plugins"], unverified=["the mail arrives"])
    found = recorded_findings(state)
    assert (found.launch, found.goal_result, found.goal_ledger, found.unverified) == (
        "PASS", "PASS", "mostly_done", "the mail arrives")
    assert found.requested_model == "claude-opus-4-8" and found.lang == "en" and found.notes == ("a note",)
    assert recorded_findings({**state, "phase": "polling"}) is None
    assert recorded_findings({k: v for k, v in state.items() if k != "facts"}) is None
    assert [ledger_kind(g, u) for g, u in (("PASS", []), ("PASS", ["x"]), ("FAIL", ["x"]), (None, ["x"]))] == [
        "done", "mostly_done", "not_done", None]


def test_verdict_with_no_flags_writes_what_run_wrote_byte_for_byte(tree, capsys, monkeypatch) -> None:
    """The run path (recorded findings, the same steps) and the command on the same workdir, one clock."""
    _recorded(tree["wd"], tree["plugins"])
    monkeypatch.setenv(CLOCK_ENV, WHEN)
    facts = _facts(tree)
    findings = recorded_findings(facts.origin.state)
    run_wrote = write_verdict(tree["wd"], derive_verdict(facts, findings, summarise=summariser(findings.lang),
                                                         clock=lambda: WHEN).to_doc()).read_bytes()
    (tree["wd"] / "verdict.json").unlink()
    sd = tree["plugins"] / "union-target" / "skills" / "work"
    code = main(["verdict", "--workdir", str(tree["wd"]), "--target-skill", "union-target:work", "--skill-dir", str(sd)])
    assert code == 0, capsys.readouterr()
    assert (tree["wd"] / "verdict.json").read_bytes() == run_wrote
    doc = json.loads(run_wrote)
    assert doc["launch"] == "PASS" and doc["notes"] == ["a note"] and doc["written_at"] == WHEN


def test_a_flag_that_contradicts_the_record_needs_an_override(tree, capsys) -> None:
    _recorded(tree["wd"], tree["plugins"])
    sd = tree["plugins"] / "union-target" / "skills" / "work"
    argv = ["verdict", "--workdir", str(tree["wd"]), "--target-skill", "union-target:work", "--skill-dir", str(sd),
            "--launch", "FAIL"]
    assert main(argv + ["--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["code"] == "contradicts_record" and "--launch 'FAIL'" in out["message"]
    assert not (tree["wd"] / "verdict.json").exists()
    assert main(argv + ["--launch", "PASS"]) == 0          # the same as the record: nothing to override
    (tree["wd"] / "verdict.json").unlink()
    assert main(argv + ["--override", "the launch was by hand"]) == 0
    doc = json.loads((tree["wd"] / "verdict.json").read_text())
    assert doc["launch"] == "FAIL" and doc["overall"]["verdict"] == "FAIL"
    assert doc["override"] == {"why": "the launch was by hand", "evaluation_goal_result": "PASS", "replaced": None}
    assert "--launch 'FAIL' replaced the trial's record ('PASS'): the launch was by hand" in doc["notes"]


def test_without_a_record_the_flags_checked_against_the_records_are_the_findings(tree) -> None:
    facts = _facts(tree)
    records = TrialRecords(launch="PASS", skill_calls="union-target:work", transcript=True, poll_exit="STALL")
    settled = settle(Claims(launch="PASS", completion="FAIL", poll_exit="STALL", nudge_count=2), facts, records)
    assert settled.findings == Findings(launch="PASS", completion="FAIL", poll_exit="STALL", nudge_count=2)
    assert settled.override is None and settled.notes == ()


def test_an_override_never_makes_a_launch_pass_the_transcript_lacks(tree, capsys) -> None:
    """README "The steps, one by one": on a workdir run recorded a launch FAIL for, --override replaces the record but not the
    transcript: a --launch PASS with no Skill call of the target in it is refused, nothing written."""
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.turn("run", "DONE: ok")
    b.write(tree["wd"] / "transcript.jsonl")
    _recorded(tree["wd"], tree["plugins"], launch="FAIL")
    sd = tree["plugins"] / "union-target" / "skills" / "work"
    argv = ["verdict", "--workdir", str(tree["wd"]), "--target-skill", "union-target:work", "--skill-dir", str(sd),
            "--launch", "PASS", "--override", "I saw it start", "--json"]
    assert main(argv) == 2
    assert json.loads(capsys.readouterr().out)["code"] == "contradicts_transcript"
    assert not (tree["wd"] / "verdict.json").exists()


def test_a_records_tampered_fail_names_its_cause_and_the_files_not_an_unfinished_turn(tree) -> None:
    """README "What a trial leaves behind": records changed after collect stop the trial as records_tampered; its
    overall reason says so and names the files, never "did not complete on its own"."""
    note = ("the trial's records were changed after collect, by something the session started: "
            "side-effects/files/report.txt changed")
    _recorded(tree["wd"], tree["plugins"], completion="FAIL", goal=None, evidence=[], stop_reason="records_tampered",
              notes=["containment: cgroup-v2: held", note])
    facts = _facts(tree)
    reasons = derive_verdict(facts, recorded_findings(facts.origin.state), summarise=summariser("en"),
                             clock=lambda: WHEN).to_doc()["overall"]["reasons"]
    assert reasons[0].startswith("the trial's records were changed after they were collected"), reasons
    assert not any("did not complete on its own" in r for r in reasons), reasons
    assert any("side-effects/files/report.txt" in r for r in reasons), reasons
