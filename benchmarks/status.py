"""Benchmark of ``status`` and ``poll`` on big transcripts.

Builds a transcript of ``--size-mb`` (default 1024 = 1 GB) by repeating real turn shapes from
``live_trial.transcript.builder`` (prompt, assistant text, tool_use, tool_result, final text, turn_duration; uuids
and dates unique per repetition), ending in a turn whose Bash tool is still running. Then, in the same run:

- ``status``: ``read_tail`` + ``classify`` on the big file (median of ``--repeat`` runs) against a full parse of the
  same file (every line ``json.loads``-ed, streaming, records not kept: a lower bound of any full read) + classify
  of the tail. Goal: status under 50 ms and at least 100x faster.
- ``poll``: the steady per-tick cost of :func:`live_trial.trial.poll.poll` (fake tmux backend, real screen masking, real
  transcript reads, one record appended between ticks, state file written each tick) on a 1 MB and on the big
  transcript. Goal: within 20 % of each other.
- one long turn: a trial is one turn, so the tail back to the prompt is the whole turn. Per tick, with one record
  appended between ticks, on a ``--long-turn-mb`` (default 12) single turn: the baseline re-reads the tail and
  classifies (what every tick did before :class:`live_trial.trial.poll.TurnCache`), against the cache (only new lines
  parsed) and classify. Goal: the cache at most half the baseline.

- one long line: a turn whose last line is a Write of ``--long-line-mb`` (default 48) MB, against the same bytes split
  into as many records of 1 MB (each under the 1 MiB summary threshold, so parsed whole). ``status`` (read_tail + classify, median) and a poll tick (a
  fresh poll call: the first tick reads the tail) on each; goal: the long line at most 2x the split records. Then
  the bytes an idle poll tick reads (no new byte since the last tick), counted through the reader; goal: at most
  64 KiB.

Prints ratios, asserts nothing. Usage: ``python benchmarks/status.py [--size-mb 1024] [--repeat 20] [--keep DIR]``
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from live_trial.policy import load_policy  # noqa: E402
from live_trial.transcript.builder import TranscriptBuilder, cli_key_order  # noqa: E402
from live_trial.transcript.reader import complete_end_offset, read_tail  # noqa: E402
from live_trial.transcript.status import classify  # noqa: E402
from live_trial.trial.poll import PollConfig, TurnCache, poll  # noqa: E402

SID = "5e55a0b1-0000-4000-8000-000000000001"
SESSION = "lt-20261130T120000-be4c-bench"
REP = "RRRRRRRR"
ROUNDS = 5
DAY = "2026-11-30"
SCREEN = (" ▐▛███▜▌   Claude Code v2.1.197\n\n● Bash(sleep 20)\n  ⎿  Running… (7s)\n\n"
          "✽ Zigzagging… (7s · ↓ 21 tokens)\n" + "─" * 80 + "\n❯\u00a0\n" + "─" * 80
          + "\n  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt\n")


def block_template(target_bytes: int = 1 << 20) -> str:
    """About ``target_bytes`` of JSONL with ``RRRRRRRR`` in every uuid and ``2026-11-30`` in every timestamp."""
    b = TranscriptBuilder(session_id=SID, cwd="/tmp/bench/project", step_s=0.5, seed=0)
    counter = [0]

    def next_id(prefix: str = "") -> str:
        counter[0] += 1
        return f"{prefix}{REP}-{counter[0]:04x}-4000-8000-{counter[0]:012x}"
    b._id = next_id
    out = ""
    i = 0
    while len(out) < target_bytes:
        b.records.clear()
        b.prompt(f"Task {i}: update the report and run the checks.")
        b.attachment("skill_listing", names=["hello:greet"], skillCount=1)
        tid = b.tool_use("Read", {"file_path": "/tmp/bench/project/report.md"}, text="Reading the report first.")
        b.tool_result(tid, "line of the report\n" * 40)
        tid = b.tool_use("Bash", {"command": "make check", "description": "run the checks"})
        b.tool_result(tid, "ok " * 300)
        b.text("All checks pass. DONE: ok " + "details " * 40)
        b.turn_duration(4321)
        out += b.text_jsonl()
        i += 1
    return out


def build(path: Path, size_mb: int) -> float:
    """Write ``size_mb`` MB of repeated turns (each repetition a new day and new uuids), then a running Bash turn."""
    t0 = time.perf_counter()
    template = block_template()
    base = date(2026, 1, 1)
    written = 0
    rep = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"type":"mode","mode":"normal"}\n{"type":"permission-mode","permissionMode":"bypassPermissions"}\n')
        while written < size_mb * (1 << 20):
            chunk = template.replace(REP, f"{rep:08x}").replace(DAY, (base + timedelta(days=rep)).isoformat())
            fh.write(chunk)
            written += len(chunk)
            rep += 1
        last = TranscriptBuilder(session_id=SID, start=None, seed=99)
        last.now = last.now.replace(year=2030)
        last.prompt("The last task.")
        last.tool_use("Bash", {"command": "sleep 20"})
        fh.write(last.text_jsonl())
    return time.perf_counter() - t0


def full_parse(path: Path) -> int:
    """Baseline: parse every line of the file (streaming; records not kept)."""
    n = 0
    with open(path, "rb") as fh:
        for line in fh:
            try:
                json.loads(line)
                n += 1
            except ValueError:
                pass
    return n


def time_status(path: Path, repeat: int) -> tuple[float, str]:
    runs = []
    state = ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        st = classify(read_tail(path).records)
        runs.append(time.perf_counter() - t0)
        state = st.state
    return statistics.median(runs), state


class _Backend:
    def has_session(self, name):
        return True

    def pane_alive(self, name):
        return True

    def pane_pid(self, name):
        return None

    def capture(self, name, scrollback=False):
        return SCREEN


def time_poll_tick(path: Path, work: Path, ticks: int) -> list[float]:
    """Steady-state costs of poll ticks (warm-up call first; one record appended per tick)."""
    state_file = work / f"poll-{path.stem}.json"
    state_file.unlink(missing_ok=True)
    extra = TranscriptBuilder(session_id=SID, seed=5)
    extra.now = extra.now.replace(year=2031)
    pol = load_policy({}).with_overrides(poll_interval_s=0.0, stall_limit_s=1e9, hard_cap_s=1e9)
    cfg = PollConfig(marker=work / "never" / "status.json", session=SESSION, session_id=SID, cwd=None,
                     config_dir=work, state_file=state_file, policy=pol, max_ticks=1, transcript_path=path)
    poll(cfg, _Backend())                                    # warm-up: the first tick of a fresh state file
    stamps: list[float] = []

    def on_tick(_d):
        stamps.append(time.perf_counter())

    def sleep(_s):
        extra.records.clear()
        extra.tool_result("toolu_x", "progress")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(extra.text_jsonl())
        stamps.append(time.perf_counter())

    cfg.max_ticks = ticks
    start = time.perf_counter()
    poll(cfg, _Backend(), sleep=sleep, on_tick=on_tick)
    # per tick = from the end of the previous sleep (or start) to the tick's on_tick
    marks = [start] + stamps
    return [marks[i + 1] - marks[i] for i in range(0, len(marks) - 1, 2)]


def build_long_turn(path: Path, size_mb: int) -> int:
    """One turn of ``size_mb`` MB: a prompt, then Bash tool_use/tool_result pairs, the last tool still running."""
    b = TranscriptBuilder(session_id=SID, seed=7)
    b.prompt("One long task.")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(b.text_jsonl())
        written = 0
        while written < size_mb * (1 << 20):
            b.records.clear()
            tid = b.tool_use("Bash", {"command": "make step", "description": "one step"})
            b.tool_result(tid, "step output " * 150)
            chunk = b.text_jsonl()
            fh.write(chunk)
            written += len(chunk)
        b.records.clear()
        b.tool_use("Bash", {"command": "sleep 20"})
        fh.write(b.text_jsonl())
    return path.stat().st_size


def time_long_turn(path: Path, ticks: int) -> tuple[float, float, str, str]:
    """Median seconds per tick: (baseline read_tail + classify, TurnCache + classify), and the states seen."""
    extra = TranscriptBuilder(session_id=SID, seed=8)
    extra.now = extra.now.replace(year=2031)

    def append() -> None:
        extra.records.clear()
        extra.text("still working")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(extra.text_jsonl())

    base, cached, cache = [], [], TurnCache()
    cache.records(path, complete_end_offset(path))        # the first tick reads the tail once
    s1 = s2 = ""
    for _ in range(ticks):
        append()
        t0 = time.perf_counter()
        s1 = classify(read_tail(path).records).state
        t1 = time.perf_counter()
        s2 = classify(cache.records(path, complete_end_offset(path))[0]).state
        t2 = time.perf_counter()
        base.append(t1 - t0)
        cached.append(t2 - t1)
    return statistics.median(base), statistics.median(cached), s1, s2


def build_long_line(path: Path, split: Path, size_mb: int) -> tuple[int, int]:
    """``path``: a prompt then a Write whose line is ``size_mb`` MB (10^6 bytes; one line, the tool still running);
    ``split``: the same prompt then ``size_mb`` tool_use records of 1 MB each, under the 1 MiB summary threshold, so
    each is parsed whole as an ordinary record is. Returns both sizes."""
    b = TranscriptBuilder(session_id=SID, seed=11)
    b.prompt("Write the big file.")
    head = "".join(json.dumps(cli_key_order(r)) + "\n" for r in b.records)
    line = "line of the generated file, with \"quotes\" and a tab\t\n"
    per_line = len(json.dumps(line)) - 2
    b.records.clear()
    b.tool_use("Write", {"file_path": "/tmp/bench/project/big.txt", "content": line * (size_mb * 10**6 // per_line)})
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head + json.dumps(cli_key_order(b.records[0])) + "\n")
    with open(split, "w", encoding="utf-8") as fh:
        fh.write(head)
        for i in range(size_mb):
            b.records.clear()
            b.tool_use("Bash", {"command": f"step {i}", "description": ""})
            rec = cli_key_order(b.records[0])
            pad = 10**6 - len(json.dumps(rec)) - 1
            rec["message"]["content"][0]["input"]["description"] = "x" * pad
            fh.write(json.dumps(rec) + "\n")
    return path.stat().st_size, split.stat().st_size


def time_first_tick(path: Path, work: Path, repeat: int) -> float:
    """Median seconds of one poll call's single tick on a fresh state file (it reads the tail)."""
    pol = load_policy({}).with_overrides(poll_interval_s=0.0, stall_limit_s=1e9, hard_cap_s=1e9)
    runs = []
    for i in range(repeat):
        state_file = work / f"first-{path.stem}-{i}.json"
        cfg = PollConfig(marker=work / "never" / "status.json", session=SESSION, session_id=SID, cwd=None,
                         config_dir=work, state_file=state_file, policy=pol, max_ticks=1, transcript_path=path)
        t0 = time.perf_counter()
        poll(cfg, _Backend())
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def idle_tick_bytes(path: Path, work: Path, ticks: int = 10) -> int:
    """Largest number of transcript bytes one poll tick read while nothing was written (after a first tick)."""
    from live_trial.transcript.stream import COUNTER

    pol = load_policy({}).with_overrides(poll_interval_s=0.0, stall_limit_s=1e9, hard_cap_s=1e9)
    cfg = PollConfig(marker=work / "never" / "status.json", session=SESSION, session_id=SID, cwd=None,
                     config_dir=work, state_file=work / f"idle-{path.stem}.json", policy=pol, max_ticks=ticks + 1,
                     transcript_path=path)
    per_tick: list[int] = []
    marks: list[int] = []

    def on_tick(_d):
        marks.append(COUNTER.bytes)

    COUNTER.bytes = 0
    poll(cfg, _Backend(), sleep=lambda s: None, on_tick=on_tick)
    per_tick = [b - a for a, b in zip(marks, marks[1:])]
    return max(per_tick)


