"""The fresh evaluator on the real CLI (``claude -p --json-schema``), played by the rehearsal server.

A prepared workdir (out/ files + a transcript.jsonl with real uuids) stands in for a collected trial, so
these tests do not depend on ``run``. Each evaluator reply cites what it found in the evaluator's prompt
through ``{{re:...}}``: the uuid of the transcript record that called Write.
"""
from __future__ import annotations

import json
import os
import uuid
from types import SimpleNamespace

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.judge.evaluator import check_starter, evaluate
from live_trial.session.claude_bin import find_claude

DESCRIPTION = ('Writes a greeting file out/greeting.txt containing exactly one line "Hello, <name>!" '
               '(name from the arguments, default World), then writes out/status.json.')
WRITE_UUID = r'{{re:- ([0-9a-f-]{36}) \| assistant \| Write \| \S*greeting\.txt}}'
TIMEOUT_S = 240.0


def _good_evidence(source_uuid=WRITE_UUID):
    return [{"claim": "the greeting file holds the promised line", "source": "out/greeting.txt",
             "observed": "1 file with 1 line: Hello, World!"},
            {"claim": "the skill wrote it with the Write tool", "source": source_uuid,
             "observed": "1 Write call to out/greeting.txt"}]


def _answer(**fields):
    base = {"verdict": "PASS", "blockers": [], "evidence": _good_evidence(), "checks": []}
    base.update(fields)
    return {"content": [{"tool_use": {"name": "StructuredOutput", "input": base}}]}


def _scenario(*replies):
    """Evaluator rules: the first reply once, the next once, ... the last one for every later request."""
    rules = []
    for i, reply in enumerate(replies):
        rule = {"id": f"evaluator-{i + 1}", "when": {"tools_include": ["StructuredOutput"]}, "reply": reply}
        if i < len(replies) - 1:
            rule["times"] = 1
        rules.append(rule)
    return {"name": "evaluator-e2e", "rules": rules}


