"""The judgement of a trial on the real claude CLI in real tmux (README "Evidence, watches and messages to a person",
"Questions (gates)"): what the evaluator is shown, what counts as evidence, a mostly-done PASS and its watch, one line
per criterion and one line per answered question.

Each test starts ``python -m live_trial run ... --json`` as a user would; the model and the evaluator are played by
rehearsal scenarios whose evaluator answers pick their sources out of the request the model server received.
"""
from __future__ import annotations

import hashlib
import json

import pytest

from live_trial.jsonfile import schema_errors
from tests.e2e.run_support import FAST, PLUGINS, SCENARIOS, final_json, run_cmd, workdirs

pytestmark = pytest.mark.e2e

REPORT = ["trialkit:report", "--plugins-root", str(PLUGINS)]


def _verdict(result: dict) -> dict:
    doc = json.loads(open(result["verdict_path"]).read())
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    return doc


def _trial(tmp_path, scenario: str, code: int, *extra: str, target: tuple = tuple(REPORT)) -> tuple[dict, dict]:
    """Run ``target`` against ``scenario`` as a user would; check the exit code; return (``run --json``, verdict)."""
    proc = run_cmd(tmp_path, *target, "--rehearsal", str(SCENARIOS / scenario), *extra, *FAST)
    result = final_json(proc)
    assert proc.returncode == code, proc.stderr[-3000:] + json.dumps(result)[-2000:]
    return result, _verdict(result)


def _notifications(tmp_path) -> list[dict]:
    path = tmp_path / "eval" / "notifications.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.budget(12)
def test_the_evaluator_is_shown_the_sessions_files_and_the_verdict_has_one_line_per_criterion(tmp_path):
    result, doc = _trial(tmp_path, "report-write.yaml", 0, "--lang", "en")
    wd = workdirs(tmp_path)[0]
    copy = wd / "side-effects" / "files" / "report.csv"
    sha = "sha256:" + hashlib.sha256(copy.read_bytes()).hexdigest()
    # The claim was filled from the prompt the model server received: the file, its size, sha256 and first line.
    assert doc["evidence"] == [{"claim": f"the report is listed with 15 bytes | {sha}, first line name,n",
                                "source": "side-effects/files/report.csv", "quote": "a,1",
                                "observed": "1 file with 2 data rows"}]
    request = json.loads((wd / "evaluation.json").read_text())["attempts"][0]["request"]
    assert f"- side-effects/files/report.csv | 15 bytes | {sha}" in request and "# Live trial task" not in request
    assert [(c["id"], c["verify_by"], c["result"]) for c in doc["criteria"]] == [
        ("IN1", "test", "not_checked_here"), ("OUT1", "evaluator", "pass"), ("IN2", "test", "not_checked_here")]
    assert doc["criteria"][1]["evidence"].startswith("2 of 3 lines are the rows")
    assert result["summary"] == doc["summary"] and result["summary"].startswith("report (a skill of trialkit) ran")
    assert _notifications(tmp_path)[-1]["text"].startswith("✅ Finished: ")
    assert "2 of its criteria are checked by tests, not by this trial." in _notifications(tmp_path)[-1]["text"]


@pytest.mark.budget(10)
def test_the_sessions_own_words_are_never_a_pass(tmp_path):
    """The session writes no report and says it did; the evaluator cites and quotes that assistant text record."""
    _, doc = _trial(tmp_path, "report-said.yaml", 6)
    assert (doc["completion"], doc["goal_result"], doc["overall"]["verdict"]) == ("PASS", "FAIL", "DEGRADED")
    assert doc["goal_blockers"][0].startswith("insufficient evidence: evidence item 0")
    assert "the session's own words" in doc["goal_blockers"][0] and doc["evidence"] == []
    evaluation = json.loads((workdirs(tmp_path)[0] / "evaluation.json").read_text())
    assert evaluation["judged_by"] == "insufficient_evidence" and len(evaluation["attempts"]) == 2
    assert [c["result"] for c in doc["criteria"]] == ["not_checked_here", "fail", "not_checked_here"]


@pytest.mark.budget(12)
def test_what_cannot_be_shown_yet_is_a_mostly_done_pass_watched_in_the_rehearsals_own_ledger(tmp_path):
    result, doc = _trial(tmp_path, "report-mailed.yaml", 0)
    wd = workdirs(tmp_path)[0]
    assert (doc["overall"]["verdict"], doc["goal_ledger"]) == ("PASS", "mostly_done")
    assert doc["unverified"] == "the report reaches the customer by mail" and doc["watch_id"]
    ledger = json.loads((wd / "rehearsal-watches" / "watches.json").read_text())
    assert schema_errors(ledger, "watch-ledger.schema.json") == []
    [watch] = ledger["watches"]
    assert (watch["id"], watch["status"], watch["target"]) == (doc["watch_id"], "open", "trialkit:report")
    assert watch["closure"] == doc["skill_dir_tree_sha"] and watch["workdir"] == str(wd)
    assert not (tmp_path / "eval" / "watches.json").exists(), "a rehearsal wrote the eval root's watch ledger"
    assert any("rehearsal's own ledger" in n for n in doc["notes"])
    notice = _notifications(tmp_path)[-1]
    assert notice["kind"] == "mostly_done" and notice["text"].startswith("🟡 だいたい終わりました: ")
    assert "the report reaches the customer by mail" in notice["text"] and "台本" in notice["text"]
    assert "まだ確かめられていないことがあります" in result["summary"] == doc["summary"]


@pytest.mark.budget(12)
def test_each_answered_question_is_one_line_with_its_own_kind(tmp_path):
    """README "Questions (gates)": answers are used in order, each with its kind; the rescue one degrades."""
    result, doc = _trial(tmp_path, "choose-twice.yaml", 6, "--gate-response-contractual", "Casual",
                         "--gate-response", "Bob", "--expect-gate", target=("trialkit:choose", "--plugins-root",
                                                                             str(PLUGINS)))
    assert doc["gate_answers"] == [
        {"n": 1, "question": "Which greeting style?", "options": ["Formal", "Casual"], "answer": "Casual",
         "kind": "contractual"},
        {"n": 2, "question": "Whom should it greet?", "options": ["World", "Bob"], "answer": "Bob", "kind": "rescue"}]
    assert (doc["gate_response_count"], doc["gate_kind"], doc["overall"]["verdict"]) == (2, "mixed", "DEGRADED")
    assert doc["overall"]["reasons"] == ["1 rescue gate response(s): a person had to step in"]
    assert doc["gate_contract_evidence"] == ["frontmatter allowed-tools: AskUserQuestion"]
    assert "途中の質問1件に代わりに答えました" in result["summary"] == doc["summary"]     # the rescue one


@pytest.mark.budget(6)
def test_a_contractual_answer_the_skill_does_not_declare_is_refused_before_anything(tmp_path):
    proc = run_cmd(tmp_path, "trialkit:mark", "--plugins-root", str(PLUGINS), "--rehearsal",
                   str(SCENARIOS / "mark-happy.yaml"), "--gate-response-contractual", "Yes")
    assert proc.returncode == 2 and "contractual is not grounded in the skill's frontmatter" in proc.stdout
    assert not (tmp_path / "eval").exists()
