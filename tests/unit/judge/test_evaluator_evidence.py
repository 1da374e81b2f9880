"""What the fresh evaluator may count as evidence (seed 000 rule 1; README "Evidence, watches and messages to a
person"), against hostile answers: the session's own words cited in several spellings, a missing file, a quote that
is not in the file, a wrong count, a score in a sentence, an author's file under a kept copy. Fake process runner."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from live_trial.jsonfile import schema_errors
from live_trial.judge import answer as ea
from live_trial.judge import evaluator as ev
from live_trial.judge.context import Produced
from live_trial.judge.prompt import build_prompt
from live_trial.judge.quotes import count_problems, stated_counts
from tests.unit.fakes import FakeRunner

U_TASK = "11111111-1111-4111-8111-111111111111"
U_SKILL = "22222222-2222-4222-8222-222222222222"
U_SKILL_OK = "33333333-3333-4333-8333-333333333333"
U_WRITE = "44444444-4444-4444-8444-444444444444"
U_WRITE_OK = "55555555-5555-4555-8555-555555555555"
U_MARK = "66666666-6666-4666-8666-666666666666"
U_MARK_OK = "77777777-7777-4777-8777-777777777777"
U_DONE = "88888888-8888-4888-8888-888888888888"
U_BASH = "99999999-9999-4999-8999-999999999999"
U_BASH_ERR = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
U_TALK_READ = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
U_READ_OK = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
U_META = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
REPORT = "name,n\na,1\nb,2\n"
DONE_TEXT = "DONE: ok, report.csv written with 9 rows"
TALK = "report.csv looks complete, every row is there"
PRODUCED = Produced(files=("side-effects/files/report.csv", "side-effects/files/data.json"), changed=2,
                       folder="cwd")


def _assistant(uuid, *blocks):
    return {"type": "assistant", "uuid": uuid, "message": {"role": "assistant", "content": list(blocks)}}


def _result(uuid, tool_id, text, is_error=False):
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error}]}}


def _use(tool_id, name, inp):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inp}


@pytest.fixture
def wd(tmp_path):
    """A collected trial in a kept copy of the author's folder: cwd/ holds the author's notes.md (there at start) and
    the session's report.csv and data.json (copied to side-effects/files/); pane.txt and the transcript hold the
    session's own words."""
    wd = tmp_path / "eval" / "p" / "s" / "live-trial" / "20261130T120000-abcd"
    files = {"out/status.json": '{"status": "ok", "summary": "report.csv written with 9 rows"}\n',
             "cwd/notes.md": "# Author's notes\n- 9 rows planned\n", "cwd/report.csv": REPORT,
             "cwd/data.json": '{"a": 1, "b": 2, "c": 3}\n', "side-effects/files/report.csv": REPORT,
             "side-effects/files/data.json": '{"a": 1, "b": 2, "c": 3}\n', "pane.txt": f"> {DONE_TEXT}\n",
             "task.md": "# Live trial task\n", "trial-state.json": "{}\n", "subagents/agent-1.jsonl": "{}\n",
             "side-effects/files.json": '{"added": ["report.csv", "data.json"], "changed": [], "removed": [], '
                                        '"copied": ["report.csv", "data.json"]}\n'}
    for rel, text in files.items():
        (wd / rel).parent.mkdir(parents=True, exist_ok=True)
        (wd / rel).write_text(text)
    other = tmp_path / "eval" / "p" / "s" / "live-trial" / "20261130T120001-ffff" / "side-effects" / "files"
    other.mkdir(parents=True)
    (other / "report.csv").write_text(REPORT)         # another trial's file
    records = [
        {"type": "user", "uuid": U_TASK, "message": {"role": "user", "content": "Skill p:s please"}},
        _assistant(U_SKILL, _use("t0", "Skill", {"skill": "p:s"})),
        _result(U_SKILL_OK, "t0", "Launching skill: p:s"),
        {"type": "user", "uuid": U_META, "isMeta": True, "message": {"role": "user", "content": [
            {"type": "text", "text": "Write report.csv with 2 rows"}]}},
        _assistant(U_WRITE, _use("t1", "Write", {"file_path": str(wd / "cwd" / "report.csv"), "content": REPORT})),
        _result(U_WRITE_OK, "t1", "File created successfully"),
        _assistant(U_BASH, _use("t2", "Bash", {"command": "mail customer < report.csv"})),
        _result(U_BASH_ERR, "t2", "mail: command not found", is_error=True),
        _assistant(U_TALK_READ, {"type": "text", "text": TALK},
                   _use("t3", "Read", {"file_path": str(wd / "cwd" / "report.csv")})),
        _result(U_READ_OK, "t3", REPORT),
        _assistant(U_MARK, _use("t4", "Write", {"file_path": str(wd / "out" / "status.json"), "content": "{}"})),
        _result(U_MARK_OK, "t4", "File created successfully"),
        _assistant(U_DONE, {"type": "text", "text": DONE_TEXT}),
    ]
    (wd / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return wd


TARGET = SimpleNamespace(qualified="p:s", frontmatter={"description": "Writes report.csv with two rows"}, skill_md=None)
GOOD = {"claim": "the report holds the two rows", "source": "side-effects/files/report.csv", "quote": "a,1",
        "observed": "1 file with 2 rows"}


def ctx_of(wd, produced=PRODUCED):
    return ev.build_context(wd, TARGET, produced)


def answer(*items, **fields):
    return {"verdict": "PASS", "blockers": [], "checks": [], "unverified": [], "evidence": list(items), **fields}


def problems(wd, *items, **fields):
    return ea.answer_problems(answer(*items, **fields), ctx_of(wd))


def evaluate(wd, *answers, produced=PRODUCED):
    cli = FakeRunner(*answers)
    return ev.evaluate(wd, TARGET, "/bin/claude-fake", {}, runner=cli, produced=produced), cli


def test_a_file_the_session_made_and_a_successful_tool_call_are_evidence(wd):
    record = {"claim": "the skill wrote it", "source": U_WRITE, "quote": "b,2", "observed": "1 Write call with 3 lines"}
    result = {"claim": "its result", "source": f"transcript.jsonl#{U_WRITE_OK}", "quote": "File created successfully",
              "observed": "1 file created with 3 lines"}
    assert problems(wd, GOOD, record, result) == []
    doc, _ = evaluate(wd, answer(GOOD, record))
    assert doc["goal_result"] == "PASS" and [e["quote"] for e in doc["evidence"]] == ["a,1", "b,2"]
    assert schema_errors(json.loads((wd / "evaluation.json").read_text()), "evaluation.schema.json") == []


@pytest.mark.parametrize("source,needle", [
    (U_DONE, "own words"), (U_DONE.upper(), "own words"), (f"transcript.jsonl#{U_DONE}", "own words"),
    (f"record {U_DONE}", "own words"), ("transcript.jsonl", "own words"), ("transcript.jsonl:13", "own words"),
    ("transcript.jsonl#L13", "own words"), ("./transcript.jsonl", "own words"), ("{wd}/transcript.jsonl", "own words"),
    ("pane.txt", "own words"), ("pane.txt:1", "own words"), ("subagents/agent-1.jsonl", "own words"),
    ("out/status.json", "completion marker"), ("./out//status.json#L1", "completion marker"),
    (U_MARK, "harness writes itself"), (U_MARK_OK, "harness writes itself"), (U_TASK, "a prompt"),
    (U_META, "a prompt"), ("task.md", "harness writes itself"),
])
def test_the_sessions_own_words_and_the_harness_are_never_evidence_in_any_spelling(wd, source, needle):
    item = {"claim": "the report was written", "source": source.format(wd=wd), "quote": DONE_TEXT,
            "observed": "1 file with 2 rows"}
    found = problems(wd, GOOD, item)
    assert len(found) == 1 and needle in found[0] and "evidence item 1" in found[0], found


def test_own_words_quoted_from_a_record_that_also_calls_a_tool_are_not_evidence(wd):
    """The record holds the assistant's text and a Read call: only the call and its result can be quoted."""
    talk = {"claim": "c", "source": U_TALK_READ, "quote": "every row is there", "observed": "1 Read call"}
    assert "not in the cited source" in problems(wd, talk)[0]
    assert problems(wd, {**talk, "quote": "a,1"}) == []


def test_own_words_cited_twice_end_in_insufficient_evidence_not_a_pass(wd):
    own = {"claim": "the report was written", "source": U_DONE, "quote": "DONE: ok", "observed": "1 report with 9 rows"}
    doc, cli = evaluate(wd, answer(own), answer(own))
    assert doc["goal_result"] == "FAIL" and doc["judged_by"] == "insufficient_evidence"
    assert doc["blockers"][0].startswith("insufficient evidence: evidence item 0") and "own words" in doc["blockers"][0]
    assert "previous answer was refused" in cli.prompts[1] and doc["evidence"] == []
    assert schema_errors(json.loads((wd / "evaluation.json").read_text()), "evaluation.schema.json") == []


@pytest.mark.parametrize("item,needle", [
    ({**GOOD, "source": "side-effects/files/missing.csv"}, "does not exist"),
    ({**GOOD, "source": "cwd/missing.csv"}, "does not exist"),
    ({**GOOD, "quote": "c,3"}, "not in the cited source"),
    ({**GOOD, "quote": "a,1 ... b,2"}, "not in the cited source"),
    ({**GOOD, "quote": ""}, "has no quote"),
    ({**GOOD, "quote": "x" * 301}, "longer than 300"),
    ({k: v for k, v in GOOD.items() if k != "quote"}, "has no quote"),
    ({**GOOD, "source": U_BASH}, "without a successful result"),
    ({**GOOD, "source": U_BASH_ERR}, "without a successful result"),
    ({**GOOD, "source": "cwd/notes.md", "quote": "9 rows planned"}, "was there when the trial started"),
    ({**GOOD, "source": "{wd}/cwd/notes.md:2", "quote": "9 rows planned"}, "was there when the trial started"),
    ({**GOOD, "source": "../20261130T120001-ffff/side-effects/files/report.csv"}, "outside the working directory"),
    ({**GOOD, "source": "side-effects/files.json", "quote": "report.csv"}, "record of the side effects"),
    ({**GOOD, "source": "00000000-0000-4000-8000-000000000000"}, "does not exist"),
])
def test_items_that_do_not_hold_are_refused(wd, item, needle):
    item = {k: (v.format(wd=wd) if isinstance(v, str) else v) for k, v in item.items()}
    found = problems(wd, item)
    assert found and needle in found[0], found


def test_a_session_file_may_be_cited_through_the_trials_folder(wd):
    assert problems(wd, {**GOOD, "source": "cwd/report.csv"}) == []
    assert problems(wd, {**GOOD, "source": f"{wd}/cwd/report.csv:2"}) == []


@pytest.mark.parametrize("observed,needle", [
    ("1 file with 5 rows", "says '5 rows'"), ("1 file with 7 lines", "says '7 lines'"),
    ("the file has 3 keys", "not a JSON object"), ("2 files written, 4 rows", "says '4 rows'"),
    ("4 files written", "says '4 files'"), ("9/10 rows dated", "says '9/10 rows'"), ("5 of 2 rows", "says '5 of 2 rows'"),
    ("1 file with three lines and 9 rows", "says '9 rows'"), ("report of 4行", "says '4行'"),
])
def test_a_count_that_does_not_hold_is_refused(wd, observed, needle):
    found = problems(wd, {**GOOD, "observed": observed})
    assert found and needle in found[0], found


@pytest.mark.parametrize("observed", ["1 file with 2 rows", "1 file with 3 lines", "2 data rows", "1 of 2 rows dated",
                                      "2/2 rows dated", "2 files written, this one with 2 rows", "3行のファイル1件",
                                      '1 file, 3 lines, the last "9 rows"'])
def test_counts_that_hold_are_accepted(wd, observed):
    assert problems(wd, {**GOOD, "observed": observed}) == []


def test_keys_are_counted_in_a_json_object():
    assert count_problems("1 file written with 3 keys", '{"a": 1, "b": 2, "c": 3}', 1, one_file=True) == []
    assert count_problems("3 top-level keys", '{"a": {"x": 1}, "b": 2}', 1) == [
        "says '3 top-level keys' but the source's JSON object has 2 key(s) (say a part as 'N of M keys')"]
    assert stated_counts('1 line "3 lines of text"') == [("1 line", 1, None, "lines")]


@pytest.mark.parametrize("body", ["[" * 100_000 + "]" * 100_000, '{"a": ' + "9" * 5000 + "}"])
def test_a_file_too_deep_or_with_a_huge_integer_is_not_json_to_count_keys_in(body):
    """A file the session wrote is outside input: nested 10^5 deep it stopped evaluate with a RecursionError."""
    assert count_problems("3 keys", body, 1) == [
        "says '3 keys' but the source is not a JSON object, so its keys cannot be counted"]


@pytest.mark.parametrize("field,value", [
    ("observed", "1 file with 2 rows, score: 9/10"), ("claim", "the report is rated 4/5"),
    ("observed", "1 file with 2 rows; confidence 0.9"), ("observed", "2行、評価: A"),
])
def test_a_score_in_a_sentence_of_an_item_is_refused(wd, field, value):
    found = problems(wd, {**GOOD, field: value})
    assert any("a score is not allowed" in p for p in found), found


def test_a_quote_is_the_sources_words_a_score_in_it_is_the_sources_and_an_invented_one_is_no_quote(wd):
    """A quote is checked verbatim against its source: a line of the session's file that reads like a score is what
    was seen, not the evaluator's judgement; a quote not in its source is refused as such."""
    source = wd / "side-effects" / "files" / "progress.txt"
    source.write_text("progress: 85% done\n", encoding="utf-8")
    item = {**GOOD, "source": "side-effects/files/progress.txt", "quote": "progress: 85% done",
            "observed": "1 line in the file"}
    assert not [p for p in problems(wd, item) if "score" in p]
    found = problems(wd, {**GOOD, "quote": "score: 9/10"})
    assert found and not [p for p in found if "a score is not allowed" in p], found


@pytest.mark.parametrize("fields", [{"blockers": ["quality score 3/10"]}, {"unverified": ["confidence: 80"]},
                                    {"checks": [{"id": "X", "result": "pass", "evidence": "rated 8 points"}]}])
def test_a_score_in_any_other_text_field_is_refused_and_is_no_valid_judgement(wd, fields):
    assert any("a score is not allowed" in p for p in problems(wd, GOOD, **fields))
    doc, _ = evaluate(wd, answer(GOOD, **fields), answer(GOOD, **fields))
    assert doc["blockers"] == [ea.NO_VALID_JUDGEMENT] and doc["judged_by"] == "fallback"


def test_a_plain_counted_ratio_is_evidence_not_a_score(wd):
    assert problems(wd, {**GOOD, "observed": "2/2 rows dated, 1 of 2 files"}) == []


def test_a_fail_keeps_its_blockers_and_drops_items_that_do_not_hold(wd):
    ans = {"verdict": "FAIL", "blockers": ["0 mails reached the customer"], "checks": [], "unverified": [],
           "evidence": [{"claim": "only the marker", "source": "out/status.json", "quote": "ok", "observed": "1 file"},
                        GOOD]}
    doc, _ = evaluate(wd, ans)
    assert doc["goal_result"] == "FAIL" and doc["blockers"] == ["0 mails reached the customer"]
    assert doc["evidence"] == [GOOD] and "completion marker" in doc["attempts"][0]["dropped"][0]


def test_unverified_makes_a_pass_mostly_done_and_relaxes_only_the_proxy_rule(wd):
    proxy = {**GOOD, "observed": "the report was written"}
    assert any("only names proxies" in p for p in problems(wd, proxy))
    assert problems(wd, proxy, unverified=["the mail arrives at the customer"]) == []
    assert problems(wd, {**proxy, "quote": "c,3"}, unverified=["the mail arrives"])  # the item must still hold
    doc, _ = evaluate(wd, answer(GOOD, unverified=["the mail arrives at the customer"]))
    assert doc["goal_result"] == "PASS" and doc["unverified"] == ["the mail arrives at the customer"]


def test_a_pass_needs_an_item(wd):
    assert problems(wd) == ["a PASS needs at least one evidence item"]


def test_the_git_diff_is_evidence_of_its_changed_lines_only(wd):
    patch = ("diff --git a/notes.md b/notes.md\n--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,3 @@\n # Author's notes\n"
             "-- 9 rows planned\n+- 2 rows written\n+- checked twice\n")
    (wd / "side-effects" / "git-diff.patch").write_text(patch)
    produced = Produced(files=PRODUCED.files, changed=3, folder="cwd", diff="side-effects/git-diff.patch")
    item = {"claim": "the notes say so", "source": "side-effects/git-diff.patch", "quote": "2 rows written",
            "observed": "3 files changed"}
    assert ea.answer_problems(answer(item), ctx_of(wd, produced)) == []
    context_line = ea.answer_problems(answer({**item, "quote": "Author's notes"}), ctx_of(wd, produced))
    assert "not in the cited source" in context_line[0]
    lines = ea.answer_problems(answer({**item, "observed": "2 lines added"}), ctx_of(wd, produced))
    assert "git diff is not counted in lines" in lines[0]
    assert "record of the side effects" in problems(wd, item)[0]    # no diff recorded against the start: not citable


def test_the_prompt_shows_what_the_session_produced_and_nothing_of_the_harness(wd):
    prompt = build_prompt(ctx_of(wd))
    assert "- side-effects/files/report.csv | 15 bytes | sha256:" in prompt and "    | a,1" in prompt
    assert "- side-effects/files/data.json | 25 bytes" in prompt
    assert "Completion marker: out/status.json (present; in it the session reported its own status as \"ok\")" in (
        prompt) and "never evidence, nor are its status and its summary" in prompt
    assert f"- {U_DONE} | assistant | - | {DONE_TEXT} | (the session's own words: never evidence)" in prompt
    assert f"- {U_BASH} | assistant | Bash |" in prompt and "no successful result: never evidence" in prompt
    assert "Author's notes" not in prompt and "Skill p:s please" not in prompt and "9 rows planned" not in prompt
    assert f"- {U_TASK} | user | - |  | (a prompt (the task, a nudge or the skill's instructions)" in prompt
    assert "report.csv written with 9 rows\"" not in prompt      # the marker's summary is not shown


def test_the_prompt_shows_a_status_the_session_reported_as_its_own_word_never_as_evidence(wd):
    """A session that wrote ``{"status": "failed"}`` and "DONE: failed": the evaluator is told it said so, and that
    its word decides nothing either way (README "Evidence, watches and messages to a person")."""
    (wd / "out" / "status.json").write_text('{"status": "failed", "summary": "could not write the report"}\n')
    prompt = build_prompt(ctx_of(wd))
    assert 'Completion marker: out/status.json (present; in it the session reported its own status as "failed")' in (
        prompt)
    assert "one that says it failed may have reached it. Judge by the evidence alone." in prompt
    assert "could not write the report" not in prompt                  # its summary is still not shown
    (wd / "out" / "status.json").write_text("[1, 2]")                     # no status in it: none is shown
    assert "reported its own status" not in build_prompt(ctx_of(wd))


def test_a_trial_that_produced_nothing_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    ctx = ev.build_context(empty, TARGET, None)
    prompt = build_prompt(ctx)
    assert "- none: the session created or changed no file" in prompt and "none was collected" in prompt
    assert "Completion marker: out/status.json (missing)" in prompt


WRITE_ITEM = {"claim": "the skill wrote it", "source": U_WRITE, "quote": "b,2", "observed": "1 Write call with 3 lines"}


def _gone(wd):
    """report.csv removed before the end: neither in cwd/ nor among the copies."""
    (wd / "cwd" / "report.csv").unlink()
    (wd / "side-effects" / "files" / "report.csv").unlink()
    return Produced(files=("side-effects/files/data.json",), changed=1, folder="cwd", root=str(wd / "cwd"))


def test_a_write_call_whose_file_was_removed_is_no_evidence_and_ends_in_a_judged_fail(wd):
    produced = _gone(wd)
    result = {**WRITE_ITEM, "source": f"transcript.jsonl#{U_WRITE_OK}", "quote": "File created successfully"}
    for item in (WRITE_ITEM, result):
        [problem] = ea.answer_problems(answer(item), ctx_of(wd, produced))
        assert "is the Write call that wrote cwd/report.csv, a file no longer there at the end" in problem
    doc, cli = evaluate(wd, answer(WRITE_ITEM), answer(WRITE_ITEM), produced=produced)
    assert (doc["goal_result"], doc["judged_by"], len(cli.calls)) == ("FAIL", "insufficient_evidence", 2)
    assert doc["blockers"][0].startswith("insufficient evidence: evidence item 0")
    assert "Your previous answer was refused" in cli.calls[1]["prompt"] and "no longer there" in cli.calls[1]["prompt"]


def test_a_write_call_whose_file_was_changed_afterwards_is_no_evidence(wd):
    (wd / "side-effects" / "files" / "report.csv").write_text("name,n\na,1\n")
    [problem] = problems(wd, WRITE_ITEM)
    assert "a file changed afterwards: its copy at the end no longer holds what the call wrote" in problem
    assert problems(wd, GOOD | {"observed": "1 file with 1 row"}) == []       # the file as it is still counts


def test_an_edit_call_holds_while_its_new_text_is_still_in_the_file(wd):
    path = str(wd / "cwd" / "report.csv")
    extra = [_assistant(U_BASH, _use("t9", "Edit", {"file_path": path, "old_string": "b,2", "new_string": "b,2"})),
             _result(U_BASH_ERR, "t9", "The file has been updated.")]
    with open(wd / "transcript.jsonl", "a") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in extra))
    item = {"claim": "the skill edited it", "source": U_BASH, "quote": "b,2", "observed": "1 row edited"}
    assert problems(wd, item) == []
    (wd / "side-effects" / "files" / "report.csv").write_text("name,n\na,1\n")
    [problem] = problems(wd, item)
    assert "is the Edit call that wrote cwd/report.csv, a file changed afterwards" in problem


