"""Benchmark of ``status`` and ``poll`` on big transcripts, in the shapes a trial leaves.

Builds, of ``--size-mb`` each (default 1024 = 1 GB): a transcript of many short turns (repeated real turn shapes from
``live_trial.transcript.builder``; uuids and dates unique per repetition, ending in a turn whose Bash tool still
runs), and the shape of a trial: ONE long turn of tool calls whose results are 5-120 KB (seeded sizes), ending in a
Bash call still running. Then, in the same run, each the median of ``--repeat`` runs (or ticks):

- ``status`` in-process (:func:`live_trial.transcript.turn.read_turn` + ``classify``) on the many-turn file, against
  a full parse of it (a lower bound of any full read).
- ``status`` on the one long turn against the many-turn file. Goal: ratio <= 2. The same long turn once it ended
  (no live status) is printed for information: only the whole turn can show a background shell started long ago, so
  that read goes back to the prompt or to the 8 MB read limit.
- ``status`` as a process (``live-trial status --transcript``, the console script, bytecode compiled as an install
  does) against a Python process that reads the last 64 KiB of the same file. Goal: ratio <= 3 (wall, median).
- ``poll`` per tick (fake tmux backend, real screen masking, real transcript reads, one tool call and its result
  appended between ticks, state file written each tick) on 1 MB and on the big many-turn file (goal: within 20 %), and on a 1 MB
  against the 1 GB one long turn (goal: within 20 %).
- one long line: a turn whose last line is a Write of ``--long-line-mb`` (default 48) MB, against the same bytes split
  into as many records of 1 MB (each under the 1 MiB summary threshold, so parsed whole). ``status`` (read_turn +
  classify, median) and a poll tick (a fresh poll call: the first tick reads the tail) on each; goal: the long line
  at most 2x the split records. Then the bytes an idle poll tick reads (no new byte since the last tick), counted
  through the reader; goal: at most 64 KiB. ``--only-long-line`` runs this section alone.

Prints ratios, asserts nothing. Usage: ``python benchmarks/status.py [--size-mb 1024] [--repeat 20] [--keep DIR]
[--long-line-mb 48] [--only-long-line]``
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

import os  # noqa: E402
import random  # noqa: E402

from goals import Goals  # noqa: E402

from live_trial.policy import load_policy  # noqa: E402
from live_trial.session.rules import PaneRow  # noqa: E402
from live_trial.transcript.builder import TranscriptBuilder, cli_key_order  # noqa: E402
from live_trial.transcript.reader import complete_end_offset, read_tail  # noqa: E402
from live_trial.transcript.status import classify  # noqa: E402
from live_trial.transcript.turn import read_turn  # noqa: E402
from live_trial.trial.observation import TurnCache  # noqa: E402
from live_trial.trial.poll import poll  # noqa: E402
from live_trial.trial.poll_state import PollConfig  # noqa: E402

SID = "5e55a0b1-0000-4000-8000-000000000001"
SESSION = "lt-20261130T120000-be4c-bench"
REP = "RRRRRRRR"
ROUNDS = 5
DAY = "2026-11-30"
SCREEN = (" ▐▛███▜▌   Claude Code v2.1.197\n\n● Bash(sleep 20)\n  ⎿  Running… (7s)\n\n"
          "✽ Zigzagging… (7s · ↓ 21 tokens)\n" + "─" * 80 + "\n❯\u00a0\n" + "─" * 80
          + "\n  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt\n")


def _block_builder() -> TranscriptBuilder:
    """A builder whose every uuid holds ``RRRRRRRR`` (a repeated block gets new ids by replacing it)."""
    b = TranscriptBuilder(session_id=SID, cwd="/tmp/bench/project", step_s=0.5, seed=0)
    counter = [0]

    def next_id(prefix: str = "") -> str:
        counter[0] += 1
        return f"{prefix}{REP}-{counter[0]:04x}-4000-8000-{counter[0]:012x}"
    b._id = next_id
    return b


def block_template(target_bytes: int = 1 << 20) -> str:
    """About ``target_bytes`` of JSONL with ``RRRRRRRR`` in every uuid and ``2026-11-30`` in every timestamp."""
    b = _block_builder()
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
    """Median seconds of what ``status --transcript`` does in-process, and the state it found."""
    runs = []
    state = ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        st = classify(read_turn(path).records)
        runs.append(time.perf_counter() - t0)
        state = st.state
    return statistics.median(runs), state


def _process_times(argv: list[str], repeat: int, env: dict) -> tuple[list[float], list[float]]:
    """(wall s, CPU s) of ``repeat`` runs of ``argv`` as a process."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, _, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - t0)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return walls, cpus


