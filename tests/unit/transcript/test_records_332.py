"""What the CLI 2.1.332 writes that 2.1.197 did not, read from transcripts both versions wrote for the same scenario
(tests/unit/transcripts/cli197-*.jsonl, cli332-*.jsonl; rehearsal server; long strings of the records the harness
does not read were cut when they were recorded). Facts: references/transcript-jsonl.md "Records on 2.1.332".

- A multi-line paste is stored wrapped in ``<pasted_content id="…">``: the prompt's text is the pasted text.
- New record types (copies of the API requests, bookkeeping) are known and never reach a reader's caller, so a
  tool_use that ``api-request-blob`` repeats is counted once.
- Stop-hook feedback is an ``isMeta`` user record on both (2.1.332 adds ``hookText``): never a prompt.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.acceptance.transcript_cache import TranscriptCache
from live_trial.judge.index import index_records
from live_trial.transcript.reader import iter_records, read_records
from live_trial.transcript.records import (
    IGNORED_TYPES,
    KNOWN_TYPES,
    human_prompts,
    is_human_prompt,
    is_task_notification,
    is_wrapped_paste,
    message_content,
    prompt_text,
    unwrap_paste,
)
from live_trial.transcript.status import BUSY_GENERATING, IDLE_TURN_COMPLETE, classify
from live_trial.transcript.skill_calls import skill_call_records, skill_calls

REAL = Path(__file__).parents[1] / "transcripts"
GREET = {"2.1.197": REAL / "cli197-greet-skill.jsonl", "2.1.332": REAL / "cli332-greet-skill.jsonl"}
HOOK = {"2.1.197": REAL / "cli197-stop-hook.jsonl", "2.1.332": REAL / "cli332-stop-hook.jsonl"}
BG_332 = REAL / "cli332-bg-shell-skill.jsonl"
ALL = [*GREET.values(), *HOOK.values(), BG_332]

#: The prompt record's content as 2.1.332 wrote it (cli332-stop-hook.jsonl).
WRAPPED = ('\n\n<pasted_content id="7523">\nRun the task.\nSkill({skill: "trialkit:mark"})\n'
           'Completion marker: /tmp/obsrec/hook-332/cwd/out/status.json\n</pasted_content id="7523">\n')
PASTED = 'Run the task.\nSkill({skill: "trialkit:mark"})\nCompletion marker: /tmp/obsrec/hook-332/cwd/out/status.json\n'


def raw_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- pasted content

def test_a_wrapped_paste_is_the_pasted_text():
    assert unwrap_paste(WRAPPED) == PASTED
    rec = {"type": "user", "message": {"role": "user", "content": WRAPPED}}
    assert prompt_text(rec) == PASTED and is_wrapped_paste(rec) and is_human_prompt(rec)
    listed = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": WRAPPED}]}}
    assert prompt_text(listed) == PASTED


@pytest.mark.parametrize("text", [
    WRAPPED.replace('</pasted_content id="7523">', '</pasted_content id="7524">'),   # the ids differ
    "typed first" + WRAPPED,                                                          # words before it
    WRAPPED + "typed after",                                                          # words after it
    WRAPPED[2:],                                                                      # not the CLI's two newlines
    WRAPPED.rstrip("\n"),                                                             # no newline after the tag
    WRAPPED + WRAPPED.replace("7523", "9f00"),                                        # two pastes
    'Run the task.\n<pasted_content id="1">\nx\n</pasted_content id="1">\n',          # inside a prompt
])
def test_only_the_cli_wrapper_around_the_whole_prompt_comes_off(text):
    assert unwrap_paste(text) == text
    assert not is_wrapped_paste({"type": "user", "message": {"content": text}})


def test_an_assistant_text_is_never_unwrapped():
    rec = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": WRAPPED}]}}
    assert prompt_text(rec) == WRAPPED


@pytest.mark.parametrize("version", sorted(GREET))
def test_the_task_prompt_reads_as_the_task_text_on_both_versions(version):
    records = read_records(GREET[version]).records
    prompts = human_prompts(records)
    assert len(prompts) == 1
    assert prompt_text(prompts[0]).startswith("# Live trial task\n") and "pasted_content" not in prompt_text(prompts[0])
    raw = message_content(prompts[0])
    assert raw.startswith('\n\n<pasted_content id="') == (version == "2.1.332") == is_wrapped_paste(prompts[0])


# ---------------------------------------------------------------- record types

@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_record_type_the_cli_wrote_is_known_and_the_copies_are_left_out(path):
    written = {r["type"] for r in raw_lines(path)}
    assert written <= KNOWN_TYPES, written - KNOWN_TYPES
    res = read_records(path)
    assert res.skipped_unknown == 0 and res.skipped_malformed == 0
    assert not {r["type"] for r in res.records} & IGNORED_TYPES


def test_the_recordings_hold_every_type_2_1_332_adds():
    """``cost-state`` comes when the CLI exits: a trial's collected copy (cli332-greet) is taken before that."""
    written = {r["type"] for path in ALL if "cli332" in path.name for r in raw_lines(path)}
    assert IGNORED_TYPES <= written
    assert not IGNORED_TYPES & {r["type"] for path in ALL if "cli197" in path.name for r in raw_lines(path)}