def long_line_section(work: Path, size_mb: int, repeat: int) -> None:
    long_path, split_path = work / "long-line.jsonl", work / "split-records.jsonl"
    long_size, split_size = build_long_line(long_path, split_path, size_mb)
    print(f"one long line: a {long_size / 1e6:.0f} MB file whose last line is a {size_mb} MB Write, against "
          f"{split_size / 1e6:.0f} MB in {size_mb} records of 1 MB (each parsed whole)")
    results = {}
    for name, path in (("long", long_path), ("split", split_path)):
        status_s, state = time_status(path, repeat)
        tick_s = time_first_tick(path, work, max(3, repeat // 4))
        results[name] = (status_s, tick_s, state)
        print(f"  {name:5s}: status {status_s * 1000:7.1f} ms -> {state:17s} poll tick {tick_s * 1000:7.1f} ms")
    (ls, lt, _), (ss, st, _) = results["long"], results["split"]
    print(f"ratio long line/split records: status {ls / ss:.2f}, poll tick {lt / st:.2f}   (goal: <= 2)")
    idle = idle_tick_bytes(long_path, work)
    print(f"bytes read by an idle poll tick (48 MB last line, nothing new): {idle}   (goal: <= 65536)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--ticks", type=int, default=40)
    ap.add_argument("--long-turn-mb", type=int, default=12)
    ap.add_argument("--long-line-mb", type=int, default=48)
    ap.add_argument("--keep", type=Path, default=None, help="build in this folder and keep the files")
    ap.add_argument("--only-long-line", action="store_true", help="run only the one-long-line section")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="lt-bench-status-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.only_long_line:
            long_line_section(work, args.long_line_mb, args.repeat)
            return 0
        big, small = work / "big.jsonl", work / "small.jsonl"
        build_s = build(big, args.size_mb)
        build(small, 1)
        size = big.stat().st_size
        print(f"transcript: {size / (1 << 20):.0f} MB built in {build_s:.1f}s ({big})")
        status_s, state = time_status(big, args.repeat)
        t0 = time.perf_counter()
        lines = full_parse(big)
        full_s = time.perf_counter() - t0
        print(f"status (read_tail + classify), median of {args.repeat}: {status_s * 1000:.2f} ms -> {state}")
        print(f"full parse of the same file ({lines} lines):      {full_s * 1000:.0f} ms")
        print(f"ratio full/status: {full_s / status_s:.0f}x   (goal: status < 50 ms and >= 100x)")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "live_trial", "status", "--transcript", str(big)], cwd=ROOT,
                       capture_output=True, check=False)
        print(f"for information: `python -m live_trial status --transcript` wall time incl. interpreter start: "
              f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        small_runs: list[float] = []
        big_runs: list[float] = []
        for _ in range(ROUNDS):          # alternate, so load from other processes hits both alike
            small_runs += time_poll_tick(small, work, args.ticks)
            big_runs += time_poll_tick(big, work, args.ticks)
        tick_small, tick_big = statistics.median(small_runs), statistics.median(big_runs)
        print(f"poll per tick, median of {ROUNDS}x{args.ticks}: 1 MB {tick_small * 1000:.2f} ms, "
              f"{size / (1 << 20):.0f} MB {tick_big * 1000:.2f} ms")
        print(f"ratio big/small per tick: {tick_big / tick_small:.2f}   (goal: within 20 %, i.e. <= 1.20)")
        long_turn = work / "long-turn.jsonl"
        long_size = build_long_turn(long_turn, args.long_turn_mb)
        base_s, cached_s, s1, s2 = time_long_turn(long_turn, args.ticks)
        print(f"one long turn ({long_size / (1 << 20):.0f} MB), per tick, median of {args.ticks}: "
              f"re-read tail {base_s * 1000:.1f} ms -> {s1}, turn cache {cached_s * 1000:.1f} ms -> {s2}")
        print(f"ratio cache/re-read: {cached_s / base_s:.2f}   (goal: <= 0.50)")
        long_line_section(work, args.long_line_mb, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
