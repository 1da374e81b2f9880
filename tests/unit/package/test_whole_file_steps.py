"""The steps that need more than a transcript's tail read it once as a stream, with memory bounded by a constant:
the launch check, the evaluator's transcript index, the verdict (hash and actual model), plan's reuse check (hash
and human prompts, cached by file identity) and send's delivery check (only the bytes written since the paste).
On a 500 MB one-turn transcript each used to hold the whole file (3 GB); here the same shape at 8 MB must stay under
a few MB of Python memory (benchmarks/huge.py measures the 500 MB case)."""
from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.stream import COUNTER

MB = 1 << 20
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"
MODEL = "claude-opus-4-8"


def big_turn(path: Path, size: int = 8 * MB, *, skill: str = "union-target:work") -> TranscriptBuilder:
    """One turn: the prompt, the Skill call and its result, a Write of ``size`` bytes and its result, the end."""
    b = TranscriptBuilder(model=MODEL, seed=9)
    b.prompt("run the skill")
    tid = b.tool_use("Skill", {"skill": skill})
    b.tool_result(tid, f"Launching skill: {skill}")
    wid = b.tool_use("Write", {"file_path": "/tmp/project/out/big.txt", "content": "w" * size})
    b.tool_result(wid, "File created", result={"type": "create", "filePath": "/tmp/project/out/big.txt",
                                                "content": "w" * size})
    b.text("DONE: ok")
    b.turn_duration()
    b.write(path, cli_order=True)
    return b


def peak_of(fn):
    tracemalloc.start()
    try:
        value = fn()
        return value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_launch_check_streams(tmp_path):
    from live_trial.transcript.skill_calls import skill_call_records, skill_calls

    path = tmp_path / "transcript.jsonl"
    big_turn(path)
    calls, peak = peak_of(lambda: skill_calls(skill_call_records(path)))
    assert calls == [("union-target:work", True)]
    assert peak < 3 * MB


def test_launch_check_finds_a_result_written_before_its_call(tmp_path):
    from live_trial.transcript.skill_calls import skill_call_records, skill_calls

    b = TranscriptBuilder(seed=2)
    b.prompt("p")
    tid = b.tool_use("Skill", {"skill": "a:b"})
    b.tool_result(tid, "ok")
    lines = b.lines()
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines[:2] + [lines[3], lines[2]]) + "\n")      # the result line before the call line
    assert skill_calls(skill_call_records(path)) == [("a:b", True)]


def test_evaluator_index_streams(tmp_path):
    from live_trial.judge import evaluator as ev

    wd = tmp_path / "run"
    (wd / "out").mkdir(parents=True)
    b = big_turn(wd / "transcript.jsonl")
    ctx, peak = peak_of(lambda: ev.build_context(wd, SimpleNamespace(qualified="a:b", frontmatter={"description": "d"},
                                                                     skill_md=None)))
    assert [r["uuid"] for r in ctx.transcript_index] == [r["uuid"] for r in b.records if r.get("uuid")]
    write_row = next(r for r in ctx.transcript_index if r["tools"] == ["Write"])
    assert write_row["writes"] == ["/tmp/project/out/big.txt"] and len(write_row["head"]) <= 100
    assert peak < 3 * MB


@pytest.fixture()
def plugins(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "plugins")
    return tmp_path / "plugins"


def test_verdict_hashes_and_reads_the_model_in_one_bounded_pass(tmp_path, plugins):
    from live_trial.acceptance.verdict import build_verdict
    from live_trial.acceptance.verdict_doc import sha256_file
    from live_trial.closure.target import resolve_target

    wd = tmp_path / "eval-log" / "union-target" / "work" / "live-trial" / "20261130T101500-abcd"
    wd.mkdir(parents=True)
    big_turn(wd / "transcript.jsonl")
    target = resolve_target("union-target:work", plugins)
    COUNTER.bytes = 0
    doc, peak = peak_of(lambda: build_verdict(
        workdir=wd, target=target, plugins_root=plugins, session_id="s", requested_model=MODEL, launch="PASS",
        completion="PASS", goal_result="PASS", poll_exit="DONE", claude_version="2.1.197", tmux_version="3.3a"))
    assert doc["transcript_sha256"] == sha256_file(wd / "transcript.jsonl") and doc["actual_model"] == [MODEL]
    assert COUNTER.bytes == (wd / "transcript.jsonl").stat().st_size          # read once
    assert peak < 4 * MB