def test_the_api_request_blob_repeats_the_skill_call():
    """The fact the next test stands on: 2.1.332 writes the Skill tool_use twice, once in a copy of the request."""
    copies = [r for r in raw_lines(GREET["2.1.332"]) if r["type"] == "api-request-blob"
              and any(b.get("type") == "tool_use" and b.get("name") == "Skill" for b in r["message"]["content"])]
    assert len(copies) == 1 and "uuid" not in copies[0]
    assert message_content(copies[0]) is None


@pytest.mark.parametrize("version", sorted(GREET))
def test_one_skill_call_is_counted_once_everywhere(version, tmp_path):
    path = GREET[version]
    records = read_records(path).records
    assert skill_calls(records) == [("hello:greet", True)]
    assert skill_calls(skill_call_records(path)) == [("hello:greet", True)]
    assert skill_calls(raw_lines(path)) == [("hello:greet", True)]       # also when handed every line of the file
    rows = index_records(iter_records(path))
    assert [r["tools"] for r in rows if "Skill" in r["tools"]] == [["Skill"]]
    assert sum(r["cite"] == "call" for r in rows) == 3                  # Skill, Write greeting, Write marker
    st = classify(records)
    assert st.state == IDLE_TURN_COMPLETE and "turn_duration" in st.reason and st.last_assistant_text == "DONE: ok"
    facts = TranscriptCache(tmp_path).facts(path)
    assert facts.human_prompts == 1 and facts.scripted


# ---------------------------------------------------------------- stop hooks and task notifications

@pytest.mark.parametrize("version", sorted(HOOK))
def test_stop_hook_feedback_is_never_a_prompt_and_the_turn_is_busy_while_hooks_run(version):
    records = read_records(HOOK[version]).records
    feedback = [r for r in records if r.get("type") == "user" and prompt_text(r).startswith("Stop hook feedback:\n")]
    assert len(feedback) == 1 and feedback[0]["isMeta"] is True
    assert (feedback[0].get("hookText") is True) == (version == "2.1.332")
    assert len(human_prompts(records)) == 1 and not is_human_prompt(feedback[0])
    first_end = next(i for i, r in enumerate(records) if r.get("type") == "assistant"
                     and prompt_text(r) == "first part done")
    for upto in (first_end + 1, records.index(feedback[0]) + 1):     # the hook runs, then its feedback is written
        st = classify(records[:upto], {"status": "busy"})
        assert st.state == BUSY_GENERATING, (upto, st)
    st = classify(records, {"status": "idle"})
    assert st.state == IDLE_TURN_COMPLETE and st.last_assistant_text == "DONE: ok", st


def test_a_task_notification_on_2_1_332_wakes_the_model_and_is_no_prompt():
    records = read_records(BG_332).records
    woken = [r for r in records if is_task_notification(r)]
    assert len(woken) == 1 and prompt_text(woken[0]).startswith("<task-notification>")
    assert len(human_prompts(records)) == 1
    assert skill_calls(records) == [("trialkit:mark", True)]
    st = classify(records, {"status": "idle"})
    assert st.state == IDLE_TURN_COMPLETE and st.background is None and st.last_assistant_text == "DONE: ok", st


def test_records_of_unknown_types_are_named_with_their_counts_and_known_ones_are_not_parsed(tmp_path):
    """``unknown_record_types``: what a verdict names when a CLI writes a record type the harness was never shown."""
    from live_trial.transcript import stream
    from live_trial.transcript.reader import unknown_record_types

    lines = [{"type": "user", "message": {"role": "user", "content": "hi"}},
             {"type": "assistant", "message": {"type": "message", "content": [{"type": "tool_use", "name": "Skill"}]}},
             {"type": "future-record", "n": 1}, {"type": "future-record", "n": 2}, {"type": "other-new"},
             *[{"type": f"new-{i}"} for i in range(stream.UNKNOWN_NAMES_MAX)]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    found = unknown_record_types(path, tmp_path / "missing.jsonl")
    assert found["future-record"] == 2 and found["other-new"] == 1
    assert len(found) == stream.UNKNOWN_NAMES_MAX + 1 and sum(found.values()) == 3 + stream.UNKNOWN_NAMES_MAX
    assert stream.names_unknown_type(b'{"type":"user","message":{"content":[{"type":"text"}]}}') is False
    assert stream.names_unknown_type(b'{"type":"api-request-blob"}') is False          # known, left out
    assert stream.names_unknown_type(b'{"a":1}\n{"type":"future-record"}') is True   # holds for any text holding it
    real = sorted(REAL.glob("cli*.jsonl"))
    assert real and unknown_record_types(*real) == {}          # every type 2.1.197 and 2.1.332 wrote is known
