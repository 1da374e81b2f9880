"""A trial's records hold against the session that made them (README "What a trial leaves
behind", "Whose failure it is"): a process the session left behind that rewrites the side effects after collect, and
a Write call whose file the session removed again, never make a PASS. Real claude in real tmux, the model and the
evaluator played by rehearsal scenarios; each test starts ``python -m live_trial run`` as a person would.
"""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.e2e.run_support import FAST, PLUGINS, SCENARIOS, final_json, no_leftovers, run_cmd, workdirs
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

REPORT = ["trialkit:report", "--plugins-root", str(PLUGINS)]


def _writers(folder: Path) -> list[int]:
    """Pids of the late writers of the trial whose own folder is ``folder`` (their command line names it)."""
    needle = str(folder).encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if needle in open(f"/proc/{name}/cmdline", "rb").read():
                    found.append(int(name))
            except OSError:
                continue
    return found


def _end_writers(folder: Path) -> None:
    """End the late writers of the trial whose own folder is ``folder`` and check that none is left."""
    for pid in _writers(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_for(lambda: not _writers(folder), what="the late writer to end")


@pytest.mark.budget(8)
def test_a_late_writer_is_ended_by_the_trials_container_before_collect(tmp_path):
    """The session's escaped process (``setsid env -i``) waits for collect's side-effects/files.json to rewrite it:
    the trial's container (``auto``: the strongest this machine offers) ends it before collect, so it never writes."""
    proc = run_cmd(tmp_path, *REPORT, "--rehearsal", str(SCENARIOS / "report-late-writer.yaml"), *FAST)
    [wd] = workdirs(tmp_path)
    try:
        doc = json.loads(Path(final_json(proc)["verdict_path"]).read_text())
        [held] = [n for n in doc["notes"] if n.startswith("containment: ")]
        assert "tag-only" not in held, held
        assert _writers(wd / "cwd") == []                       # gone before collect, not only at the end
        assert not (wd.parent / "late-writer-ran").exists()      # so it never wrote into the records
        assert doc["overall"]["verdict"] != "PASS", json.dumps(doc)[-3000:]
        no_leftovers(wd)
    finally:
        _end_writers(wd / "cwd")


@pytest.mark.budget(8)
def test_a_late_writer_that_outlives_collect_is_caught_by_the_seal_and_never_a_pass(tmp_path):
    """Under tag-only containment (``LIVE_TRIAL_CONTAINMENT=tag``: no kernel holds the trial) the writer, with no tag
    and outside the pane's tree, really outlives collect and rewrites side-effects/: the seal sees it (FAIL
    records_tampered, the skill's doing), the evaluator is never shown the planted copy, and the trial's session and
    claude are gone afterwards (the writer itself is found by no finder of tag-only: README "Nothing left running")."""
    proc = run_cmd(tmp_path, *REPORT, "--rehearsal", str(SCENARIOS / "report-late-writer.yaml"), *FAST,
                   env={"LIVE_TRIAL_CONTAINMENT": "tag"})
    [wd] = workdirs(tmp_path)
    try:
        result = final_json(proc)
        doc = json.loads(Path(result["verdict_path"]).read_text())
        assert (wd.parent / "late-writer-ran").exists(), doc["notes"]        # it ran, after collect
        assert (doc["stop_reason"], doc["overall"]["verdict"], proc.returncode) == ("records_tampered", "FAIL", 1), (
            doc["overall"], doc["notes"])
        assert any(n.startswith("containment: tag-only") for n in doc["notes"]), doc["notes"]
        [note] = [n for n in doc["notes"] if n.startswith("the trial's records were changed after collect")]
        assert "side-effects/files.json changed after collect" in note
        log = [json.loads(x) for x in (wd / "trial-log.jsonl").read_text().splitlines()]
        caught = [r for r in log if r.get("decision") == "records_tampered"]
        assert caught, log[-5:]
        evaluation = wd / "evaluation.json"
        if evaluation.exists():     # the check before the evaluator passed: what it was shown was read before it
            requests = [a["request"] for a in json.loads(evaluation.read_text())["attempts"]]
            shown = [r.split("Files the trial's session created", 1)[1].split("Its working folder", 1)[0]
                     for r in requests]
            assert all("report.csv" not in listed and "- none: the session created or changed no file" in listed
                       for listed in shown), shown
        else:
            assert caught[0].get("when") == "before_evaluator", caught
        no_leftovers(wd)
    finally:
        _end_writers(wd / "cwd")


@pytest.mark.budget(14)
def test_a_file_written_then_removed_is_no_evidence_by_its_write_call(tmp_path):
    """Write report.csv, rm it with Bash (which also writes notes.txt next to the session's folder), DONE; the evaluator
    cites the Write call's record, twice."""
    proc = run_cmd(tmp_path, *REPORT, "--rehearsal", str(SCENARIOS / "report-write-remove.yaml"), *FAST)
    result = final_json(proc)
    doc = json.loads(Path(result["verdict_path"]).read_text())
    assert doc["overall"]["verdict"] != "PASS", json.dumps(doc)[-3000:]
    assert (doc["completion"], doc["goal_result"], proc.returncode) == ("PASS", "FAIL", 6)
    assert doc["goal_blockers"][0].startswith("insufficient evidence: evidence item 0")
    assert "no longer there at the end" in doc["goal_blockers"][0] and doc["evidence"] == []
    [wd] = workdirs(tmp_path)
    evaluation = json.loads((wd / "evaluation.json").read_text())
    assert evaluation["judged_by"] == "insufficient_evidence" and len(evaluation["attempts"]) == 2
    assert json.loads((wd / "side-effects" / "files.json").read_text())["added"] == []
    held, notes = doc["notes"][:1], doc["notes"][1:]           # first: which containment held the trial
    assert held[0].startswith("containment: "), doc["notes"]
    assert notes == ["the session wrote in the workdir outside its own folder and the completion marker: "
                     "notes.txt (named by a Bash command); none of it was shown to the evaluator as the skill's "
                     "output"]
    assert (wd / "notes.txt").read_text() == "draft\n"
    assert all("notes.txt |" not in a["request"] for a in evaluation["attempts"])     # not listed as a file


@pytest.mark.budget(10)
def test_files_planted_in_side_effects_before_collect_never_reach_the_evaluator(tmp_path):
    """A Bash call writes ``../side-effects/files/planted.txt`` and ``../side-effects/planted-top.txt`` before collect
    (README "What a trial leaves behind"): collect empties ``side-effects/files/``, so the first is gone, listed in no
    ``files.json`` and named in the notes; the second is still there after collect: ``records_tampered``, a FAIL whose
    reason names that cause, never "did not complete on its own"."""
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-plant-side-effects.yaml"), *FAST)
    [wd] = workdirs(tmp_path)
    doc = json.loads((wd / "verdict.json").read_text())
    assert (doc["overall"]["verdict"], doc["stop_reason"], proc.returncode) == ("FAIL", "records_tampered", 1), doc
    reasons = doc["overall"]["reasons"]
    assert reasons[0].startswith("the trial's records were changed after they were collected"), reasons
    assert not any("did not complete on its own" in r for r in reasons), reasons
    assert any("side-effects/planted-top.txt is there but collect never wrote it" in n for n in doc["notes"])
    assert not (wd / "side-effects" / "files" / "planted.txt").exists()
    assert json.loads((wd / "side-effects" / "files.json").read_text())["added"] == []
    assert any("side-effects/files/planted.txt (named by a Bash command)" in n for n in doc["notes"]), doc["notes"]
    assert not (wd / "evaluation.json").exists(), "the evaluator ran on tampered records"