def test_send_reads_only_what_was_written_since_the_paste(tmp_path):
    from live_trial.session import send
    from tests.unit.fakes import Clock, FakeCLI
    from tests.unit.session.test_send import S

    transcript = tmp_path / "s.jsonl"
    big_turn(transcript)
    task = tmp_path / "task.md"
    task.write_text("go on\n")
    cli = FakeCLI(transcript)
    clock = Clock()
    COUNTER.bytes = 0
    delivery, peak = peak_of(lambda: send.send_file(cli, S, task, transcript_path=transcript, clock=clock,
                                                    sleep=clock.sleep))
    assert delivery.delivered
    assert COUNTER.bytes < 256 * 1024 and peak < 2 * MB


def _record_pass(eval_root: Path, plugins: Path) -> Path:
    from live_trial.acceptance.verdict import write_trial_verdict
    from live_trial.closure.target import resolve_target

    wd = eval_root / "union-target" / "work" / "live-trial" / "20261130T101500-aaaa"
    wd.mkdir(parents=True)
    big_turn(wd / "transcript.jsonl", 4 * MB)
    write_trial_verdict(workdir=wd, target=resolve_target("union-target:work", plugins), plugins_root=plugins,
                        session_id="s", requested_model=None, launch="PASS", completion="PASS", goal_result="PASS",
                        poll_exit="DONE", claude_version="2.1.197", tmux_version="3.3a")
    return wd


def _reuse(eval_root: Path, plugins: Path) -> dict:
    from live_trial.acceptance.plan import plan

    doc = plan([plugins / "union-target"], eval_root, watches=[])
    return next(s for s in doc["skills"] if s["target"] == "union-target:work")


