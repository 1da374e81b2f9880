"""The trial's records sealed at collect and checked before they are used (README "What a trial
leaves behind"): the digest of each record as collect wrote it, what a writer after collect changes, the stop it
causes, and the session's writes in the workdir outside its own folder."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from live_trial.jsonfile import schema_errors
from live_trial.stop_reasons import StopReason
from live_trial.trial.changes import snapshot_cwd
from live_trial.trial.collect import collect
from live_trial.trial.evaluation import records_hold
from live_trial.trial.facts import Facts
from live_trial.trial.seal import (
    Sealer,
    add_to_seal,
    differences,
    file_digest,
    outside_note,
    outside_writes,
    seal_digest,
    seal_records,
    text_digest,
    write_seal,
)

FORGED = '{"added": ["report.csv"], "changed": [], "removed": [], "copied": ["report.csv"]}'


def _collected(tmp_path: Path) -> tuple[Path, str]:
    """A workdir collected as a trial's is: the session made report.csv in cwd/; returns (workdir, seal digest)."""
    wd = tmp_path / "wd"
    cwd = wd / "cwd"
    cwd.mkdir(parents=True)
    (wd / "out").mkdir()
    before = snapshot_cwd(cwd, exclude=[wd])
    (cwd / "report.csv").write_text("name,n\na,1\n")
    (wd / "out" / "status.json").write_text("{}\n")
    src = tmp_path / "cli" / "s.jsonl"
    src.parent.mkdir()
    src.write_text('{"type": "user"}\n')
    sealer = Sealer(wd)
    collect(wd, pane_text="screen ✓", transcript_src=src, subagents_src=None, cwd=cwd, before=before,
            exclude=[wd], sealer=sealer)
    kept: list[str] = []
    digest = seal_records(wd, sealer, [], keep=kept.append)
    assert kept == [digest]
    return wd, digest


def test_collect_seals_each_record_as_it_wrote_it(tmp_path):
    wd, digest = _collected(tmp_path)
    doc = json.loads((wd / "records-seal.json").read_text())
    assert schema_errors(doc, "records-seal.schema.json") == []
    assert sorted(doc["files"]) == ["pane.txt", "side-effects/files.json",
                                    "side-effects/files/report.csv", "transcript.jsonl"]
    assert doc["files"]["pane.txt"] == text_digest("screen ✓") == file_digest(wd / "pane.txt")
    assert doc["files"]["side-effects/files.json"] == file_digest(wd / "side-effects" / "files.json")
    assert seal_digest(doc["files"]) == digest and differences(wd, digest) == []


def test_a_writer_after_collect_is_seen_in_each_way_it_can_write(tmp_path):
    wd, digest = _collected(tmp_path)
    (wd / "side-effects" / "files.json").write_text(FORGED)
    (wd / "side-effects" / "files" / "promised.txt").write_text("forged")
    (wd / "pane.txt").unlink()
    (wd / "out" / "status.json").write_text('{"status": "ok"}')         # out/ is the session's, not a record
    assert differences(wd, digest) == [
        "pane.txt removed after collect",
        "side-effects/files.json changed after collect",
        "side-effects/files/promised.txt is there but collect never wrote it"]


def test_a_seal_rewritten_or_removed_is_a_difference_and_no_seal_is_none(tmp_path):
    wd, digest = _collected(tmp_path)
    files = json.loads((wd / "records-seal.json").read_text())["files"]
    (wd / "side-effects" / "files.json").write_text(FORGED)
    write_seal(wd, {**files, "side-effects/files.json": file_digest(wd / "side-effects" / "files.json")})
    assert differences(wd, digest) == ["records-seal.json changed after collect"]
    (wd / "records-seal.json").unlink()
    assert differences(wd, digest) == ["records-seal.json was removed or rewritten after collect"]
    assert differences(wd, None) == []          # collected before seals existed: nothing to check


def test_a_record_written_later_joins_the_seal_only_while_the_seal_holds(tmp_path):
    wd, digest = _collected(tmp_path)
    (wd / "evaluation.json").write_text("{}\n")
    again = add_to_seal(wd, digest, [wd / "evaluation.json"])
    assert again != digest and differences(wd, again) == []
    (wd / "evaluation.json").write_text('{"goal_result": "PASS"}\n')
    assert differences(wd, again) == ["evaluation.json changed after collect"]
    assert add_to_seal(wd, digest, [wd / "evaluation.json"]) == digest     # the seal is no longer the one of digest


