"""Reading past trials (README "Reading a trial"): the timeline drawn from what a trial recorded, the transcript as a
conversation, the page's escaping and self-containment, and ``report`` / ``ls`` / ``show`` on good, old and broken
workdirs. The page in a real browser: tests/e2e/test_report.py."""
from __future__ import annotations

import json
import re
import shutil
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from live_trial.cli.main import main
from live_trial.jsonfile import schema_errors
from live_trial.report import conversation, page, timeline

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=timezone.utc)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def make_workdir(root: Path, run_id: str = "20261201T100000-aaaa", plugin: str = "hello", skill: str = "greet",
                 state: dict | None = None) -> Path:
    wd = root / plugin / skill / "live-trial" / run_id
    (wd / "out").mkdir(parents=True)
    started = datetime.strptime(run_id[:15], "%Y%m%dT%H%M%S").replace(tzinfo=timezone.utc)
    doc = {"schema_version": 1, "run_id": run_id, "target": f"{plugin}:{skill}",
           "started_at": at((started - T0).total_seconds()),
           "phase": "finished", "rehearsal": None, **(state or {})}
    (wd / "trial-state.json").write_text(json.dumps(doc))
    return wd


def verdict(**changes) -> dict:
    """A schema-valid verdict of hello:greet (a PASS unless changed)."""
    doc = {"schema_version": "live-trial-verdict/1", "target": "hello:greet", "plugin": "hello", "skill": "greet",
           "run_id": "20261201T100000-aaaa", "tier": "live", "downgrade_reason": None, "proof": False,
           "blocked": False, "launch": "PASS", "completion": "PASS", "goal_result": "PASS", "goal_blockers": [],
           "evidence": [{"claim": "the file is there", "source": "side-effects/files/greeting.txt",
                         "observed": "1 file greeting.txt with 1 line"}],
           "nudge_count": 0, "gate_response_count": 0, "gate_kind": "rescue", "gate_contract_evidence": [],
           "poll_exit": "DONE", "stop_reason": None, "overall": {"verdict": "PASS", "reasons": []},
           "skill_dir_tree_sha": "sha256:" + "a" * 64, "closure_plugins": ["hello"], "transcript_sha256": None,
           "session_id": None, "scenario_id": "sha256:" + "b" * 64, "scenario_origin": "live",
           "environment": {"claude_version": "2.1.197", "tmux_version": "3.3a", "python": "3.11", "platform": "x"},
           "requested_model": None, "actual_model": [], "notes": [], "started_at": at(0), "written_at": at(15.2)}
    doc.update(changes)
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    return doc


def write_log(wd: Path, *records: tuple) -> None:
    lines = [json.dumps({"at": at(t), "step": step, "decision": decision, **extra})
             for t, step, decision, extra in records]
    (wd / "trial-log.jsonl").write_text("\n".join(lines) + "\n")


FULL_LOG = [
    (0.1, "tools", "claude", {}), (2.0, "boot", "READY", {"elapsed_s": 1.5}), (3.0, "send", "delivered", {}),
    (3.1, "loading", "listed", {}), (3.5, "state", "BUSY_GENERATING", {}),
    (5.0, "state", "BUSY_TOOL", {"tool": "Write"}), (9.0, "state", "BUSY_GENERATING", {}),
    (9.5, "poll", "GATE", {"question": "Which colour?", "answered": "Red"}),
    (10.0, "nudge", "delivered", {"file": "nudge-1.md"}), (11.0, "state", "IDLE_TURN_COMPLETE", {}),
    (12.0, "poll", "DONE", {}), (12.5, "collect", "complete", {}), (12.6, "cleanup", "kill_session", {}),
    (15.0, "evaluate", "PASS", {"blockers": []}),
]


