"""Benchmark of ``report``: the page of a trial whose transcript is large.

Generates a workdir with a schema-valid verdict, a trial log of 2,000 state changes and a transcript of ``--size-mb``
MB (tool calls whose results are 20 KB each, so most of the text is cut on the page), then times
:func:`live_trial.report.page.write_report` against the baseline measured in the same run: reading the same
transcript once with :func:`live_trial.transcript.reader.read_records` (what any reader of the whole file pays).
Prints the ratio, the page's size (bounded by the cut texts and the entry limit) and the peak memory of the process.
Goals: the page within a few times one plain read of a transcript under the full-read limit (64 MB; a small file's
ratio is larger: the template and the 2,000-state timeline are a fixed cost of about 0.1 s), and, above that limit,
a time that stops growing with the file (only its tail is read).

Usage: ``python benchmarks/report.py [--size-mb 32] [--repeat 3]``
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def generate(base: Path, size_mb: int) -> Path:
    """Write the workdir; return it."""
    wd = base / "eval-log" / "bench" / "big" / "live-trial" / "20261201T100000-beef"
    (wd / "out").mkdir(parents=True)
    (wd / "trial-state.json").write_text(json.dumps({"target": "bench:big", "started_at": _at(0), "phase": "finished"}))
    verdict = {"schema_version": "live-trial-verdict/1", "target": "bench:big", "plugin": "bench", "skill": "big",
               "run_id": wd.name, "tier": "live", "downgrade_reason": None, "proof": False, "blocked": False,
               "launch": "PASS", "completion": "PASS", "goal_result": "PASS", "goal_blockers": [], "evidence": [],
               "nudge_count": 0, "gate_response_count": 0, "gate_kind": "rescue", "gate_contract_evidence": [],
               "poll_exit": "DONE", "overall": {"verdict": "PASS", "reasons": []},
               "skill_dir_tree_sha": "sha256:" + "a" * 64, "closure_plugins": ["bench"], "transcript_sha256": None,
               "session_id": None, "scenario_id": "sha256:" + "b" * 64, "scenario_origin": "live",
               "environment": {"claude_version": "2.1.197", "tmux_version": "3.3a", "python": "3", "platform": "x"},
               "requested_model": None, "actual_model": [], "notes": [], "started_at": _at(0),
               "written_at": _at(4000), "summary": "big ran to the end."}
    (wd / "verdict.json").write_text(json.dumps(verdict))
    with open(wd / "trial-log.jsonl", "w") as fh:
        for i in range(2000):
            state = ("BUSY_TOOL", "BUSY_GENERATING")[i % 2]
            fh.write(json.dumps({"at": _at(10 + i), "step": "state", "decision": state, "tool": "Bash"}) + "\n")
        fh.write(json.dumps({"at": _at(2100), "step": "poll", "decision": "DONE"}) + "\n")
    output = "x" * 20_000
    with open(wd / "transcript.jsonl", "w") as fh:
        i = 0
        while fh.tell() < size_mb * 1024 * 1024:
            use = {"type": "assistant", "uuid": f"a-{i}", "parentUuid": f"r-{i - 1}" if i else None,
                   "timestamp": _at(10 + i * 0.01), "message": {"role": "assistant", "content": [
                       {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": f"step {i}"}}]}}
            result = {"type": "user", "uuid": f"r-{i}", "parentUuid": f"a-{i}", "timestamp": _at(10 + i * 0.01 + 0.005),
                      "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                               "content": output}]}}
            fh.write(json.dumps(use) + "\n" + json.dumps(result) + "\n")
            i += 1
    (wd / "pane.txt").write_text("line\n" * 5000)
    return wd


def main() -> int:
    from live_trial.report.page import write_report
    from live_trial.transcript.reader import read_records

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lt-bench-report-") as tmp:
        wd = generate(Path(tmp), args.size_mb)
        size = (wd / "transcript.jsonl").stat().st_size
        base, page = [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            read_records(wd / "transcript.jsonl")
            base.append(time.perf_counter() - t)
            t = time.perf_counter()
            path = write_report(wd)
            page.append(time.perf_counter() - t)
        b, p = statistics.median(base), statistics.median(page)
        print(f"transcript {size / 1e6:.1f} MB; baseline read_records {b:.3f}s; report {p:.3f}s; "
              f"ratio {p / b:.2f}; page {path.stat().st_size / 1e6:.2f} MB; "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