def _age(path: Path, seconds: float = 10.0) -> None:
    """Make the transcript look written ``seconds`` ago (the cache trusts only files older than its read)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def test_plan_reads_a_reused_transcript_once_and_then_only_stats_it(tmp_path, plugins):
    eval_root = tmp_path / "eval-log"
    wd = _record_pass(eval_root, plugins)
    transcript = wd / "transcript.jsonl"
    COUNTER.bytes = 0
    first, peak = peak_of(lambda: _reuse(eval_root, plugins))
    assert first["action"] == "reuse" and COUNTER.bytes == transcript.stat().st_size and peak < 3 * MB
    assert (eval_root / "transcript-cache.json").stat().st_mode & 0o777 == 0o600
    COUNTER.bytes = 0
    assert _reuse(eval_root, plugins)["action"] == "reuse"
    # the file's ctime is within two seconds of the first read ("racily clean"): read again, then trusted
    assert COUNTER.bytes == transcript.stat().st_size
    cache = json.loads((eval_root / "transcript-cache.json").read_text())
    for entry in cache["entries"].values():
        entry["read_at_ns"] += 10 * 10**9          # as if the last read happened ten seconds after the write
    (eval_root / "transcript-cache.json").write_text(json.dumps(cache))
    COUNTER.bytes = 0
    assert _reuse(eval_root, plugins)["action"] == "reuse"
    assert COUNTER.bytes == 0


def test_a_changed_transcript_never_hits_the_cache(tmp_path, plugins):
    eval_root = tmp_path / "eval-log"
    wd = _record_pass(eval_root, plugins)
    transcript = wd / "transcript.jsonl"
    _age(transcript)
    assert _reuse(eval_root, plugins)["action"] == "reuse"
    st = transcript.stat()
    data = bytearray(transcript.read_bytes())
    data[data.rindex(b"DONE: ok")] = ord("d")      # same size, one byte changed ...
    transcript.write_bytes(bytes(data))
    os.utime(transcript, ns=(st.st_atime_ns, st.st_mtime_ns))    # ... and its mtime set back
    e = _reuse(eval_root, plugins)
    assert e["action"] == "run" and "edited" in e["reason"]


def test_a_broken_cache_file_is_an_empty_cache(tmp_path, plugins):
    eval_root = tmp_path / "eval-log"
    _record_pass(eval_root, plugins)
    (eval_root / "transcript-cache.json").write_text('{"version": 1, "entries": {"x": {"sha256": 5}}}')
    assert _reuse(eval_root, plugins)["action"] == "reuse"
    assert json.loads((eval_root / "transcript-cache.json").read_text())["entries"]


def many_records(path: Path, size: int = 6 * MB) -> None:
    """One turn of many small records (tool_use / tool_result pairs) adding up to ``size`` bytes."""
    b = TranscriptBuilder(model=MODEL, seed=12)
    b.prompt("run the skill")
    tid = b.tool_use("Skill", {"skill": "union-target:work"})
    b.tool_result(tid, "Launching skill: union-target:work")
    with open(path, "w") as fh:
        fh.write(b.text_jsonl(cli_order=True))
        while fh.tell() < size:
            b.records.clear()
            tid = b.tool_use("Bash", {"command": "make step"})
            b.tool_result(tid, "step output " * 100)
            fh.write(b.text_jsonl(cli_order=True))
        b.records.clear()
        b.text("DONE: ok")
        b.turn_duration()
        fh.write(b.text_jsonl(cli_order=True))


def test_verdict_and_plan_keep_no_record_of_a_transcript_of_many_small_records(tmp_path, plugins):
    """Thousands of assistant records were all kept to read the actual model from them (458 MB on 500 MB)."""
    from live_trial.acceptance.transcript_cache import TranscriptCache
    from live_trial.acceptance.verdict import build_verdict
    from live_trial.closure.target import resolve_target

    wd = tmp_path / "eval-log" / "union-target" / "work" / "live-trial" / "20261130T101500-abcd"
    wd.mkdir(parents=True)
    many_records(wd / "transcript.jsonl")
    target = resolve_target("union-target:work", plugins)
    doc, peak = peak_of(lambda: build_verdict(
        workdir=wd, target=target, plugins_root=plugins, session_id="s", requested_model=MODEL, launch="PASS",
        completion="PASS", goal_result="PASS", poll_exit="DONE", claude_version="2.1.197", tmux_version="3.3a"))
    assert doc["actual_model"] == [MODEL] and peak < 3 * MB
    facts, peak = peak_of(lambda: TranscriptCache(tmp_path / "eval-log").facts(wd / "transcript.jsonl"))
    assert (facts.human_prompts, facts.scripted) == (1, False) and peak < 3 * MB


def test_a_cache_written_under_older_counting_rules_is_read_again(tmp_path, plugins):
    """An entry is a reading of the file under the rules of its day: a cache file from a harness that counted a task
    notification or a /compact record as a human prompt (here: 2 prompts remembered for a file with 1) must not make
    plan re-run a PASS, nor reuse one that the rules of today would re-run."""
    from live_trial.acceptance import transcript_cache as tc

    eval_root = tmp_path / "eval-log"
    wd = _record_pass(eval_root, plugins)
    transcript = wd / "transcript.jsonl"
    _age(transcript)
    assert _reuse(eval_root, plugins)["action"] == "reuse"
    path = eval_root / "transcript-cache.json"
    cache = json.loads(path.read_text())
    assert cache["version"] == 2 and cache["rules"] == tc.rules_fingerprint()
    for entry in cache["entries"].values():
        entry.update(human_prompts=2, read_at_ns=entry["read_at_ns"] + 10 * 10**9)
    for doc in ({"version": 1, "entries": cache["entries"]},                      # written before rules were kept
                {**cache, "rules": "sha256:" + "0" * 64}):                         # written under other rules
        path.write_text(json.dumps(doc))
        COUNTER.bytes = 0
        assert _reuse(eval_root, plugins)["action"] == "reuse"
        assert COUNTER.bytes == transcript.stat().st_size
    path.write_text(json.dumps(cache))                                            # today's rules: trusted as it is
    assert _reuse(eval_root, plugins)["action"] == "run"


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parents[1] / "transcripts").glob("*.jsonl")))
def test_the_evaluator_index_of_cut_records_is_the_index_of_whole_ones(name):
    """The evaluator holds a session's records cut to what its index reads (no toolUseResult copy of a Write's
    content, no usage): on every recorded session the index and the facts are those of the whole records."""
    from live_trial.judge.index import index_fields, read_index
    from live_trial.transcript.order import causal_order
    from live_trial.transcript.reader import read_records

    records = read_records(Path(__file__).parents[1] / "transcripts" / name).records
    whole = read_index(causal_order(records, sidechains=True))
    cut = read_index(causal_order([index_fields(r) for r in records], sidechains=True))
    assert cut[0] == whole[0] and {k: vars(v) for k, v in cut[1].items()} == {k: vars(v) for k, v in whole[1].items()}
    assert all("toolUseResult" not in index_fields(r) for r in records)
