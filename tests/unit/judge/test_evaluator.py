"""Fresh evaluator: answer rules, retry, evaluation.json (seed 001 OUT1). Fake process runner; no CLI."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.judge import answer as ea
from live_trial.judge import evaluator as ev
from live_trial.judge.context import Produced
from live_trial.judge.sources import is_score_key
from tests.unit.fakes import FakeRunner

U1 = "11111111-1111-4111-8111-111111111111"
U2 = "22222222-2222-4222-8222-222222222222"
U3 = "33333333-3333-4333-8333-333333333333"
DESCRIPTION = 'Writes a greeting file greeting.txt containing exactly one line "Hello, <name>!"'
PRODUCED = Produced(files=("side-effects/files/greeting.txt",), changed=1, folder="cwd")


@pytest.fixture
def workdir(tmp_path):
    """A collected trial: the session wrote cwd/greeting.txt (copied to side-effects/files/) and the marker."""
    wd = tmp_path / "run"
    for rel, text in {"out/status.json": '{"status": "ok"}\n', "cwd/greeting.txt": "Hello, World!\n",
                      "side-effects/files/greeting.txt": "Hello, World!\n"}.items():
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text(text)
    records = [
        {"type": "user", "uuid": U1, "message": {"role": "user", "content": "Skill hello:greet please"}},
        {"type": "assistant", "uuid": U2, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write",
             "input": {"file_path": str(wd / "cwd" / "greeting.txt"), "content": "Hello, World!\n"}}]}},
        {"type": "user", "uuid": U3, "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "File created successfully"}]}},
        {"type": "system", "subtype": "turn_duration", "uuid": "44444444-4444-4444-8444-444444444444"},
    ]
    (wd / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return wd


def target(criteria=None):
    fm = {"description": DESCRIPTION}
    if criteria:
        fm["feedback_contract"] = {"criteria": criteria}
    return SimpleNamespace(qualified="hello:greet", frontmatter=fm, skill_md=None)


GOOD_PASS = {"verdict": "PASS", "blockers": [], "checks": [], "unverified": [], "evidence": [
    {"claim": "the greeting file holds the promised line", "source": "side-effects/files/greeting.txt",
     "quote": "Hello, World!", "observed": "1 file with 1 line: Hello, World!"},
    {"claim": "the Write tool wrote it", "source": U2, "quote": "greeting.txt",
     "observed": "1 Write call to greeting.txt"}]}


def run_eval(workdir, cli, tgt=None, produced=PRODUCED, **kw):
    return ev.evaluate(workdir, tgt or target(), "/bin/claude-fake", {"A": "1"}, runner=cli, produced=produced, **kw)


def test_valid_pass_is_kept_with_evidence_and_written(workdir):
    cli = FakeRunner(GOOD_PASS)
    doc = run_eval(workdir, cli)
    assert doc["goal_result"] == "PASS" and doc["blockers"] == [] and len(doc["evidence"]) == 2
    assert doc["evidence"][0]["quote"] == "Hello, World!" and doc["unverified"] == []
    assert doc["judged_by"] == "evaluator" and len(doc["attempts"]) == 1 and doc["version"] == 2
    on_disk = json.loads((workdir / "evaluation.json").read_text())
    assert on_disk == doc and schema_errors(on_disk, "evaluation.schema.json") == []
    assert doc["session_id"] == doc["attempts"][0]["session_id"]


def test_process_is_fresh_read_only_and_runs_in_the_workdir(workdir):
    cli = FakeRunner(GOOD_PASS)
    run_eval(workdir, cli, model="claude-x")
    call = cli.calls[0]
    argv = call["argv"]
    assert argv[0] == "/bin/claude-fake" and "-p" in argv
    assert argv[argv.index("--output-format") + 1] == "json"
    assert json.loads(argv[argv.index("--json-schema") + 1]) == ea.ANSWER_SCHEMA
    assert argv[argv.index("--tools") + 1] == "Read,Glob,Grep"
    assert argv[argv.index("--model") + 1] == "claude-x"
    assert "--continue" not in argv and "--resume" not in argv and "-c" not in argv and "-r" not in argv
    assert call["cwd"] == workdir.resolve() and call["env"] == {"A": "1"}
    prompt = call["prompt"]
    assert DESCRIPTION in prompt and "- side-effects/files/greeting.txt | 14 bytes | sha256:" in prompt
    assert "    | Hello, World!" in prompt
    assert U1 in prompt and f"- {U2} | assistant | Write | cwd/greeting.txt" in prompt and "transcript.jsonl" in prompt
    assert "Give no score" in prompt


@pytest.mark.parametrize("output", [
    ev.ProcessResult(None, "", "", True, 600.0),
    "not json at all",
    json.dumps({"type": "result", "is_error": False, "result": "I think it passed"}),
    json.dumps({"type": "result", "is_error": True, "subtype": "error_max_structured_output_retries",
                "errors": ["Failed to provide valid structured output after 5 attempts"]}),
    ev.ProcessResult(1, "", "Error: something", False, 0.2),
])
def test_no_structured_answer_is_a_failure_even_with_exit_0(workdir, output):
    doc = run_eval(workdir, FakeRunner(output, output))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["the evaluator gave no valid judgement"]
    assert all(a["problems"] for a in doc["attempts"])


CRITERIA = [{"id": "OUT1", "text": "the greeting is written", "verify_by": "evaluator"},
            {"id": "OUT2", "text": "the file has one line"},
            {"id": "IN1", "text": "pytest covers it", "verify_by": "test"}]


def test_criteria_checks(workdir):
    ans = {**GOOD_PASS, "checks": [{"id": "OUT1", "result": "pass", "evidence": "out/greeting.txt has 1 line"},
                                   {"id": "OUT2", "result": "pass", "evidence": "1 line"}]}
    cli = FakeRunner(ans)
    doc = run_eval(workdir, cli, tgt=target(CRITERIA))
    assert doc["goal_result"] == "PASS"
    assert [c["id"] for c in doc["criteria"]] == ["OUT1", "OUT2"]
    assert doc["criteria_skipped"] == [{"id": "IN1", "verify_by": "test"}]
    assert "OUT1: the greeting is written" in cli.calls[0]["prompt"] and "IN1" not in cli.calls[0]["prompt"]


@pytest.mark.parametrize("checks", [
    [{"id": "OUT1", "result": "pass", "evidence": ""}, {"id": "OUT2", "result": "pass", "evidence": "1 line"}],
    [{"id": "OUT2", "result": "pass", "evidence": "1 line"}],
    [{"id": "OUT1", "result": "fail", "evidence": "0 files"}, {"id": "OUT2", "result": "pass", "evidence": "1 line"}],
])
def test_a_criterion_without_evidence_or_missing_counts_as_fail(workdir, checks):
    doc = run_eval(workdir, FakeRunner({**GOOD_PASS, "checks": checks}), tgt=target(CRITERIA))
    assert doc["goal_result"] == "FAIL"
    assert [c["result"] for c in doc["checks"] if c["id"] == "OUT1"] == ["fail"]
    assert any(b.startswith("criterion OUT1 failed") for b in doc["blockers"])


def test_score_key_detection():
    for key in ["score", "overall_score", "qualityScore", "Rating", "grade", "points", "stars", "percentage",
                "confidence", "CONFIDENCE", "quality_score", "qualityscore"]:
        assert is_score_key(key), key
    for key in ["claim", "source", "observed", "checkpoints", "remarks", "evidence", "blockers"]:
        assert not is_score_key(key), key


# ----------------------------------------------------------------------------- check-only starter

def test_check_starter_is_read_only_and_returns_one_result(tmp_path):
    cli = FakeRunner({"result": "ok", "note": "2 replies found in the log"})
    watch = {"id": "w-12345678", "objective": "reply", "unverified": "replies not seen", "evidence": "deployed",
             "workdir": str(tmp_path)}
    starter = ev.check_starter(env={"B": "2"}, claude="/bin/claude-fake", runner=cli)
    assert starter(watch, tmp_path / "eval-log") == {"result": "ok", "note": "2 replies found in the log"}
    argv = cli.calls[0]["argv"]
    assert argv[argv.index("--tools") + 1] == "Read,Glob,Grep" and "--resume" not in argv
    assert json.loads(argv[argv.index("--json-schema") + 1]) == ev.CHECK_SCHEMA
    assert "do not implement, fix, change or send anything" in cli.calls[0]["prompt"]
    assert cli.calls[0]["cwd"] == tmp_path.resolve()


@pytest.mark.parametrize("answer", [{"result": "ok", "note": "the bot is running"}, {"result": "maybe", "note": "x"},
                                    {"result": "ng", "note": ""}])
def test_check_starter_refuses_non_results(tmp_path, answer):
    starter = ev.check_starter(env={}, claude="/bin/claude-fake", runner=FakeRunner(answer))
    out = starter({"objective": "o", "unverified": "u", "workdir": None}, tmp_path)
    assert "error" in out and "result" not in out


def test_context_from_a_real_closure_target(workdir):
    from live_trial.closure.target import resolve_target
    from live_trial.resources import repo_root

    tgt = resolve_target("hello:greet", repo_root() / "examples" / "plugins")
    ctx = ev.build_context(workdir, tgt, PRODUCED)
    assert ctx.target == "hello:greet" and "greeting.txt in the current working folder" in ctx.description
    assert [f["path"] for f in ctx.files] == ["side-effects/files/greeting.txt"] and ctx.marker_present


def test_criteria_from_seed_001_frontmatter_shape():
    fm = {"feedback_contract": {"criteria": [
        {"id": "IN1", "loop_scope": "inner", "text": "t", "verify_by": "test"},
        {"id": "IN2", "loop_scope": "inner", "text": "t", "verify_by": "script"},
        {"id": "OUT1", "loop_scope": "outer", "text": "PASS or FAIL only", "verify_by": "evaluator"},
        {"id": "OUT2", "loop_scope": "outer", "text": "actual model", "verify_by": "live-trial"}]}}
    judged, skipped = ea.split_criteria(fm)
    assert [c["id"] for c in judged] == ["OUT1", "OUT2"] and [c["id"] for c in skipped] == ["IN1", "IN2"]


def test_run_process_feeds_stdin_in_cwd(tmp_path):
    res = ev.run_process(["sh", "-c", "pwd; cat"], "the prompt", tmp_path, {"PATH": "/usr/bin:/bin"}, 30)
    assert res.exit_code == 0 and not res.timed_out
    assert res.stdout == f"{tmp_path.resolve()}\nthe prompt"


def test_run_process_kills_the_whole_group_at_the_timeout(tmp_path):
    pidfile = tmp_path / "child.pid"
    res = ev.run_process(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], "", tmp_path,
                         {"PATH": "/usr/bin:/bin"}, 0.5)
    assert res.timed_out and res.exit_code is None
    assert _group_gone(pidfile), "the grandchild survived the timeout"
    res2 = ev.parse_output(res)
    assert res2 == (None, None, "the evaluator did not answer in time")


def _group_gone(pidfile, within_s: float = 5.0) -> bool:
    """The grandchild whose pid is in ``pidfile`` ended (gone or a zombie) within ``within_s``: SIGKILL lands
    asynchronously, so it may still be dying for a moment after its parent was reaped."""
    import os
    import time
    child = int(pidfile.read_text())
    deadline = time.monotonic() + within_s
    while True:
        try:
            os.kill(child, 0)
            if open(f"/proc/{child}/stat").read().split()[2] == "Z":
                return True
        except (ProcessLookupError, FileNotFoundError):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_run_process_stops_within_a_second_when_the_harness_is_asked_to_stop(tmp_path):
    """SIGTERM during the evaluation: the evaluator (up to 600 s) must not keep the harness waiting."""
    import time
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    res = ev.run_process(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], "", tmp_path,
                         {"PATH": "/usr/bin:/bin"}, 600, should_stop=lambda: time.monotonic() - started > 0.3)
    assert res.timed_out and res.exit_code is None and res.stderr.startswith("stopped: the harness was asked to stop")
    assert res.duration_s < 30 and _group_gone(pidfile)
    # stopped with the harness, not out of time: "did not answer in time" would blame the evaluator for a Ctrl-C
    assert res.stopped and ev.process_failure(res) == ev.STOPPED_WITH_THE_HARNESS


def test_an_evaluator_stopped_with_the_harness_is_not_tried_again_nor_said_to_be_late(workdir):
    """A Ctrl-C while the evaluator judges: one attempt, recorded as stopped with the harness."""
    calls = []

    def stopped(argv, stdin_text, cwd, env, timeout_s):
        calls.append(argv)
        return ev.ProcessResult(None, "", "stopped: the harness was asked to stop\n", True, 0.2, stopped=True)
    doc = run_eval(workdir, stopped)
    assert len(calls) == 1 and len(doc["attempts"]) == 1, doc["attempts"]
    assert doc["attempts"][0]["process_failure"] == ev.STOPPED_WITH_THE_HARNESS
    assert not any("in time" in p for p in doc["attempts"][0]["problems"]), doc["attempts"][0]["problems"]
    assert ev.unjudged_problem(doc) == ev.STOPPED_WITH_THE_HARNESS
    assert schema_errors(doc, "evaluation.schema.json") == []


def test_run_process_never_leaves_the_evaluator_behind_on_a_second_ctrl_c(tmp_path):
    pidfile = tmp_path / "child.pid"

    def second_ctrl_c():
        if pidfile.exists() and pidfile.read_text().strip():
            raise KeyboardInterrupt
        return False
    with pytest.raises(KeyboardInterrupt):
        ev.run_process(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], "", tmp_path,
                       {"PATH": "/usr/bin:/bin"}, 600, should_stop=second_ctrl_c)
    assert _group_gone(pidfile)


def test_run_process_drops_the_nested_session_variables(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli", "KEEP_ME": "yes"}
    res = ev.run_process(["sh", "-c", "env"], "", tmp_path, env, 30)
    names = {line.split("=", 1)[0] for line in res.stdout.splitlines()}
    assert "KEEP_ME" in names and not names & {"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}


def test_run_process_delivers_a_big_prompt_to_a_slow_reader(tmp_path):
    """The prompt is written across the one-second slices (a retried communicate must not resend it)."""
    prompt = "x" * 300_000 + "\nend of prompt\n"
    res = ev.run_process(["sh", "-c", "sleep 1.5; wc -c"], prompt, tmp_path, {"PATH": "/usr/bin:/bin"}, 30)
    assert res.exit_code == 0 and int(res.stdout.strip()) == len(prompt.encode())




def test_an_api_error_that_ended_the_evaluators_turn_is_named_without_the_misleading_subtype(workdir):
    """claude -p marks an API error that ended its turn is_error with subtype "success": the problem quotes the
    error and never says "(success)"; a subtype that says more is kept."""
    failed = json.dumps({"type": "result", "is_error": True, "subtype": "success",
                         "result": "API Error: 500 Internal server error"})
    problems = run_eval(workdir, FakeRunner(failed, failed))["attempts"][0]["problems"]
    assert problems == ["the CLI reported an error: API Error: 500 Internal server error"], problems
    retries = json.dumps({"type": "result", "is_error": True, "subtype": "error_max_structured_output_retries",
                          "errors": ["Failed to provide valid structured output after 5 attempts"]})
    problems = run_eval(workdir, FakeRunner(retries, retries))["attempts"][0]["problems"]
    assert problems[0].startswith("the CLI reported an error (error_max_structured_output_retries): Failed")
