"""Benchmark of DONE latency on the real CLI: from the turn's last transcript record to
poll's DONE exit, over ``--trials`` trials (default 10), median printed beside the poll interval and the
stability window in force (goal: median under 1 s with default settings).

Each trial boots a fresh ``claude`` in tmux against the rehearsal server (scenario: Write the marker, wait
``--reply-delay`` s, "DONE: ok"), sends the task, starts ``poll`` at once, and when poll returns DONE compares its
wall-clock time with the newest ``timestamp`` in the transcript (the turn_duration record). Needs tmux and the
pinned CLI. Usage: ``python benchmarks/latency.py [--trials 10] [--reply-delay 2]``
"""
from __future__ import annotations

import argparse
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
from live_trial.rehearsal.config import seed_config  # noqa: E402
from live_trial.rehearsal.server import RehearsalServer, rehearsal_env  # noqa: E402
from live_trial.session import boot
from live_trial.session.backend import Backend  # noqa: E402
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records
from live_trial.transcript.records import record_time  # noqa: E402
from live_trial.trial.poll import PollConfig, poll  # noqa: E402


def scenario(delay_s: float) -> dict:
    return {"side_query_text": "Latency", "rules": [
        {"id": "write", "when": {"step": 0}, "reply": {"content": [
            {"tool_use": {"name": "Write", "input": {
                "file_path": "{{re:Completion marker: *(/\\S+/out/status\\.json)}}", "content": "{}\n"}}}]}},
        {"id": "done", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: ok"}], "delay_s": delay_s}}]}


def wait_for(fn, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {what}")


def one_trial(backend: Backend, server: RehearsalServer, work: Path, n: int) -> tuple[float, str]:
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
        backend.paste_file(session, task)
        time.sleep(0.3)
        backend.send_keys(session, "Enter")
        pol = load_policy({}).with_overrides(stall_limit_s=120)
        cfg = PollConfig(marker=marker, session=session, session_id=sid, cwd=cwd, config_dir=config,
                         state_file=work / f"poll-{n}.json", policy=pol)
        result = poll(cfg, backend)
        done_at = time.time()
        if result.exit != "DONE":
            raise SystemExit(f"trial {n}: poll ended {result.exit} ({result.reason}); tail: {result.capture_tail}")
        records = read_records(locate(sid, cwd, config)).records
        last = max(t for t in (record_time(r) for r in records) if t is not None)
        return done_at - last, result.reason
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
    backend = Backend(os.environ.get("LIVE_TRIAL_SOCKET") or f"lt-bench-{os.getpid()}")
    work = Path(tempfile.mkdtemp(prefix="lt-bench-latency-"))
    latencies = []
    rng = random.Random(args.seed)
    try:
        for n in range(args.trials):
            # a random extra delay, so the turn ends at a random phase of the poll interval (as real turns do)
            delay = args.reply_delay + rng.uniform(0, pol.poll_interval_s)
            with RehearsalServer(scenario(delay)) as server:
                lat, _ = one_trial(backend, server, work, n)
            latencies.append(lat)
            print(f"trial {n + 1:2d}: last record -> DONE {lat * 1000:.0f} ms", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"median {statistics.median(latencies) * 1000:.0f} ms, min {min(latencies) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms over {len(latencies)} trials "
          f"(poll_interval_s {pol.poll_interval_s}, done_stable_ticks {pol.done_stable_ticks}; goal: median < 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