def test_the_timeline_draws_each_phase_and_state_for_as_long_as_it_lasted(tmp_path):
    wd = make_workdir(tmp_path)
    write_log(wd, *FULL_LOG)
    tl = timeline.build(wd, verdict())
    spans = [(b.lane, b.kind, round(b.start_s, 2), round(b.end_s, 2)) for b in tl.bars]
    assert spans == [("prepare", "prepare", 0.0, 0.5), ("boot", "boot", 0.5, 2.0), ("send", "send", 2.0, 3.1),
                     ("collect", "collect", 12.0, 12.6), ("evaluate", "evaluate", 12.6, 15.0),
                     ("session", "busy_generating", 3.5, 5.0), ("session", "busy_tool", 5.0, 9.0),
                     ("session", "busy_generating", 9.0, 11.0), ("session", "idle_turn_complete", 11.0, 12.0),
                     ("verdict", "verdict", 15.0, 15.2)]
    assert [b.label for b in tl.bars if b.kind == "busy_tool"] == ["BUSY_TOOL · tool Write"]
    assert {k: round(v, 2) for k, v in tl.state_totals.items()} == {
        "busy_tool": 4.0, "busy_generating": 3.5, "idle_turn_complete": 1.0}
    assert [(m.kind, m.at_s, m.label) for m in tl.marks] == [("gate", 9.5, "question answered: Red"),
                                                            ("nudge", 10.0, "nudge sent (nudge-1.md)")]
    assert tl.lanes == ["prepare", "boot", "send", "session", "collect", "evaluate", "verdict"]
    assert round(tl.total_s, 2) == 15.2 and tl.notes == []


def test_an_older_log_without_state_records_is_one_polling_bar_and_says_so(tmp_path):
    wd = make_workdir(tmp_path)
    write_log(wd, *[r for r in FULL_LOG if r[1] != "state"])
    (wd / "poll-state.json").write_text(json.dumps({"exits": [{"exit": "DONE", "at": at(12.0), "reason": "marker",
                                                               "state": "IDLE_TURN_COMPLETE", "ticks": 9}]}))
    (wd / "trial-log.jsonl").open("a").write("not json\n")
    tl = timeline.build(wd, verdict())
    [polling] = [b for b in tl.bars if b.lane == "session"]
    assert (polling.kind, round(polling.start_s, 2), round(polling.end_s, 2)) == ("polling", 3.1, 12.0)
    assert any(m.label.startswith("poll exit DONE") for m in tl.marks)
    assert any("no state changes" in n for n in tl.notes) and any("1 line(s)" in n for n in tl.notes)


def test_a_workdir_with_nothing_recorded_draws_nothing_and_says_why(tmp_path):
    wd = tmp_path / "x"
    wd.mkdir()
    tl = timeline.build(wd)
    assert tl.bars == [] and tl.notes and tl.lanes == []


def _records(*recs: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in recs)


def _rec(kind: str, uuid: str, content, t: float, **extra) -> dict:
    return {"type": kind, "uuid": uuid, "parentUuid": None, "timestamp": at(t),
            "message": {"role": kind, "content": content}, **extra}


def hostile_workdir(root: Path) -> Path:
    wd = make_workdir(root)
    (wd / "verdict.json").write_text(json.dumps(verdict(evidence=[
        {"claim": "it ran the agent", "source": "u-agent", "observed": "1 Agent call"},
        {"claim": "the file", "source": "side-effects/files/greeting.txt", "observed": "1 file"},
        {"claim": "outside", "source": "../../../../../etc/passwd", "observed": "nothing"}])))
    (wd / "side-effects" / "files").mkdir(parents=True)
    (wd / "side-effects" / "files" / "greeting.txt").write_text("Hello\n")
    (wd / "transcript.jsonl").write_text(_records(
        _rec("user", "u-prompt", "Do it </script><script>window.pwned=1</script>", 1),
        _rec("assistant", "u-agent", [{"type": "text", "text": "x" * 5000},
                                      {"type": "tool_use", "id": "t1", "name": "Agent", "input": {"prompt": "sub"}},
                                      {"type": "tool_use", "id": "t2", "name": "Read",
                                       "input": {"file_path": "/no/such"}}], 2),
        _rec("user", "u-r1", [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}], 3,
             toolUseResult={"status": "completed", "agentId": "abc"}),
        _rec("user", "u-r2", [{"type": "tool_result", "tool_use_id": "t2", "content": "File does not exist.",
                               "is_error": True}], 4)))
    (wd / "subagents").mkdir()
    (wd / "subagents" / "agent-abc.jsonl").write_text(_records(
        _rec("assistant", "s-1", [{"type": "text", "text": "sub says <b>hi</b>"}], 2.5, isSidechain=True)))
    (wd / "pane.txt").write_text("❯ </pre><script>window.pwned=2</script>\n")
    return wd