@pytest.fixture
def workdir(tmp_path):
    wd = tmp_path / "eval-log" / "hello" / "greet" / "live-trial" / "20261130T120000-abcd"
    (wd / "out").mkdir(parents=True)
    (wd / "out" / "greeting.txt").write_text("Hello, World!\n")
    (wd / "out" / "status.json").write_text('{"status": "ok"}\n')
    ids = [str(uuid.uuid4()) for _ in range(5)]
    sid = str(uuid.uuid4())
    recs = [
        {"type": "user", "uuid": ids[0], "parentUuid": None, "sessionId": sid,
         "message": {"role": "user", "content": 'Skill({skill: "hello:greet", args: ""})'}},
        {"type": "assistant", "uuid": ids[1], "parentUuid": ids[0], "sessionId": sid,
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Skill",
                                                       "input": {"skill": "hello:greet"}}]}},
        {"type": "assistant", "uuid": ids[2], "parentUuid": ids[1], "sessionId": sid,
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "Write",
                                                       "input": {"file_path": str(wd / "out" / "greeting.txt"),
                                                                 "content": "Hello, World!\n"}}]}},
        {"type": "user", "uuid": ids[3], "parentUuid": ids[2], "sessionId": sid,
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                                                  "content": "File created successfully"}]}},
        {"type": "assistant", "uuid": ids[4], "parentUuid": ids[3], "sessionId": sid,
         "message": {"role": "assistant", "content": [{"type": "text", "text": "DONE: ok"}]}},
    ]
    (wd / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return SimpleNamespace(path=wd, write_uuid=ids[2])


TARGET = SimpleNamespace(qualified="hello:greet", frontmatter={"description": DESCRIPTION}, skill_md=None)


def _run(workdir, server, config_dir):
    env = {**os.environ, **server.env(config_dir)}
    return evaluate(workdir.path, TARGET, find_claude(), env, timeout_s=TIMEOUT_S)


def _evaluator_requests(server):
    return [r for r in server.requests if r.get("rule") and r["rule"].startswith("evaluator")]


@pytest.mark.budget(6)
def test_pass_with_evidence_pointing_at_real_files_and_transcript_uuids(workdir, rehearsal_server, rehearsal_config):
    server = rehearsal_server(_scenario(_answer()))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "PASS", doc["attempts"][-1]["problems"]
    assert len(doc["attempts"]) == 1 and doc["judged_by"] == "evaluator"
    sources = [e["source"] for e in doc["evidence"]]
    assert sources == ["out/greeting.txt", workdir.write_uuid]
    on_disk = json.loads((workdir.path / "evaluation.json").read_text())
    assert schema_errors(on_disk, "evaluation.schema.json") == [] and on_disk["session_id"] == doc["session_id"]
    reqs = _evaluator_requests(server)
    assert len(reqs) == 1 and not any(r["template_misses"] for r in reqs)
    assert sorted(reqs[0]["tools"]) == ["Glob", "Grep", "Read", "StructuredOutput"]


@pytest.mark.budget(6)
@pytest.mark.parametrize("bad,needle", [
    (_answer(score=9), "score-like field"),
    (_answer(evidence=_good_evidence(source_uuid="0badc0de-0000-4000-8000-000000000000")), "does not exist"),
    (_answer(evidence=[]), "needs at least one evidence item"),
])
def test_refused_answers_end_fail_after_one_retry(workdir, rehearsal_server, rehearsal_config, bad, needle):
    server = rehearsal_server(_scenario(bad))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["the evaluator gave no valid judgement"]
    assert len(doc["attempts"]) == 2 and doc["judged_by"] == "fallback"
    assert all(any(needle in p for p in a["problems"]) for a in doc["attempts"]), doc["attempts"]
    assert doc["attempts"][0]["session_id"] != doc["attempts"][1]["session_id"]
    reqs = _evaluator_requests(server)
    assert len({r["conversation_id"] for r in reqs}) == 2  # two separate, fresh processes
    assert "previous answer was refused" in doc["attempts"][1]["request"]


@pytest.mark.budget(6)
def test_a_refused_first_answer_then_a_valid_one_is_pass(workdir, rehearsal_server, rehearsal_config):
    server = rehearsal_server(_scenario(_answer(rating="A"), _answer()))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "PASS" and len(doc["attempts"]) == 2
    assert "score-like field" in doc["attempts"][0]["problems"][0]


@pytest.mark.budget(6)
def test_fail_with_a_blocker_is_kept(workdir, rehearsal_server, rehearsal_config):
    reply = _answer(verdict="FAIL", blockers=["out/greeting.txt was never written by the skill"],
                    evidence=[{"claim": "no greeting", "source": "out/status.json", "observed": "1 file, 1 key"}])
    server = rehearsal_server(_scenario(reply))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["out/greeting.txt was never written by the skill"]
    assert len(doc["attempts"]) == 1


@pytest.mark.budget(6)
def test_check_only_evaluator_ends_with_one_watch_result(tmp_path, rehearsal_server, rehearsal_config):
    from live_trial.notices import watch as wt
    from live_trial.notices.notify import read_notifications

    root = tmp_path / "eval-log"
    wd = tmp_path / "trial"
    wd.mkdir()
    (wd / "replies.log").write_text("reply 1\nreply 2\n")
    w = wt.register_watch(root, objective="reply to inquiries", unverified="replies not seen yet", workdir=str(wd))
    server = rehearsal_server({"rules": [{"id": "check", "when": {"tools_include": ["StructuredOutput"]}, "reply": {
        "content": [{"tool_use": {"name": "StructuredOutput",
                                  "input": {"result": "ok", "note": "2 replies found in replies.log"}}}]}}]})
    env = {**os.environ, **server.env(rehearsal_config(wd, root))}
    starter = check_starter(env=env, claude=find_claude(), timeout_s=TIMEOUT_S)
    out = wt.check_due(root, starter, env={}, lang="en")
    assert out == [{"id": w["id"], "result": "ok", "note": "2 replies found in replies.log", "status": "confirmed"}]
    assert [n["kind"] for n in read_notifications(root)] == ["confirmed"]
    assert wt.check_due(root, starter, env={}) == []
    assert len([r for r in server.requests if r.get("rule") == "check"]) == 1
