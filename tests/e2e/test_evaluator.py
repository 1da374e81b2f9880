"""The fresh evaluator on the real CLI (``claude -p --json-schema``), played by the rehearsal server.

A prepared workdir (the session's file in its folder cwd/ and its copy in side-effects/files/, the marker, a
transcript.jsonl with real uuids) stands in for a collected trial, so these tests do not depend on ``run``. Each
evaluator reply cites what it found in the evaluator's prompt through ``{{re:...}}``: the file listed as the session's
and the uuid of the transcript record that called Write. The server keeps every request body (``dump_dir``): the
tests read the prompt the evaluator really received.
"""
from __future__ import annotations

import json
import os
import uuid
from types import SimpleNamespace

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.judge.context import Produced
from live_trial.judge.evaluator import check_starter, evaluate
from live_trial.session.claude_bin import find_claude

DESCRIPTION = ('Writes a greeting file greeting.txt containing exactly one line "Hello, <name>!" '
               '(name from the arguments, default World), then writes the completion marker.')
WRITE_UUID = r'{{re:- ([0-9a-f-]{36}) \| assistant \| Write \| \S*greeting\.txt}}'
LISTED_FILE = r'{{re:\n- (side-effects/files/\S+) \| \d+ bytes \| sha256:}}'
TIMEOUT_S = 240.0
PRODUCED = Produced(files=("side-effects/files/greeting.txt",), changed=1, folder="cwd")


def _good_evidence(source_uuid=WRITE_UUID):
    return [{"claim": "the greeting file holds the promised line", "source": LISTED_FILE, "quote": "Hello, World!",
             "observed": "1 file with 1 line: Hello, World!"},
            {"claim": "the skill wrote it with the Write tool", "source": source_uuid, "quote": "greeting.txt",
             "observed": "1 Write call to greeting.txt"}]


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
    for rel, text in {"out/status.json": '{"status": "ok", "summary": "greeting.txt written"}\n',
                      "cwd/greeting.txt": "Hello, World!\n", "side-effects/files/greeting.txt": "Hello, World!\n"}.items():
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text(text)
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
                                                       "input": {"file_path": str(wd / "cwd" / "greeting.txt"),
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
    return evaluate(workdir.path, TARGET, find_claude(), env, produced=PRODUCED, timeout_s=TIMEOUT_S)


def _evaluator_requests(server):
    return [r for r in server.requests if r.get("rule") and r["rule"].startswith("evaluator")]


def _prompt_received(server) -> str:
    """The evaluator's prompt as the model server received it (the last user message of the request body; 2.1.332
    sends a ``{"role": "system"}`` message, ``# Environment``, after it)."""
    body = json.loads(open(_evaluator_requests(server)[0]["body_file"]).read())
    content = [m for m in body["messages"] if m.get("role") == "user"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


@pytest.mark.budget(6)
def test_pass_with_evidence_pointing_at_real_files_and_transcript_uuids(workdir, rehearsal_server, rehearsal_config,
                                                                        tmp_path):
    server = rehearsal_server(_scenario(_answer()), dump_dir=tmp_path / "bodies")
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "PASS", doc["attempts"][-1]["problems"]
    assert len(doc["attempts"]) == 1 and doc["judged_by"] == "evaluator"
    sources = [e["source"] for e in doc["evidence"]]
    assert sources == ["side-effects/files/greeting.txt", workdir.write_uuid]
    prompt = _prompt_received(server)           # what the evaluator was shown: the session's file, not out/
    assert "\n- side-effects/files/greeting.txt | 14 bytes | sha256:" in prompt and "    | Hello, World!" in prompt
    assert "greeting.txt written" not in prompt            # the marker's summary is the session's words
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
    (_answer(evidence=[{"claim": "done", "source": r'{{re:- ([0-9a-f-]{36}) \| assistant \| - \| DONE}}',
                        "quote": "DONE: ok", "observed": "1 greeting file written"}]), "own words"),
    (_answer(evidence=[{**_good_evidence()[0], "source": "out/status.json"}]), "completion marker"),
])
def test_refused_answers_end_fail_after_one_retry(workdir, rehearsal_server, rehearsal_config, bad, needle):
    server = rehearsal_server(_scenario(bad))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "FAIL" and len(doc["attempts"]) == 2
    if needle == "score-like field":
        assert doc["blockers"] == ["the evaluator gave no valid judgement"] and doc["judged_by"] == "fallback"
    else:                                                   # the evidence did not hold (README "Evidence, watches")
        assert doc["blockers"][0].startswith("insufficient evidence: ") and doc["judged_by"] == "insufficient_evidence"
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
    reply = _answer(verdict="FAIL", blockers=["greeting.txt says nothing to Bob"],
                    evidence=[{"claim": "no greeting", "source": "out/status.json", "quote": "ok", "observed": "1 key"}])
    server = rehearsal_server(_scenario(reply))
    doc = _run(workdir, server, rehearsal_config(workdir.path))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["greeting.txt says nothing to Bob"]
    assert len(doc["attempts"]) == 1 and doc["evidence"] == []          # the marker item was dropped


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
