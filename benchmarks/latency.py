"""Benchmark of DONE latency on the real CLI: from the write of the turn's last transcript record to poll's DONE,
over ``--trials`` trials (default 10). Goal: median under 0.3 s with the policy's settings.

Each trial boots a fresh ``claude`` in tmux against the rehearsal server (scenario: Write the marker, wait
``--reply-delay`` s plus a random part of the poll interval, "DONE: ok"), sends the task through the product's
``session.send.send_file`` (which returns only once the transcript holds the prompt: a trial whose task did not
arrive is an error, never a time), starts ``poll`` at once, and when poll returns DONE compares that moment with the
transcript file's modification time (the write of its last line, which must be the ``turn_duration`` record: the
CLI writes nothing after it). The newest record's own ``timestamp`` is printed beside it. Needs tmux and the pinned
CLI. Usage: ``python benchmarks/latency.py [--trials 10] [--reply-delay 2]``
"""
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from live_trial.policy import load_policy  # noqa: E402
from live_trial.rehearsal.config import rehearsal_env, seed_config  # noqa: E402
from live_trial.rehearsal.server import RehearsalServer  # noqa: E402
from live_trial.session import boot  # noqa: E402
from live_trial.session.backend import Backend  # noqa: E402
from live_trial.session.send import send_file  # noqa: E402
from live_trial.transcript.paths import locate  # noqa: E402
from live_trial.transcript.records import record_time  # noqa: E402
from live_trial.trial.poll import poll  # noqa: E402
from live_trial.trial.poll_state import PollConfig  # noqa: E402

GOAL_S = 0.3


def scenario(delay_s: float) -> dict:
    return {"side_query_text": "Latency", "rules": [
        {"id": "write", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Write", "input": {
                "file_path": "{{re:Completion marker: *(/\\S+/out/status\\.json)}}", "content": "{}\n"}}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}], "delay_s": delay_s}}]}


def one_trial(backend: Backend, server: RehearsalServer, work: Path, n: int) -> tuple[float, float]:
    """``(DONE - file mtime of the last record, DONE - the last record's timestamp)`` in seconds."""
    cwd = work / f"trial-{n}"
    cwd.mkdir()
    config = seed_config(work / f"config-{n}", [cwd], skip_bypass_dialog=True)
    sid = str(uuid.uuid4())
    session = f"lt-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}-latency-{n}"
    marker = cwd / "out" / "status.json"
    try:
        boot.boot(boot.BootRequest(session=session, cwd=cwd, session_id=sid, rehearsal=True, timeout_s=120,
                                   env_overrides=rehearsal_env(server.url, config)), backend)
        task = work / f"task-{n}.md"
        task.write_text(f"Write the marker.\nCompletion marker: {marker}\n")
        transcript = locate(sid, cwd, config)
        send_file(backend, session, task, transcript_path=transcript)       # raises unless the prompt arrived
        pol = load_policy({}).with_overrides(stall_limit_s=120)
        cfg = PollConfig(marker=marker, session=session, session_id=sid, cwd=cwd, config_dir=config,
                         state_file=work / f"poll-{n}.json", policy=pol)
        result = poll(cfg, backend)
        done_at = time.time()
        if result.exit != "DONE":
            raise SystemExit(f"trial {n}: poll ended {result.exit} ({result.reason}); tail: {result.capture_tail}")
        mtime = transcript.stat().st_mtime
        last = json.loads(transcript.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
        if last.get("subtype") != "turn_duration":
            tail = [json.loads(line) for line in transcript.read_bytes().rstrip(b"\n").split(b"\n")[-5:]]
            seen = "; ".join(f"{r.get('type')}/{r.get('subtype')} at {r.get('timestamp')} "
                             f"{json.dumps((r.get('message') or {}).get('content'))[:160]}" for r in tail)
            raise SystemExit(f"trial {n}: the transcript's last record is {last.get('type')}/{last.get('subtype')}, "
                             f"not turn_duration: the measure would not start at the turn's end (DONE at "
                             f"{done_at:.3f}, poll: {result.reason}; the last records: {seen})")
        return done_at - mtime, done_at - (record_time(last) or mtime)
    finally:
        backend.kill_session(session)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--reply-delay", type=float, default=2.0,
                    help="seconds before the final reply (poll is running); plus a random 0..poll_interval_s")
    ap.add_argument("--seed", type=int, default=4)
    args = ap.parse_args()
    pol = load_policy()
    socket = f"lt-bench-{os.getpid()}"
    backend = Backend(socket)
    work = Path(tempfile.mkdtemp(prefix="lt-bench-latency-"))
    from_mtime, from_stamp = [], []
    rng = random.Random(args.seed)
    try:
        for n in range(args.trials):
            # a random extra delay, so the turn ends at a random phase of the poll interval (as real turns do)
            delay = args.reply_delay + rng.uniform(0, pol.poll_interval_s)
            with RehearsalServer(scenario(delay)) as server:
                lat, stamp = one_trial(backend, server, work, n)
            from_mtime.append(lat)
            from_stamp.append(stamp)
            print(f"trial {n + 1:2d}: last record written -> DONE {lat * 1000:4.0f} ms "
                  f"(from its timestamp {stamp * 1000:4.0f} ms)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        import subprocess
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
    med = statistics.median(from_mtime)
    print(f"DONE latency: median {med * 1000:.0f} ms, min {min(from_mtime) * 1000:.0f} ms, "
          f"max {max(from_mtime) * 1000:.0f} ms over {len(from_mtime)} trials "
          f"(poll_interval_s {pol.poll_interval_s}, done_stable_ticks {pol.done_stable_ticks}; load average "
          f"{os.getloadavg()[0]:.1f})")
    print(f"LATENCY_BENCH: median {med:.3f} s, goal < {GOAL_S} s: {'met' if med < GOAL_S else 'NOT met'}")
    return 0 if med < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
