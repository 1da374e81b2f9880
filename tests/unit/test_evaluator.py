"""Fresh evaluator: answer rules, retry, evaluation.json (seed 001 OUT1). Fake process runner; no CLI."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.judge import answer as ea
from live_trial.judge import evaluator as ev

U1 = "11111111-1111-4111-8111-111111111111"
U2 = "22222222-2222-4222-8222-222222222222"
FAKE_UUID = "99999999-9999-4999-8999-999999999999"
DESCRIPTION = 'Writes a greeting file out/greeting.txt containing exactly one line "Hello, <name>!"'


@pytest.fixture
def workdir(tmp_path):
    wd = tmp_path / "run"
    (wd / "out").mkdir(parents=True)
    (wd / "out" / "greeting.txt").write_text("Hello, World!\n")
    (wd / "out" / "status.json").write_text('{"status": "ok"}\n')
    records = [
        {"type": "user", "uuid": U1, "message": {"role": "user", "content": "Skill hello:greet please"}},
        {"type": "assistant", "uuid": U2, "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write",
             "input": {"file_path": str(wd / "out" / "greeting.txt"), "content": "Hello, World!\n"}}]}},
        {"type": "system", "subtype": "turn_duration", "uuid": "33333333-3333-4333-8333-333333333333"},
    ]
    (wd / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return wd


def target(criteria=None):
    fm = {"description": DESCRIPTION}
    if criteria:
        fm["feedback_contract"] = {"criteria": criteria}
    return SimpleNamespace(qualified="hello:greet", frontmatter=fm, skill_md=None)


GOOD_PASS = {"verdict": "PASS", "blockers": [], "checks": [], "evidence": [
    {"claim": "the greeting file holds the promised line", "source": "out/greeting.txt",
     "observed": "1 file with 1 line: Hello, World!"},
    {"claim": "the Write tool wrote it", "source": U2, "observed": "1 Write call to out/greeting.txt"}]}


class FakeCLI:
    def __init__(self, *outputs):
        self.outputs = list(outputs)
        self.calls = []

    def __call__(self, argv, stdin_text, cwd, env, timeout_s):
        self.calls.append({"argv": argv, "prompt": stdin_text, "cwd": cwd, "env": dict(env), "timeout_s": timeout_s})
        out = self.outputs.pop(0)
        if isinstance(out, ev.ProcessResult):
            return out
        if isinstance(out, str):
            return ev.ProcessResult(0, out, "", False, 0.1)
        doc = {"type": "result", "subtype": "success", "is_error": False, "result": json.dumps(out),
               "session_id": "x", "structured_output": out}
        return ev.ProcessResult(0, json.dumps(doc), "", False, 0.1)


def run_eval(workdir, cli, tgt=None, **kw):
    return ev.evaluate(workdir, tgt or target(), "/bin/claude-fake", {"A": "1"}, runner=cli, **kw)


def test_valid_pass_is_kept_with_evidence_and_written(workdir):
    cli = FakeCLI(GOOD_PASS)
    doc = run_eval(workdir, cli)
    assert doc["goal_result"] == "PASS" and doc["blockers"] == [] and len(doc["evidence"]) == 2
    assert doc["judged_by"] == "evaluator" and len(doc["attempts"]) == 1
    on_disk = json.loads((workdir / "evaluation.json").read_text())
    assert on_disk == doc and schema_errors(on_disk, "evaluation.schema.json") == []
    assert doc["session_id"] == doc["attempts"][0]["session_id"]


def test_process_is_fresh_read_only_and_runs_in_the_workdir(workdir):
    cli = FakeCLI(GOOD_PASS)
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
    assert DESCRIPTION in prompt and "out/greeting.txt" in prompt and "Hello, World!" in prompt
    assert U1 in prompt and f"- {U2} | assistant | Write | out/greeting.txt" in prompt and "transcript.jsonl" in prompt
    assert "no score" in prompt


@pytest.mark.parametrize("bad,needle", [
    ({**GOOD_PASS, "score": 8}, "score-like"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][0], "rating": "A"}]}, "score-like"),
    ({**GOOD_PASS, "details": {"qualityScore": 0.9}}, "score-like"),
    ({**GOOD_PASS, "evidence": []}, "needs at least one evidence"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][1], "source": FAKE_UUID}]}, "does not exist"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][0], "source": "out/nothing.txt"}]}, "does not exist"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][0], "source": "../../etc/passwd"}]}, "does not exist"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][0], "observed": "the skill finished, tests passed"}]},
     "proxies"),
    ({**GOOD_PASS, "evidence": [{"claim": "the marker", "source": "out/status.json", "observed": "1 file, 1 key"}]},
     "not the completion marker"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][0], "observed": "deployed 2 services"}]}, "proxies"),
    ({**GOOD_PASS, "evidence": [{**GOOD_PASS["evidence"][1], "observed": "launched 3 workers"}]}, "proxies"),
    ({"verdict": "FAIL", "blockers": [], "evidence": [], "checks": []}, "needs at least one blocker"),
    ({"verdict": "MAYBE", "blockers": ["x"], "evidence": [], "checks": []}, "PASS or FAIL"),
])
def test_refused_answers_are_retried_once_with_the_reason_then_fail(workdir, bad, needle):
    cli = FakeCLI(bad, bad)
    doc = run_eval(workdir, cli)
    assert len(cli.calls) == 2
    assert needle in cli.calls[1]["prompt"] and "previous answer was refused" in cli.calls[1]["prompt"]
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["the evaluator gave no valid judgement"]
    assert doc["judged_by"] == "fallback" and doc["evidence"] == []
    assert [a["valid"] for a in doc["attempts"]] == [False, False]
    assert any(needle in p for p in doc["attempts"][0]["problems"])
    assert doc["attempts"][0]["session_id"] != doc["attempts"][1]["session_id"]
    assert schema_errors(json.loads((workdir / "evaluation.json").read_text()), "evaluation.schema.json") == []


MARKER_ITEM = {"claim": "the completion marker", "source": "out/status.json", "observed": "1 file with 1 key"}


@pytest.mark.parametrize("source", ["out/status.json", "./out/status.json", "out/status.json:1", "out/../out/status.json",
                                    "{wd}/out/status.json"])
def test_a_pass_whose_only_source_is_the_completion_marker_is_refused(workdir, source):
    """The task makes every trial write out/status.json with 2 keys: the harness's contract, not the skill's goal."""
    ctx = ev.build_context(workdir, target())
    item = {**MARKER_ITEM, "source": source.format(wd=workdir)}
    problems = ea.answer_problems({**GOOD_PASS, "evidence": [item, {**item, "observed": "1 file written with 2 keys"}]},
                                  ctx)
    assert len(problems) == 1 and "\n" not in problems[0]
    assert "at least one evidence item whose source is not the completion marker" in problems[0]
    assert "cite an artifact the skill produced, or the transcript record that shows the outcome" in problems[0]


def test_the_marker_next_to_real_evidence_is_fine_but_does_not_count_for_it(workdir):
    ctx = ev.build_context(workdir, target())
    ok = {**GOOD_PASS, "evidence": [MARKER_ITEM, *GOOD_PASS["evidence"]]}
    assert ea.answer_problems(ok, ctx) == []
    proxy_elsewhere = {**GOOD_PASS, "evidence": [{**MARKER_ITEM, "observed": "1 file written with 2 keys"},
                                                 {**GOOD_PASS["evidence"][1], "observed": "the skill finished"}]}
    assert any("proxies" in p for p in ea.answer_problems(proxy_elsewhere, ctx))
    assert ea.answer_problems({**GOOD_PASS, "verdict": "FAIL", "blockers": ["0 greeting lines"],
                               "evidence": [MARKER_ITEM]}, ctx) == []


def test_completion_marker_forms(workdir):
    ctx = ev.build_context(workdir, target())
    for yes in ["out/status.json", "./out/status.json", "out/status.json#L1", str(workdir / "out" / "status.json")]:
        assert "out/status.json" in ea.harness_files_of(yes, ctx), yes
    for no in ["out/greeting.txt", U2, f"transcript.jsonl#{U2}", "transcript.jsonl", "status.json", ""]:
        assert "out/status.json" not in ea.harness_files_of(no, ctx), no


def test_the_prompt_says_the_marker_is_no_evidence(workdir):
    prompt = ea.build_prompt(ev.build_context(workdir, target()))
    assert "out/status.json is the harness's own file" in prompt and "never evidence of the goal" in prompt


def test_numbers_inside_evidence_text_are_fine(workdir):
    ans = {**GOOD_PASS, "evidence": [{"claim": "scored 3 of 3 lines", "source": "out/greeting.txt",
                                      "observed": "1 file, 1 line, 13 characters; rating of the lines not given"}]}
    assert run_eval(workdir, FakeCLI(ans))["goal_result"] == "PASS"


def test_a_good_second_answer_is_used(workdir):
    cli = FakeCLI({**GOOD_PASS, "score": 10}, GOOD_PASS)
    doc = run_eval(workdir, cli)
    assert doc["goal_result"] == "PASS" and len(doc["attempts"]) == 2 and doc["judged_by"] == "evaluator"
    assert doc["session_id"] == doc["attempts"][1]["session_id"]


def test_valid_fail_is_kept(workdir):
    ans = {"verdict": "FAIL", "blockers": ["out/greeting.txt says 'Hi' instead of 'Hello, World!'"],
           "evidence": [{"claim": "wrong text", "source": "out/greeting.txt", "observed": "1 line: Hi"}], "checks": []}
    doc = run_eval(workdir, FakeCLI(ans))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ans["blockers"] and len(doc["attempts"]) == 1


@pytest.mark.parametrize("output", [
    ev.ProcessResult(None, "", "", True, 600.0),
    "not json at all",
    json.dumps({"type": "result", "is_error": False, "result": "I think it passed"}),
    json.dumps({"type": "result", "is_error": True, "subtype": "error_max_structured_output_retries",
                "errors": ["Failed to provide valid structured output after 5 attempts"]}),
    ev.ProcessResult(1, "", "Error: something", False, 0.2),
])
def test_no_structured_answer_is_a_failure_even_with_exit_0(workdir, output):
    doc = run_eval(workdir, FakeCLI(output, output))
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["the evaluator gave no valid judgement"]
    assert all(a["problems"] for a in doc["attempts"])


CRITERIA = [{"id": "OUT1", "text": "the greeting is written", "verify_by": "evaluator"},
            {"id": "OUT2", "text": "the file has one line"},
            {"id": "IN1", "text": "pytest covers it", "verify_by": "test"}]


def test_criteria_checks(workdir):
    ans = {**GOOD_PASS, "checks": [{"id": "OUT1", "result": "pass", "evidence": "out/greeting.txt has 1 line"},
                                   {"id": "OUT2", "result": "pass", "evidence": "1 line"}]}
    cli = FakeCLI(ans)
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
    doc = run_eval(workdir, FakeCLI({**GOOD_PASS, "checks": checks}), tgt=target(CRITERIA))
    assert doc["goal_result"] == "FAIL"
    assert [c["result"] for c in doc["checks"] if c["id"] == "OUT1"] == ["fail"]
    assert any(b.startswith("criterion OUT1 failed") for b in doc["blockers"])


def test_source_forms(workdir):
    ctx = ev.build_context(workdir, target())
    for ok in ["out/greeting.txt", str(workdir / "out" / "greeting.txt"), "out/greeting.txt:1", U1,
               f"transcript.jsonl#{U2}", "transcript.jsonl", U1.upper()]:
        assert ea.source_exists(ok, ctx), ok
    for bad in ["", FAKE_UUID, f"transcript.jsonl#{FAKE_UUID}", "out", "/etc/passwd", "out/../../x"]:
        assert not ea.source_exists(bad, ctx), bad


def test_workdir_without_transcript_or_out(tmp_path):
    wd = tmp_path / "empty"
    wd.mkdir()
    cli = FakeCLI({"verdict": "FAIL", "blockers": ["out/ is missing: 0 files"], "evidence": [], "checks": []})
    doc = run_eval(wd, cli)
    assert doc["goal_result"] == "FAIL"
    assert "none was collected" in cli.calls[0]["prompt"] and "(out/ is empty or missing)" in cli.calls[0]["prompt"]


def test_score_key_detection():
    for key in ["score", "overall_score", "qualityScore", "Rating", "grade", "points", "stars", "percentage",
                "confidence", "CONFIDENCE", "quality_score", "qualityscore"]:
        assert ea._is_score_key(key), key
    for key in ["claim", "source", "observed", "checkpoints", "remarks", "evidence", "blockers"]:
        assert not ea._is_score_key(key), key


# ----------------------------------------------------------------------------- check-only starter

def test_check_starter_is_read_only_and_returns_one_result(tmp_path):
    cli = FakeCLI({"result": "ok", "note": "2 replies found in the log"})
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
    starter = ev.check_starter(env={}, claude="/bin/claude-fake", runner=FakeCLI(answer))
    out = starter({"objective": "o", "unverified": "u", "workdir": None}, tmp_path)
    assert "error" in out and "result" not in out


def test_context_from_a_real_closure_target(workdir):
    from live_trial.closure.target import resolve_target
    from live_trial.resources import repo_root

    tgt = resolve_target("hello:greet", repo_root() / "examples" / "plugins")
    ctx = ev.build_context(workdir, tgt)
    assert ctx.target == "hello:greet" and "greeting.txt in the current working folder" in ctx.description
    assert {a["path"] for a in ctx.artifacts} == {"out/greeting.txt", "out/status.json"}


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


# ------------------------------------------------------------------ harness files and the marker's own record (bugs)
U_MARK = "44444444-4444-4444-8444-444444444444"
U_MARK_RESULT = "55555555-5555-4555-8555-555555555555"
U_BOTH = "66666666-6666-4666-8666-666666666666"
U_EDIT_STATE = "77777777-7777-4777-8777-777777777777"


def _add_records(wd, *records):
    with (wd / "transcript.jsonl").open("a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in records))


def _write_call(uuid, tool_id, *paths, name="Write"):
    return {"type": "assistant", "uuid": uuid, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"{tool_id}-{i}", "name": name, "input": {"file_path": str(path), "content": "x"}}
        for i, path in enumerate(paths)]}}


@pytest.fixture
def harness_wd(workdir):
    for name in ["task.md", "nudge-1.md", "trial-state.json", "trial-log.jsonl", "poll-state.json",
                 "cwd-snapshot.json", ".trial.lock", "evaluation.json", "verdict.json", "pane.txt"]:
        (workdir / name).write_text("{}\n")
    (workdir / "claude-config").mkdir()
    (workdir / "claude-config" / "settings.json").write_text("{}\n")
    (workdir / "side-effects" / "files").mkdir(parents=True)
    (workdir / "side-effects" / "files" / "greeting.txt").write_text("Hello, World!\n")
    _add_records(workdir, _write_call(U_MARK, "tm", workdir / "out" / "status.json"),
                 {"type": "user", "uuid": U_MARK_RESULT, "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": "tm-0", "content": "File created successfully"}]}},
                 _write_call(U_BOTH, "tb", workdir / "out" / "greeting.txt", workdir / "out" / "status.json"),
                 _write_call(U_EDIT_STATE, "te", workdir / "trial-state.json", name="Edit"))
    return workdir


def _only(item):
    return {**GOOD_PASS, "evidence": [{"claim": "c", "observed": "1 file written with 2 keys", **item}]}


@pytest.mark.parametrize("source", [
    "out/status.json", "./out//status.json", "out/../out/status.json", "out//./status.json:1", "{wd}/out/status.json",
    "{wd}//out/../out/status.json#L1", U_MARK, U_MARK.upper(), f"transcript.jsonl#{U_MARK}", U_MARK_RESULT,
])
def test_every_spelling_of_the_marker_and_its_write_record_is_the_marker(harness_wd, source):
    ctx = ev.build_context(harness_wd, target())
    src = source.format(wd=harness_wd)
    assert ea.harness_files_of(src, ctx) == ["out/status.json"]
    problems = ea.answer_problems(_only({"source": src}), ctx)
    assert len(problems) == 1 and "\n" not in problems[0]
    assert "whose source is not the completion marker" in problems[0] and "out/status.json" in problems[0]


@pytest.mark.parametrize("source", ["trial-state.json", "task.md", "nudge-1.md", "trial-log.jsonl", "poll-state.json",
                                    "cwd-snapshot.json", ".trial.lock", "evaluation.json", "verdict.json",
                                    "claude-config/settings.json", "./claude-config//settings.json",
                                    "{wd}/trial-state.json", "out/../task.md", U_EDIT_STATE])
def test_a_pass_citing_only_harness_files_is_refused(harness_wd, source):
    ctx = ev.build_context(harness_wd, target())
    src = source.format(wd=harness_wd)
    assert ea.harness_files_of(src, ctx) and "out/status.json" not in ea.harness_files_of(src, ctx)
    problems = ea.answer_problems(_only({"source": src}), ctx)
    assert len(problems) == 1 and "another file the harness itself writes" in problems[0], problems
    assert "cite an artifact the skill produced" in problems[0]


@pytest.mark.parametrize("source", ["pane.txt", "out/greeting.txt", "./out//greeting.txt", "{wd}/out/greeting.txt",
                                    "side-effects/files/greeting.txt", "transcript.jsonl", U1, U2, U_BOTH])
def test_what_the_skill_produced_stays_evidence(harness_wd, source):
    ctx = ev.build_context(harness_wd, target())
    src = source.format(wd=harness_wd)
    assert ea.harness_files_of(src, ctx) == [], src
    assert ea.answer_problems(_only({"source": src}), ctx) == []


def test_a_link_to_a_harness_file_is_that_file(harness_wd):
    out = harness_wd / "out"
    (out / "state-link.json").symlink_to(harness_wd / "trial-state.json")
    (out / "marker-copy.json").hardlink_to(out / "status.json")
    (out / "cfg").symlink_to(harness_wd / "claude-config")
    ctx = ev.build_context(harness_wd, target())
    assert ea.harness_files_of("out/state-link.json", ctx) == ["trial-state.json"]
    assert ea.harness_files_of("out/marker-copy.json", ctx) == ["out/status.json"]
    assert ea.harness_files_of("out/cfg/settings.json", ctx) == ["claude-config/settings.json"]
    for src in ["out/state-link.json", "out/marker-copy.json", "out/cfg/settings.json"]:
        assert ea.answer_problems(_only({"source": src}), ctx), src


def test_the_index_lists_what_each_record_writes(harness_wd):
    ctx = ev.build_context(harness_wd, target())
    writes = {row["uuid"]: row["writes"] for row in ctx.transcript_index}
    assert writes[U1] == [] and writes[U2] == ["out/greeting.txt"]
    assert writes[U_MARK] == ["out/status.json"] == writes[U_MARK_RESULT]
    assert writes[U_BOTH] == ["out/greeting.txt", "out/status.json"]
    assert writes[U_EDIT_STATE] == ["trial-state.json"]


def test_harness_sources_next_to_real_evidence_are_fine_but_do_not_count(harness_wd):
    ctx = ev.build_context(harness_wd, target())
    assert ea.answer_problems({**GOOD_PASS, "evidence": [
        {"claim": "c", "source": U_MARK, "observed": "1 file written with 2 keys"}, *GOOD_PASS["evidence"]]}, ctx) == []
    counted_only_in_harness = {**GOOD_PASS, "evidence": [
        {"claim": "c", "source": "trial-state.json", "observed": "1 file written with 2 keys"},
        {**GOOD_PASS["evidence"][1], "observed": "the skill finished"}]}
    assert any("proxies" in p for p in ea.answer_problems(counted_only_in_harness, ctx))
    assert ea.answer_problems({"verdict": "FAIL", "blockers": ["0 greeting lines"], "checks": [],
                               "evidence": [{"claim": "c", "source": "task.md", "observed": "1 line"}]}, ctx) == []


@pytest.mark.parametrize("extra", [{"confidence": 0.9}, {"Confidence": "high"}, {"quality_score": 3},
                                   {"meta": {"overallGrade": "A"}}, {"evidenceRating": 5}])
def test_score_like_fields_anywhere_in_the_answer_are_refused(workdir, extra):
    ctx = ev.build_context(workdir, target())
    assert any("score-like" in p for p in ea.answer_problems({**GOOD_PASS, **extra}, ctx))
    item = {**GOOD_PASS["evidence"][0], **extra}
    assert any("score-like" in p for p in ea.answer_problems({**GOOD_PASS, "evidence": [item]}, ctx))


def test_the_prompt_names_the_harness_files(workdir):
    prompt = ea.build_prompt(ev.build_context(workdir, target()))
    assert "trial-state.json" in prompt and "task.md" in prompt and "the call that wrote it" in prompt
