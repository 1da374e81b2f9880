"""live_trial.transcript: locating, tolerant reading, tail and incremental reads, the shared text helpers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.transcript.paths import (
    config_dir,
    find_cli_session,
    java_string_hash,
    locate,
    project_slug,
    read_cli_session_status,
)
from live_trial.transcript.reader import (
    TAIL_BLOCK_BYTES,
    complete_end_offset,
    copy_transcript,
    read_from,
    read_records,
    read_tail,
)
from live_trial.transcript.records import human_prompts, main_chain_assistant_models, normalise_text, prompt_text

# ------------------------------------------------------------------ paths

def test_config_dir_honours_env(tmp_path):
    assert config_dir({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert config_dir({"HOME": "/home/x"}) == Path("/home/x/.claude")


def test_slug_replaces_every_non_alnum_and_keeps_case():
    # claude-cli-observed.md "Paths": observed on the real CLI
    assert project_slug("/tmp/obs/slug test/My_Proj.v2+x@y~z") == "-tmp-obs-slug-test-My-Proj-v2-x-y-z"


def test_slug_non_bmp_character_counts_as_two_utf16_units():
    assert project_slug("/a/\U0001F600b") == "-a---b"
    assert project_slug("/a/é") == "-a--"


def test_java_string_hash_matches_java():
    # values of Java's "".hashCode(): "hello" -> 99162322, "polygenelubricants" -> Integer.MIN_VALUE
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -2147483648
    assert java_string_hash("") == 0


def test_long_slug_is_cut_at_200_plus_base36_hash():
    cwd = "/tmp/" + "very-long/" * 30
    slug = project_slug(cwd)
    head, _, suffix = slug.rpartition("-")
    assert len(head) == 200 and head == project_slug(cwd[:200])[:200]
    assert int(suffix, 36) == abs(java_string_hash(cwd))


def test_locate_expected_path_then_glob_fallback(tmp_path):
    sid = "0b5a7c9e-1111-4222-8333-444455556666"
    cwd = tmp_path / "proj"
    cwd.mkdir()
    expected = tmp_path / "cfg" / "projects" / project_slug(cwd) / f"{sid}.jsonl"
    assert locate(sid, cwd, tmp_path / "cfg") == expected and not expected.exists()
    other = tmp_path / "cfg" / "projects" / "some-other-slug" / f"{sid}.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text("")
    assert locate(sid, cwd, tmp_path / "cfg") == other          # glob fallback (e.g. a long or odd slug)
    expected.parent.mkdir(parents=True)
    expected.write_text("")
    assert locate(sid, cwd, tmp_path / "cfg") == expected       # the exact slug wins


def test_locate_never_picks_a_subagent_file(tmp_path):
    sid = "0b5a7c9e-1111-4222-8333-444455556666"
    sub = tmp_path / "projects" / "slug" / sid / "subagents" / f"{sid}.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text("{}\n")
    assert locate(sid, None, tmp_path) != sub


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "*", "x y", "-rf"])
def test_locate_refuses_unsafe_session_id(tmp_path, bad):
    with pytest.raises(RefusedInput):
        locate(bad, tmp_path, tmp_path)


def test_cli_session_status_files(tmp_path):
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "123.json").write_text(json.dumps({"pid": 123, "sessionId": "s-1", "status": "waiting"}))
    (tmp_path / "sessions" / "124.json").write_text("{not json")
    assert read_cli_session_status(tmp_path, 123)["status"] == "waiting"
    assert read_cli_session_status(tmp_path, 124) is None
    assert read_cli_session_status(tmp_path, 999) is None
    assert read_cli_session_status(tmp_path, None) is None
    assert find_cli_session(tmp_path, "s-1") == (123, {"pid": 123, "sessionId": "s-1", "status": "waiting"})
    assert find_cli_session(tmp_path, "nope") is None
    (tmp_path / "sessions" / "125.json").write_text("[" * 100_000 + "]" * 100_000)     # damaged: too deep
    (tmp_path / "sessions" / "126.json").write_text('{"pid": ' + "9" * 5000 + "}")       # an integer too long
    assert read_cli_session_status(tmp_path, 125) is None and read_cli_session_status(tmp_path, 126) is None
    assert find_cli_session(tmp_path, "nope") is None


# ------------------------------------------------------------------ tolerant reading

def test_torn_last_line_is_held_back(tmp_path, transcript_builder):
    b = transcript_builder()
    b.turn()
    path = b.write(tmp_path / "t.jsonl", tail=b'{"type":"user","message":{"content":"half')
    res = read_records(path)
    assert res.torn_tail and res.skipped_malformed == 0 and len(res.records) == len(b.records)
    tail = read_tail(path)
    assert tail.torn_tail and len(tail.records) == len(b.records)
    recs, off = read_from(path, 0)
    assert len(recs) == len(b.records) and off == len(b.text_jsonl().encode())


def test_nul_run_and_malformed_lines_are_skipped_and_counted(tmp_path, transcript_builder):
    b = transcript_builder()
    b.turn()
    lines = b.lines()
    data = "\n".join(lines[:3]).encode() + b"\n" + b"\x00" * 4096 + b"\n" + b"{broken json\n" + b"[1,2]\n" \
        + b"\x00\x00" + "\n".join(lines[3:]).encode() + b"\n"
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    res = read_records(path)
    assert len(res.records) == len(lines)
    assert res.skipped_malformed == 3 and res.first_error and "NUL" in res.first_error


def test_unknown_types_and_missing_fields(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"brand-new-kind","x":1}\n{"no_type":true}\n{"type":"user"}\n'
                    '{"type":"assistant","message":null}\n')
    res = read_records(path)
    assert res.skipped_unknown == 2 and len(res.records) == 2 and res.skipped_malformed == 0


def test_invalid_utf8_and_deep_nesting_do_not_raise(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\xff\xfe\xfa\n' + b"[" * 100000 + b"\n" + b'{"type":"mode"}\n')
    res = read_records(path)
    assert len(res.records) == 1 and res.skipped_malformed == 2
    assert read_tail(path).records == res.records


def test_missing_file_reads_as_empty(tmp_path):
    missing = tmp_path / "none.jsonl"
    assert read_records(missing).records == []
    assert read_tail(missing).records == []
    assert read_from(missing, 7) == ([], 7)
    assert complete_end_offset(missing) == 0


# ------------------------------------------------------------------ tail and incremental reads

def test_read_tail_equals_full_read_when_small(tmp_path, transcript_builder):
    b = transcript_builder()
    for _ in range(3):
        b.turn(tools=2)
    path = b.write(tmp_path / "t.jsonl")
    assert read_tail(path).records == read_records(path).records


def test_read_tail_stops_early_on_a_big_file_but_keeps_the_last_turn(tmp_path, transcript_builder):
    b = transcript_builder()
    for i in range(3000):
        b.turn(f"prompt {i}", "x" * 200, tools=1)
    b.prompt("the last prompt")
    b.tool_use("Bash", {"command": "sleep 20"})
    path = b.write(tmp_path / "t.jsonl")
    tail = read_tail(path)
    assert not tail.reached_start and tail.start_offset > 0
    assert len(tail.records) < 200
    assert prompt_text(human_prompts(tail.records)[-1]) == "the last prompt"


def test_read_tail_line_longer_than_a_block(tmp_path, transcript_builder):
    b = transcript_builder()
    b.prompt("p")
    tid = b.tool_use("Read", {"file_path": "/x"})
    b.tool_result(tid, "y" * (3 * TAIL_BLOCK_BYTES))
    b.text("done")
    b.turn_duration()
    path = b.write(tmp_path / "t.jsonl")
    assert read_tail(path).records == b.records


def test_read_from_is_incremental_and_holds_back_torn_lines(tmp_path, transcript_builder):
    b = transcript_builder()
    b.prompt("p")
    path = b.write(tmp_path / "t.jsonl")
    recs, off = read_from(path, 0)
    assert len(recs) == 2
    with open(path, "ab") as fh:
        fh.write(b'{"type":"system","subtype":"turn_dur')
    recs2, off2 = read_from(path, off)
    assert recs2 == [] and off2 == off
    with open(path, "ab") as fh:
        fh.write(b'ation"}\n')
    recs3, off3 = read_from(path, off2)
    assert [r["subtype"] for r in recs3] == ["turn_duration"] and off3 == os.path.getsize(path)
    assert complete_end_offset(path) == off3
    assert read_from(path, off3 + 100)[1] == off3           # a shorter (replaced) file restarts at 0


# ------------------------------------------------------------------ record helpers

def test_human_prompts_excludes_meta_tool_results_interrupts_sidechain(transcript_builder):
    b = transcript_builder()
    b.prompt("first")
    b.meta("skill body")
    tid = b.tool_use()
    b.tool_result(tid)
    b.interrupt()
    b.add({"type": "user", "isSidechain": True, "message": {"content": "side"}, "uuid": "s1"})
    b.add({"type": "user", "message": {"content": "<local-command-stdout>x</local-command-stdout>"}, "uuid": "l1"})
    b.prompt("second", source="queued")
    assert [prompt_text(r) for r in human_prompts(b.records)] == ["first", "second"]


def test_human_prompts_in_time_order_not_line_order(transcript_builder):
    b = transcript_builder()
    b.prompt("one")
    b.prompt("two")
    recs = list(reversed(b.records))
    assert [prompt_text(r) for r in human_prompts(recs)] == ["one", "two"]


def test_prompt_text_of_list_content():
    rec = {"type": "user", "message": {"content": [{"type": "text", "text": "a"}, {"type": "image"},
                                                   {"type": "text", "text": "b"}]}}
    assert prompt_text(rec) == "a\nb"
    assert prompt_text({"type": "user"}) == ""


@pytest.mark.parametrize("a,b,equal", [
    ("AAA\nBBB\nCCC", "AAA\r\nBBB\r\nCCC\n\n", True),
    ("AAA\nBBB", "AAA  \nBBB\t\n", True),
    ("AAA\nBBB\nCCC", "AAABBBCCC", False),          # newlines lost: "mangled" must not compare equal
    ("task", "other task", False),
    ("x\r\ry", "x\n\ny", True),
])
def test_normalise_text(a, b, equal):
    assert (normalise_text(a) == normalise_text(b)) is equal


def test_main_chain_assistant_models(transcript_builder):
    b = transcript_builder(model="claude-sonnet-4-5")
    b.prompt()
    b.text("x")
    b.synthetic("partial")
    b.text("y", model="mock-served-model")
    b.message([{"type": "text", "text": "side"}], model="claude-haiku-4-5", sidechain=True)
    assert main_chain_assistant_models(b.records) == ["claude-sonnet-4-5", "mock-served-model"]


def test_read_tail_reaches_records_written_before_the_prompt_line(tmp_path, transcript_builder):
    """A turn written out of line order (the reply before the prompt line) at the end of a long file: the tail
    must still hold the reply, so the state is IDLE (end_turn), not BUSY_GENERATING."""
    from live_trial.transcript.status import classify

    b = transcript_builder()
    for i in range(400):
        b.turn(f"p{i}", "r" * 300, tools=1)
    b.prompt("last")
    b.attachment("skill_listing")
    b.text("reply " * 40000)                            # longer than a tail block; turn_duration not written yet
    recs = b.records
    reordered = recs[:-4] + recs[-1:] + recs[-4:-1]     # the reply line before the snapshot/prompt/attachment lines
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in reordered))
    tail = read_tail(path)
    assert not tail.reached_start
    assert classify(tail.records).state == "IDLE_TURN_COMPLETE"


def test_copy_transcript_is_byte_exact_and_atomic(tmp_path, transcript_builder):
    b = transcript_builder()
    b.turn()
    src = b.write(tmp_path / "src.jsonl", tail=b'{"torn')
    dst = tmp_path / "work" / "transcript.jsonl"
    assert copy_transcript(src, dst) == src.stat().st_size
    assert dst.read_bytes() == src.read_bytes()
    assert [p.name for p in dst.parent.iterdir()] == ["transcript.jsonl"]
    with pytest.raises(OSError):
        copy_transcript(tmp_path / "missing.jsonl", tmp_path / "work" / "other.jsonl")
    assert not (tmp_path / "work" / "other.jsonl").exists()