def test_a_write_call_is_found_among_the_copies_of_a_folder_outside_the_workdir(wd, tmp_path):
    own = tmp_path / "project"           # an in-place folder: the copies are by its paths, not under the workdir
    records = [_assistant(U_WRITE, _use("t1", "Write", {"file_path": str(own / "report.csv"), "content": REPORT})),
               _result(U_WRITE_OK, "t1", "File created successfully")]
    (wd / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    produced = Produced(files=("side-effects/files/report.csv",), changed=1, root=str(own))
    assert ea.answer_problems(answer(WRITE_ITEM), ctx_of(wd, produced)) == []
    [problem] = ea.answer_problems(answer(WRITE_ITEM), ctx_of(wd, Produced(changed=0, root=str(own))))
    assert "no longer there at the end" in problem


def test_a_refused_citation_of_a_gone_or_changed_file_says_it_cannot_stand_and_never_asks_for_it_again(wd):
    """README "Evidence": the refusal of a Write call whose file is gone, and of a copy under side-effects/files/
    that is no file the session still has at the end, says the citation cannot stand; it never asks the evaluator to
    cite the path it cited."""
    produced = _gone(wd)
    [problem] = ea.answer_problems(answer(WRITE_ITEM), ctx_of(wd, produced))
    assert "cannot stand" in problem and "do not cite this call again" in problem
    (wd / "side-effects" / "files" / "report.csv").write_text(REPORT)      # a copy collect did not list
    [problem] = ea.answer_problems(answer(GOOD), ctx_of(wd, produced))
    assert "gone or was changed" in problem and "do not cite it again" in problem, problem
    assert "cite the file's copy under side-effects/files/" not in problem, problem