def test_the_conversation_folds_calls_marks_errors_nests_subagents_and_cuts_long_text(tmp_path):
    wd = hostile_workdir(tmp_path)
    conv = conversation.build(wd)
    kinds = [(e.kind, e.name) for e in conv.entries]
    assert kinds == [("prompt", ""), ("text", ""), ("tool", "Agent"), ("tool", "Read")]
    text, agent, read = conv.entries[1], conv.entries[2], conv.entries[3]
    assert len(text.text) == conversation.MAX_TEXT_CHARS and text.cut == 5000 - conversation.MAX_TEXT_CHARS
    assert agent.result == "done" and agent.agent == "abc" and not agent.is_error
    assert [(c.kind, c.text, c.source) for c in agent.children] == [("text", "sub says <b>hi</b>",
                                                                     "subagents/agent-abc.jsonl")]
    assert read.is_error and read.result == "File does not exist." and read.summary == "/no/such"
    anchors = [e.anchor for e in conv.entries if e.anchor]
    assert anchors == ["u-prompt", "u-agent"] and len(set(anchors)) == len(anchors)
    assert read.result_anchor == "u-r2" and conv.files == ["transcript.jsonl", "subagents/agent-abc.jsonl"][:1]


def test_the_page_escapes_everything_and_loads_nothing(tmp_path):
    wd = hostile_workdir(tmp_path)
    html = page.render(wd, "en")
    assert html.count("<script>") == 1 and html.count("</script>") == 1        # the page's own, nothing else
    assert "&lt;/script&gt;&lt;script&gt;window.pwned=1" in html and "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "&lt;/pre&gt;&lt;script&gt;window.pwned=2" in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the page must not load or link out"
    assert 'href="#rec-u-agent"' in html and 'id="rec-u-agent"' in html
    assert 'href="side-effects/files/greeting.txt"' in html
    assert "etc/passwd</td>" not in html and "../../../../../etc/passwd <span" in html   # shown, never linked
    assert "… 3000 more characters cut" in html and 'href="transcript.jsonl"' in html


def _render_in_a_new_process(wd: Path, cache: Path) -> str:
    import os
    import subprocess
    import sys

    code = "import sys; from live_trial.report import page; sys.stdout.write(page.render(sys.argv[1], 'en'))"
    env = {**os.environ, "LIVE_TRIAL_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", code, str(wd)], env=env, capture_output=True, text=True,
                          check=True, timeout=120).stdout


def test_a_new_process_renders_the_same_page_from_the_kept_compiled_template(tmp_path):
    wd = hostile_workdir(tmp_path)
    cache = tmp_path / "cache"
    first = _render_in_a_new_process(wd, cache)
    kept = list((cache / "templates").iterdir())
    assert len(kept) == 1 and kept[0].stat().st_size > 0          # the compiled page.html.j2
    before = kept[0].stat().st_mtime_ns
    second = _render_in_a_new_process(wd, cache)
    assert kept[0].stat().st_mtime_ns == before                   # loaded, not compiled and written again
    strip = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z")                      # the page's own generated_at
    assert strip.sub("", first) == strip.sub("", second) and "window.pwned" in second


def test_a_cache_folder_that_cannot_be_written_still_gives_the_page(tmp_path):
    wd = hostile_workdir(tmp_path)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder would be")
    html = _render_in_a_new_process(wd, blocker)
    assert "Content-Security-Policy" in html and "&lt;/script&gt;&lt;script&gt;window.pwned=1" in html
    assert blocker.read_text() == "a file where the cache folder would be"