def time_status_process(path: Path, repeat: int) -> tuple[float, float, float, float]:
    """(status wall, baseline wall, status CPU, baseline CPU), medians over alternating runs.

    The console script as a user runs it (``bin/live-trial`` next to this interpreter, else ``-m live_trial``);
    the baseline is this interpreter reading the last 64 KiB of the same file. The package is byte-compiled first,
    as an install does (PYTHONDONTWRITEBYTECODE would otherwise make every run compile it again)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "live_trial")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    script = Path(sys.executable).with_name("live-trial")
    status = ([str(script)] if script.exists() else [sys.executable, "-m", "live_trial"]) + [
        "status", "--transcript", str(path)]
    read = [sys.executable, "-c", f"f = open({str(path)!r}, 'rb'); f.seek(-65536, 2); f.read(65536)"]
    _process_times(status, 2, env)                   # warm the caches of both
    _process_times(read, 2, env)
    sw, sc, bw, bc = [], [], [], []
    for _ in range(repeat):
        w, c = _process_times(status, 1, env)
        sw += w
        sc += c
        w, c = _process_times(read, 1, env)
        bw += w
        bc += c
    return tuple(statistics.median(x) for x in (sw, bw, sc, bc))


class _Backend:
    """A live session showing SCREEN (:class:`live_trial.session.protocols.Backend`, without tmux)."""

    def has_session(self, name):
        return True

    def pane(self, name):
        return PaneRow(session=name, pane_id="%1", pane_pid=0, dead=False, dead_status=None, owner="", created=0)

    def probe(self, name, pane_id=None):
        return True, SCREEN

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
        extra.tool_result(extra.tool_use("Bash", {"command": "make step"}), "progress")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(extra.text_jsonl())
        stamps.append(time.perf_counter())

    cfg.max_ticks = ticks
    start = time.perf_counter()
    poll(cfg, _Backend(), sleep=sleep, on_tick=on_tick)
    # per tick = from the end of the previous sleep (or start) to the tick's on_tick
    marks = [start] + stamps
    return [marks[i + 1] - marks[i] for i in range(0, len(marks) - 1, 2)]


def build_long_turn(path: Path, size_mb: int, *, ended: bool = False) -> int:
    """The shape of a trial: one prompt, then ``size_mb`` MB of Bash calls whose results are 5-120 KB (seeded sizes;
    the CLI writes a result twice, in the message and in ``toolUseResult``), the last call still running, or with
    ``ended`` answered, a final text and ``turn_duration``."""
    rng = random.Random(7)
    first = TranscriptBuilder(session_id=SID, seed=7)
    first.now = first.now.replace(year=2025)
    first.prompt("One long task.")
    b = _block_builder()
    b.now = b.now.replace(year=2026, month=11, day=30, hour=0)
    while sum(len(json.dumps(r)) for r in b.records) < 4 << 20:      # a 4 MB block, repeated with new ids and days
        tid = b.tool_use("Bash", {"command": "make step", "description": "one step"})
        b.tool_result(tid, "step output line\n" * (rng.randint(5 << 10, 120 << 10) // 17))
    block = b.text_jsonl()
    base = date(2026, 1, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(first.text_jsonl())
        written, rep = 0, 0
        while written < size_mb * (1 << 20):
            chunk = block.replace(REP, f"{rep:08x}").replace(DAY, (base + timedelta(days=rep)).isoformat())
            fh.write(chunk)
            written += len(chunk)
            rep += 1
        last = TranscriptBuilder(session_id=SID, seed=99)
        last.now = last.now.replace(year=2030)
        tid = last.tool_use("Bash", {"command": "sleep 20"})
        if ended:
            last.tool_result(tid, "done")
            last.text("DONE: ok")
            last.turn_duration()
        fh.write(last.text_jsonl())
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


GOALS = Goals("STATUS_BENCH")


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
    print(f"ratio long line/split records: status {ls / ss:.2f}, poll tick {lt / st:.2f}   (goal: <= 2): "
          f"{GOALS.check('long line', ls / ss <= 2 and lt / st <= 2)}")
    idle = idle_tick_bytes(long_path, work)
    print(f"bytes read by an idle poll tick ({size_mb} MB last line, nothing new): {idle}   (goal: <= 65536): "
          f"{GOALS.check('idle tick bytes', idle <= 65536)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--ticks", type=int, default=40)
    ap.add_argument("--long-line-mb", type=int, default=48)
    ap.add_argument("--keep", type=Path, default=None, help="build in this folder and keep the files")
    ap.add_argument("--only-long-line", action="store_true", help="run only the one-long-line section")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="lt-bench-status-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.only_long_line:
            long_line_section(work, args.long_line_mb, args.repeat)
            return GOALS.exit_code()
        big, small = work / "big.jsonl", work / "small.jsonl"
        long_turn, long_small, long_ended = work / "long-turn.jsonl", work / "long-turn-1mb.jsonl", work / "ended.jsonl"
        build_s = build(big, args.size_mb)
        build(small, 1)
        build_long_turn(long_turn, args.size_mb)
        build_long_turn(long_small, 1)
        build_long_turn(long_ended, 64, ended=True)
        size = big.stat().st_size
        print(f"transcripts: {size / (1 << 20):.0f} MB of many short turns (built in {build_s:.1f}s), "
              f"{long_turn.stat().st_size / (1 << 20):.0f} MB of one long turn (results 5-120 KB); load average "
              f"{os.getloadavg()[0]:.1f}")
        status_s, state = time_status(big, args.repeat)
        t0 = time.perf_counter()
        lines = full_parse(big)
        full_s = time.perf_counter() - t0
        print(f"status in-process, many turns, median of {args.repeat}: {status_s * 1000:.2f} ms -> {state}; "
              f"full parse ({lines} lines) {full_s * 1000:.0f} ms; ratio full/status {full_s / status_s:.0f}x "
              f"(goal: status < 50 ms and >= 100x): {GOALS.check('status', status_s < 0.05 and full_s / status_s >= 100)}")
        long_s, long_state = time_status(long_turn, args.repeat)
        print(f"status in-process, one long turn, median of {args.repeat}: {long_s * 1000:.2f} ms -> {long_state}")
        ratio = long_s / status_s
        print(f"STATUS_BENCH long turn / many turns ({size / (1 << 20):.0f} MB): ratio {ratio:.2f} (goal <= 2): "
              f"{GOALS.check('long turn', ratio <= 2)}")
        ended_s, ended_state = time_status(long_ended, args.repeat)
        print(f"for information: a 64 MB long turn that ended (no live status): {ended_s * 1000:.1f} ms -> "
              f"{ended_state} (reads back to its prompt or the 8 MB limit to see background work started earlier)")
        sw, bw, sc, bc = time_status_process(big, args.repeat)
        print(f"status as a process: {sw * 1000:.1f} ms wall, {sc * 1000:.1f} ms CPU; a Python process reading "
              f"64 KiB: {bw * 1000:.1f} ms wall, {bc * 1000:.1f} ms CPU (medians of {args.repeat}, alternating)")
        print(f"STATUS_BENCH process / read 64 KiB: ratio {sw / bw:.2f} wall, {sc / bc:.2f} CPU (goal <= 3): "
              f"{GOALS.check('process', sw / bw <= 3)}")
        for label, one, two in (("many turns", small, big), ("one long turn", long_small, long_turn)):
            one_runs: list[float] = []
            two_runs: list[float] = []
            for _ in range(ROUNDS):          # alternate, so load from other processes hits both alike
                one_runs += time_poll_tick(one, work, args.ticks)
                two_runs += time_poll_tick(two, work, args.ticks)
            t1, t2 = statistics.median(one_runs), statistics.median(two_runs)
            print(f"poll per tick, {label}, median of {ROUNDS}x{args.ticks}: 1 MB {t1 * 1000:.2f} ms, "
                  f"{two.stat().st_size / (1 << 20):.0f} MB {t2 * 1000:.2f} ms; ratio {t2 / t1:.2f} "
                  f"(goal: within 20 %, i.e. <= 1.20): {GOALS.check('poll tick ' + label, t2 / t1 <= 1.2)}")
        base_s, cached_s, s1, s2 = time_long_turn(long_small, args.ticks)
        print(f"for information: one long turn (1 MB), per tick: re-read tail {base_s * 1000:.1f} ms -> {s1}, "
              f"turn cache {cached_s * 1000:.1f} ms -> {s2}")
        long_line_section(work, args.long_line_mb, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return GOALS.exit_code()



if __name__ == "__main__":
    sys.exit(main())
