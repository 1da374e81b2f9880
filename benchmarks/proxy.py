"""Benchmark of the recording proxy of ``run --record``: a response through the proxy (recording to a tape) against the
same server reached direct, in the same run (goal: at most 1.1x the direct time, or at most 20 ms added, whichever
allows more; README "Replaying a real trial offline").

The server is the rehearsal server (the Messages API and its SSE stream, as the CLI reads them). Each request is a
request body claude 2.1.332 really sent (tests/unit/tape/requests, 60 KB) and streams its answer; two answers are
timed: ``fast`` (a short answer sent at once: the proxy's own cost shows most) and ``streamed`` (a 1,500-character text
in 24 events 10 ms apart, as a model writes). Rounds alternate direct and proxied requests; the medians of the time to
the first byte and to the end of the response are compared. The tape the proxy writes (normalized, schema-checked,
appended) is written off the relaying thread, so it is not in the time a client waits; the benchmark checks that every
request was recorded.

Usage: ``python benchmarks/proxy.py [--rounds 40]``
"""
from __future__ import annotations

import argparse
import gzip
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from goals import Goals  # noqa: E402

from live_trial.rehearsal.server import RehearsalServer  # noqa: E402
from live_trial.tape.file import TapeRecorder  # noqa: E402
from live_trial.tape.normalize import Roots  # noqa: E402
from live_trial.tape.proxy import RecordingProxy  # noqa: E402

REQUEST = ROOT / "tests" / "unit" / "tape" / "requests" / "cli332-replayed.json.gz"
TEXT = "The inventory holds three items. " * 45
SCENARIO = {"name": "bench", "rules": [
    {"id": "streamed", "when": {"last_prompt": "streamed"},
     "reply": {"content": [{"text": TEXT}], "chunk_chars": 64, "chunk_delay_s": 0.01}},
    {"id": "fast", "reply": {"content": [{"text": "DONE: ok"}]}},
]}
RATIO_GOAL = 1.1
ADDED_GOAL_S = 0.020


def body_for(kind: str) -> bytes:
    """The CLI's request, asking for the ``kind`` answer."""
    body = json.loads(gzip.decompress(REQUEST.read_bytes()))
    body["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    body["messages"].append({"role": "user", "content": [{"type": "text", "text": f"answer {kind}"}]})
    return json.dumps(body).encode()


def once(port: int, body: bytes) -> tuple[float, float]:
    """``(first byte, end)`` in seconds for one POST /v1/messages on a new connection, as the CLI makes them."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/v1/messages?beta=true", body=body,
                 headers={"content-type": "application/json", "x-api-key": "sk-ant-api03-bench"})
    resp = conn.getresponse()
    first = None
    while True:
        piece = resp.read1(65536)
        if first is None:
            first = time.perf_counter() - started
        if not piece:
            break
    end = time.perf_counter() - started
    conn.close()
    assert resp.status == 200, resp.status
    return first or end, end


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    goals = Goals("proxy")
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp, RehearsalServer(SCENARIO) as server:
        recorder = TapeRecorder(Path(tmp) / "model-tape.jsonl", Roots.of(workdir=tmp))
        proxy = RecordingProxy(server.url, recorder.record, env={}).start()
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        try:
            for kind in ("fast", "streamed"):
                body = body_for(kind)
                for port in (server.port, proxy.port):      # warm-up: imports, validators, first connections
                    once(port, body)
                for n in range(args.rounds):
                    order = (("direct", server.port), ("proxy", proxy.port))
                    for way, port in (order if n % 2 == 0 else order[::-1]):
                        times.setdefault((kind, way), []).append(once(port, body))
        finally:
            proxy.stop()
        recorded = recorder.lines
    expected = 2 * (args.rounds + 1)
    load = os.getloadavg()[0]
    print(f"proxy: {args.rounds} rounds per answer, request body {len(body_for('fast')) // 1024} KiB, load {load:.2f}")
    for kind in ("fast", "streamed"):
        direct, proxied = times[(kind, "direct")], times[(kind, "proxy")]
        d_first, p_first = (statistics.median(t[0] for t in xs) for xs in (direct, proxied))
        d_end, p_end = (statistics.median(t[1] for t in xs) for xs in (direct, proxied))
        added = p_end - d_end
        ok = p_end <= max(RATIO_GOAL * d_end, d_end + ADDED_GOAL_S)
        print(f"{kind}: first byte {d_first * 1000:.1f} ms direct, {p_first * 1000:.1f} ms through the proxy; "
              f"whole response {d_end * 1000:.1f} ms direct, {p_end * 1000:.1f} ms through the proxy: "
              f"ratio {p_end / d_end:.2f}x, {added * 1000:+.1f} ms "
              f"(goal <= {RATIO_GOAL}x or <= {ADDED_GOAL_S * 1000:.0f} ms added) {goals.check(kind, ok)}")
    print(f"recorded: {recorded} of {expected} requests on the tape {goals.check('recorded', recorded == expected)}")
    return goals.exit_code()


if __name__ == "__main__":
    sys.exit(main())