def test_report_writes_a_readable_page_and_refuses_a_folder_that_is_no_trial(tmp_path, capsys):
    wd = hostile_workdir(tmp_path / "eval-log")
    assert main(["report", str(wd)]) == 0
    path = wd / "report.html"
    assert capsys.readouterr().out.strip() == f"WRITTEN: {path.resolve()}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    other = tmp_path / "not-a-trial"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    assert main(["report", str(other)]) == 2
    assert "not a trial's workdir" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


@pytest.fixture()
def eval_root(tmp_path) -> Path:
    """An eval root with good, old and broken trials."""
    root = tmp_path / "eval-log"
    good = make_workdir(root, "20261201T120000-aaaa")
    (good / "verdict.json").write_text(json.dumps(verdict(summary="greet passed.", started_at=at(7200),
                                                          written_at=at(7215.2))))
    fail = make_workdir(root, "20261201T110000-bbbb", "tools", "sweep")
    old = verdict(target="tools:sweep", plugin="tools", skill="sweep", completion="FAIL", goal_result=None,
                  poll_exit="STALL", stop_reason="hang", overall={"verdict": "FAIL", "reasons": ["did not complete"]},
                  started_at=at(3600), written_at=at(4300))
    (fail / "verdict.json").write_text(json.dumps(old))              # written before verdicts had a summary
    (fail / "poll-state.json").write_text(json.dumps({"exits": [
        {"exit": "STALL", "at": at(300), "reason": "no progress for 165s (stall_limit_s 165)", "state": "BUSY_TOOL",
         "ticks": 9},
        {"exit": "STALL", "at": at(630), "reason": "no progress for 330s (stall_limit_s 330)", "state": "BUSY_TOOL",
         "ticks": 20}]}))
    (make_workdir(root, "20261201T100000-cccc") / "verdict.json").write_text("{not json")
    make_workdir(root, "20261201T090000-dddd", state={"phase": "polling"})
    bad = make_workdir(root, "20261201T080000-eeee")
    (bad / "verdict.json").write_text(json.dumps({**verdict(started_at=at(-7200)),
                                                  "overall": {"verdict": "GREAT", "reasons": []}}))
    return root