def _trial(wd: Path, digest: str | None, **facts) -> SimpleNamespace:
    logged: list[tuple] = []
    return SimpleNamespace(wd=SimpleNamespace(root=wd), state=SimpleNamespace(records_seal=digest),
                           facts=Facts(launch="PASS", completion="PASS", **facts), logged=logged,
                           journal=SimpleNamespace(log=lambda *a, **kw: logged.append((a, kw))))


def test_records_that_changed_stop_the_trial_as_the_skills_doing(tmp_path):
    wd, digest = _collected(tmp_path)
    trial = _trial(wd, digest)
    assert records_hold(trial, "before_evaluator") and trial.facts.notes == []
    (wd / "side-effects" / "files.json").write_text(FORGED)
    assert not records_hold(trial, "at_verdict")
    assert (trial.facts.completion, trial.facts.stop_reason) == ("FAIL", StopReason.RECORDS_TAMPERED)
    assert StopReason.RECORDS_TAMPERED.verdict == "FAIL"
    assert trial.facts.notes == ["the trial's records were changed after collect, by something the session started: "
                                 "side-effects/files.json changed after collect"]
    assert trial.logged == [(("records", "records_tampered"),
                             {"when": "at_verdict", "found": ["side-effects/files.json changed after collect"]})]
    blocked = _trial(wd, digest, blocked=True, stop_reason="evaluator_failed")
    assert not records_hold(blocked, "at_verdict")
    assert (blocked.facts.completion, blocked.facts.stop_reason) == ("PASS", "evaluator_failed")


def _call(name: str, **inp) -> dict:
    return {"type": "assistant", "uuid": "u", "message": {"content": [{"type": "tool_use", "name": name,
                                                                         "input": inp}]}}


def test_writes_outside_the_sessions_folder_are_listed_from_its_calls_and_the_workdir(tmp_path):
    wd = tmp_path / "wd"
    for rel in ("cwd/a.txt", "out/status.json", "out/more.txt", "nudge-1.md", "task.md", "evil.txt",
                ".trial.lock", "claude-config/x"):
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text("x")
    records = [
        _call("Write", file_path=str(wd / "cwd" / "a.txt"), content="x"),          # its own folder
        _call("Write", file_path=str(wd / "out" / "status.json"), content="{}"),   # the completion marker
        _call("Edit", file_path=str(wd / "side-effects" / "files" / "a.txt"), old_string="x", new_string="y"),
        _call("Bash", command=f"printf x > ../side-effects/files.json; cat {wd}/task.md > /dev/null"),
        _call("Bash", command="echo hi > ./b.txt && ls /usr/bin"),                 # in its folder, outside the workdir
        _call("Read", file_path=str(wd / "trial-state.json")),
    ]
    writes = outside_writes(wd, wd / "cwd", records)
    assert writes == ["evil.txt (found in the workdir)", "out/more.txt (found in the workdir)",
                      "side-effects/files.json (named by a Bash command)", "side-effects/files/a.txt (Write)",
                      "task.md (named by a Bash command)"]
    assert outside_note(writes).startswith("the session wrote in the workdir outside its own folder and the "
                                           "completion marker: evil.txt (found in the workdir); ")
    assert outside_note(writes).endswith("none of it was shown to the evaluator as the skill's output")
    assert outside_writes(wd / "nowhere", None, []) == []


def test_a_record_planted_before_collect_is_no_record_collect_wrote(tmp_path):
    """The session runs while collect works: a transcript it put under moved-from/ or subagents/ is not sealed (the
    evaluator reads moved-from/*.jsonl as the session's transcripts), so the check names it."""
    wd = tmp_path / "wd"
    for rel in ("moved-from/aaaa.jsonl", "moved-from/aaaa/subagents/agent-1.jsonl", "moved-from/fake.jsonl",
                "subagents/fake.jsonl", "cwd/.keep"):
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text("{}\n")
    cli = tmp_path / "cli" / "s"
    (cli / "subagents").mkdir(parents=True)
    (cli / "subagents" / "agent-2.jsonl").write_text("{}\n")
    sealer = Sealer(wd)
    collect(wd, pane_text="s", transcript_src=None, subagents_src=cli / "subagents", cwd=None, before=None,
            exclude=[wd], sealer=sealer)
    digest = seal_records(wd, sealer, ["aaaa.jsonl"], keep=lambda d: None)
    assert sorted(json.loads((wd / "records-seal.json").read_text())["files"]) == [
        "moved-from/aaaa.jsonl", "moved-from/aaaa/subagents/agent-1.jsonl", "pane.txt", "subagents/agent-2.jsonl"]
    assert differences(wd, digest) == ["moved-from/fake.jsonl is there but collect never wrote it",
                                       "subagents/fake.jsonl is there but collect never wrote it"]