def test_ls_lists_every_trial_newest_first_with_one_line_for_each_broken_one(eval_root, capsys):
    assert main(["ls", "--eval-root", str(eval_root)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split() == ["when", "target", "verdict", "took", "cost", "origin", "reason"]
    rows = lines[1:]
    assert [r.split()[2] for r in rows] == ["hello:greet", "tools:sweep", "hello:greet", "hello:greet",
                                            "hello:greet"]
    assert rows[0].split()[3:7] == ["PASS", "15.2s", "-", "live"] and rows[1].split()[3:5] == ["FAIL", "11m40s"]
    assert rows[1].split()[-1] == "hang"
    assert "BROKEN" in rows[2] and "verdict.json was refused: not valid JSON" in rows[2]
    assert "no verdict.json yet" in rows[3] and "phase polling" in rows[3]
    assert "BROKEN" in rows[4] and "overall/verdict" in rows[4]


def test_ls_filters_and_json(eval_root, capsys):
    assert main(["ls", "--eval-root", str(eval_root), "--verdict", "fail"]) == 0
    assert [ln.split()[2] for ln in capsys.readouterr().out.strip().splitlines()[1:]] == ["tools:sweep"]
    assert main(["ls", "--eval-root", str(eval_root), "--skill", "tools:sweep", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["trials"]
    assert row["verdict"] == "FAIL" and row["reason"] == "hang" and row["workdir"].endswith("20261201T110000-bbbb")
    assert main(["ls", "--eval-root", str(eval_root), "--verdict", "none", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["trials"]) == 3


def test_ls_without_an_eval_root_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["ls", "--eval-root", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the eval root is not a folder" in err[0]


def test_show_latest_prints_the_summary_reasons_evidence_and_next_step(eval_root, capsys):
    assert main(["show", "latest", "--eval-root", str(eval_root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: hello:greet") and "summary: greet passed." in out
    assert "1 file greeting.txt with 1 line (side-effects/files/greeting.txt)" in out
    assert "next step: nothing: it passed" in out


@pytest.mark.parametrize("command", ["show", "report"])
def test_a_folder_that_is_no_trial_is_refused_by_show_and_report_alike(eval_root, capsys, command):
    """The eval root itself (or a skill's folder) is not a trial: one line, exit 2, never "NO VERDICT" with exit 0."""
    for folder in (eval_root, eval_root / "hello" / "greet"):
        assert main([command, str(folder)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "not a trial's workdir" in err[0] and "live-trial ls" in err[0], err


def test_show_says_the_verdicts_warnings_and_notes(tmp_path, capsys):
    """A claude outside the verified range is a verdict warning; `show` is where a user reads a trial, so it says it."""
    wd = make_workdir(tmp_path)
    warning = ("claude 2.1.400 at /usr/bin/claude is outside the verified range 2.1.197–2.1.332: screen markers and "
               "transcript rules were checked on those releases only; run `live-trial doctor --cli /usr/bin/claude`")
    (wd / "verdict.json").write_text(json.dumps(verdict(warnings=[warning], notes=["record type foo unknown"])))
    assert main(["show", str(wd)]) == 0
    out = capsys.readouterr().out
    assert f"warnings:\n  - {warning}\n" in out and "notes:\n  - record type foo unknown\n" in out
    assert main(["show", str(wd), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == [warning]
    (wd / "verdict.json").write_text(json.dumps(verdict()))
    assert main(["show", str(wd)]) == 0
    assert "warnings:" not in capsys.readouterr().out


def test_show_an_old_stalled_trial_names_the_stall_limit_to_raise(eval_root, capsys):
    wd = eval_root / "tools" / "sweep" / "live-trial" / "20261201T110000-bbbb"
    assert main(["show", str(wd), "--lang", "en", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["next_step"].startswith("raise STALL_LIMIT above 330 s")
    assert shown["summary"] == ("sweep (a skill of tools) did not get to the end: nothing moved for a long time, so "
                                "it was cut off.")
    assert shown["reasons"] == ["did not complete"]


def test_show_a_broken_trial_says_what_is_wrong(eval_root, capsys):
    wd = eval_root / "hello" / "greet" / "live-trial" / "20261201T090000-dddd"
    assert main(["show", str(wd)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("NO VERDICT: hello:greet") and "run --resume" in out
    assert main(["show", str(eval_root / "missing")]) == 2


def test_the_criteria_and_the_answered_questions_are_shown_when_the_verdict_has_them(tmp_path, monkeypatch):
    """A verdict that lists its criteria and answered questions gets a table of each; one without them gets none."""
    from live_trial.report import trials

    wd = make_workdir(tmp_path)
    doc = verdict()
    doc.update(criteria=[{"id": "c1", "text": "writes <greeting.txt>", "verify_by": None, "result": "pass",
                          "evidence": "1 file"}],
               gate_answers=[{"n": 1, "question": "Which style?", "options": ["Formal", "Casual"], "answer": "Formal",
                              "kind": "rescue"}])
    real = trials.read_trial

    def with_fields(path):
        info = real(path)
        info.verdict, info.problem = doc, None
        return info

    monkeypatch.setattr(page, "read_trial", with_fields)
    html = page.render(wd, "en")
    assert '<section id="criteria">' in html and "writes &lt;greeting.txt&gt;" in html
    assert '<section id="gates">' in html and "Formal · Casual" in html
    monkeypatch.undo()
    (wd / "verdict.json").write_text(json.dumps(verdict()))
    html = page.render(wd, "en")
    assert '<section id="criteria">' not in html and '<section id="gates">' not in html


def test_questions_answered_are_taken_from_the_log_when_the_verdict_does_not_list_them(tmp_path):
    wd = make_workdir(tmp_path)
    (wd / "verdict.json").write_text(json.dumps(verdict()))
    write_log(wd, *FULL_LOG)
    html = page.render(wd, "en")
    assert '<section id="gates">' in html and "<td>Which colour?</td>" in html and "<td>Red</td>" in html


def test_damaged_harness_files_never_break_report_show_or_ls(tmp_path, capsys):
    """A hand-edited or damaged trial-log.jsonl, poll-state.json, files.json, evaluation.json or notifications.jsonl
    (a line nested 10^5 deep, an integer of 5000 digits) is skipped like any unreadable line: the page, the summary
    and the list are still made (they used to stop with a RecursionError traceback)."""
    root = tmp_path / "eval-log"
    wd = hostile_workdir(root)
    deep = b"[" * 100_000 + b"]" * 100_000
    huge = b'{"at":"' + at(1).encode() + b'","step":"poll","decision":"DONE","n":' + b"9" * 5000 + b"}"
    (wd / "trial-log.jsonl").write_bytes(deep + b"\n" + huge + b"\n")
    (root / "notifications.jsonl").write_bytes(deep + b"\n")
    for name in ("poll-state.json", "side-effects/files.json", "evaluation.json"):
        (wd / name).write_bytes(deep)
    assert main(["report", str(wd)]) == 0 and (wd / "report.html").is_file()
    assert main(["show", str(wd), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["verdict"] == "PASS"
    assert main(["ls", "--eval-root", str(root)]) == 0
    assert "hello:greet" in capsys.readouterr().out


def test_a_paste_the_cli_stored_wrapped_reads_as_the_task_pasted(tmp_path):
    """2.1.332 stores a multi-line paste as ``\\n\\n<pasted_content id=…>\\n<text></pasted_content id=…>\\n``
    (tests/unit/transcripts/cli332-greet-skill.jsonl): the page shows the task, not the wrapper."""
    wd = make_workdir(tmp_path)
    shutil.copy(Path(__file__).parents[1] / "transcripts" / "cli332-greet-skill.jsonl", wd / "transcript.jsonl")
    prompts = [e for e in conversation.build(wd).entries if e.kind == "prompt"]
    assert prompts and prompts[0].text.startswith("# Live trial task")
    assert not any("pasted_content" in e.text for e in prompts)


@pytest.mark.parametrize("rehearsal,words", [
    ({"scenario": "s.yaml", "port": 1}, "run it live: the same command without --rehearsal"),
    ({"scenario": "t.jsonl", "port": 1, "tape": True}, "its model's answers came from a tape: record a live run "
                                                       "again (the same command with --record in place of --replay "
                                                       "TAPE), or run it live without --replay"),
    (None, "it ran live, yet a scripted model answered"),
])
def test_the_next_step_of_a_rehearsal_pass_fits_how_its_model_was_played(tmp_path, capsys, rehearsal, words):
    """`--rehearsal`, `--replay` (no --rehearsal to drop) and a live command a scripted server answered each get
    their own next step, in `show` and in plain words in both languages."""
    from live_trial.notices import outcome

    wd = make_workdir(tmp_path, state={"rehearsal": rehearsal})
    doc = verdict(scenario_origin="rehearsal")
    (wd / "verdict.json").write_text(json.dumps(doc))
    assert main(["show", str(wd)]) == 0
    shown = capsys.readouterr().out
    assert f"next step: {words}" in shown and "without --rehearsal" not in shown.replace(words, ""), shown
    step = outcome.next_step(doc, outcome.seen_in_workdir(wd))
    assert step.key == {"s.yaml": "live", "t.jsonl": "live_replay"}.get((rehearsal or {}).get("scenario", ""),
                                                                         "live_scripted")
    for lang in ("en", "ja"):
        assert outcome.next_step_sentence(step, lang) not in ("", outcome.next_step_sentence(outcome.Step("look"),
                                                                                              lang))
