"""Benchmark of trials side by side: one rehearsal trial, then 8 at once, against the floor the claude processes set.

Each trial is the example ``hello:greet`` with ``examples/scenarios/greet-happy.yaml`` (the real CLI in tmux, the
scripted model, the evaluator ``claude -p``), run as a user runs it: ``live-trial run … --json``. Measured per run:

- wall time until every trial ended;
- the harness's own CPU: the ``live-trial`` Python process itself, all its threads (rehearsal server, poll), read
  from ``/proc/<pid>/stat`` once it exited and before it is reaped (exact); goal <= 0.15 s per trial;
- its children's CPU (``cutime + cstime`` of the same record, exact): the evaluator ``claude -p``, the plugin
  validator when it runs, and the tmux and git clients; split by sampling ``/proc`` every ``--sample`` s (the
  evaluator and the validator by their command lines; a sample misses what a process used after the last look);
- the trial CLIs' own CPU (the ``claude`` processes tmux runs, not children of the harness), sampled the same way;
- the floor: all claude processes' CPU divided by the cores, the least wall time 8 trials at once could take.

Cases: ``1``: one trial, ``--repeat`` times (median); ``8 processes``: 8 ``live-trial run`` started together;
``8 in one``: ``live-trial run --plan`` with 8 entries and ``--max-concurrency 8`` (one harness process for all).
Last, the floor of one process (``benchmarks/floor.py``): the interpreter's start and the imports of jsonschema,
libtmux and pyyaml, paid once per ``live-trial`` process before any trial's own work.
The plugin validator's answers are kept between runs (``session.plugin_check``): the first trial starts with an
empty cache and pays for the validator; its cost is printed separately.

Usage: ``python benchmarks/parallel.py [--repeat 3] [--trials 8]``
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import floor  # noqa: E402
from goals import Goals  # noqa: E402

SCENARIO = ROOT / "examples" / "scenarios" / "greet-happy.yaml"
PLUGINS = ROOT / "examples" / "plugins"
TICK = os.sysconf("SC_CLK_TCK")
GOAL_CPU_S = 0.15


def _stat(pid: int) -> tuple[float, float] | None:
    """(own CPU s, waited-for children's CPU s) of a process, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK


class Sampler:
    """Samples every process's CPU by its command line every ``interval_s``: claude trial CLIs, the evaluator
    (``claude -p``), the validator (``claude plugin validate``). Keeps the last value seen per pid."""

    def __init__(self, claude_exe: str, since_pid_start: float, interval_s: float) -> None:
        self.claude_exe, self.interval_s = claude_exe, interval_s
        self.seen: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._boot = float(Path("/proc/stat").read_text().split("btime ")[1].split()[0])
        self._since = since_pid_start
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _kind(self, pid: int) -> str | None:
        try:
            if os.path.realpath(f"/proc/{pid}/exe") != self.claude_exe:
                return None
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return None
        if b"validate" in argv and b"plugin" in argv:
            return "validator"
        if b"-p" in argv or b"--print" in argv:
            return "evaluator"
        return "trial CLI"

    def _run(self) -> None:
        while not self._stop.is_set():
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                pid = int(entry.name)
                kind = self.seen[pid][0] if pid in self.seen else self._kind(pid)
                if kind is None:
                    continue
                st = _stat(pid)
                if st is not None:
                    self.seen[pid] = (kind, st[0])
            self._stop.wait(self.interval_s)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def total(self, kind: str) -> float:
        return sum(cpu for k, cpu in self.seen.values() if k == kind)

    def count(self, kind: str) -> int:
        return sum(1 for k, _ in self.seen.values() if k == kind)


def _run_processes(argvs: list[list[str]], env: dict, cwd: Path) -> tuple[float, float, float, list[dict]]:
    """Start every argv at once; return (wall s, own CPU s summed, children CPU s summed, the JSON outputs)."""
    t0 = time.monotonic()
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd) for a in argvs]
    own = children = 0.0
    outputs = []
    for proc in procs:
        out = proc.stdout.read()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)     # exited, not reaped: its final CPU is readable
        st = _stat(proc.pid) or (0.0, 0.0)
        own, children = own + st[0], children + st[1]
        proc.wait()
        try:
            outputs.append(json.loads(out.decode().strip().splitlines()[-1]))
        except (ValueError, IndexError):
            outputs.append({"status": "unreadable output", "raw": out.decode()[-300:]})
    return time.monotonic() - t0, own, children, outputs


def _plan_file(path: Path, eval_root: Path, trials: int) -> Path:
    entry = {"target": "hello:greet", "plugins_root": str(PLUGINS), "proof": False, "args": "World"}
    doc = {"schema_version": "plan/1", "generated_at": "2026-12-01T00:00:00Z", "profile": "incremental", "proof": False,
           "reuse_rehearsal": False, "eval_root": str(eval_root), "max_live_trials": trials, "max_concurrency": trials,
           "skills": [], "live_batches": [[dict(entry) for _ in range(trials)]], "deferred": [],
           "counts": {k: 0 for k in ("reuse", "run", "defer", "watching", "not_live", "refused")}}
    path.write_text(json.dumps(doc))
    return path


def measure(label: str, argvs: list[list[str]], trials: int, env: dict, work: Path, claude_exe: str,
            sample_s: float) -> dict:
    with Sampler(claude_exe, time.time(), sample_s) as sampler:
        wall, own, children, outputs = _run_processes(argvs, env, work)
    statuses = [o.get("status") for o in outputs for o in (o.get("trials") or [o])]
    cli, evaluator, validator = sampler.total("trial CLI"), sampler.total("evaluator"), sampler.total("validator")
    other = max(0.0, children - evaluator - validator)
    floor = (cli + evaluator + validator) / (os.cpu_count() or 1)
    row = {"label": label, "trials": trials, "wall": wall, "own_per_trial": own / trials, "children": children,
           "evaluator": evaluator, "validator": validator, "validators": sampler.count("validator"),
           "other_children": other, "trial_cli": cli, "floor": floor, "statuses": statuses}
    print(f"{label:12s} wall {wall:6.2f} s  harness own CPU {own / trials:5.3f} s/trial  children {children:5.2f} s "
          f"(evaluator {evaluator:4.2f}, validator {validator:4.2f} in {row['validators']} runs, tmux/git/other "
          f"{other:4.2f})  trial CLIs {cli:5.2f} s  floor {floor:5.2f} s  verdicts {statuses}", flush=True)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--sample", type=float, default=0.1, help="seconds between /proc samples")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from live_trial.session.claude_bin import find_claude

    claude_exe = os.path.realpath(find_claude().path)
    work = Path(tempfile.mkdtemp(prefix="lt-bench-parallel-"))
    socket = f"lt-bench-par-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(LIVE_TRIAL_SOCKET=socket, LIVE_TRIAL_CACHE_DIR=str(work / "cache"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "live_trial")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    script = Path(sys.executable).with_name("live-trial")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "live_trial"]

    def run_argv(n: str) -> list[str]:
        return cmd + ["run", "hello:greet", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIO),
                      "--args", "World", "--eval-root", str(work / f"eval-{n}"), "--json"]
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; claude {claude_exe}")
    try:
        cold = measure("1 (cold)", [run_argv("cold")], 1, env, work, claude_exe, args.sample)
        ones = [measure("1", [run_argv(f"one-{i}")], 1, env, work, claude_exe, args.sample) for i in range(args.repeat)]
        many = measure(f"{args.trials} processes", [run_argv(f"many-{i}") for i in range(args.trials)], args.trials,
                       env, work, claude_exe, args.sample)
        plan = _plan_file(work / "plan.json", work / "eval-plan", args.trials)
        together = measure(f"{args.trials} in one", [cmd + ["run", "--plan", str(plan), "--rehearsal", str(SCENARIO),
                                                            "--max-concurrency", str(args.trials), "--json"]],
                           args.trials, env, work, claude_exe, args.sample)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    one_wall = statistics.median(r["wall"] for r in ones)
    one_own = statistics.median(r["own_per_trial"] for r in ones)
    print(f"validator: {cold['validator']:.2f} s CPU in the first (cold) trial, "
          f"{sum(r['validators'] for r in ones)} runs in the {len(ones)} trials after it (its answer was kept)")
    for row in (many, together):
        print(f"PARALLEL_BENCH {row['label']}: wall {row['wall']:.2f} s = {row['wall'] / one_wall:.2f}x one trial "
              f"({one_wall:.2f} s) and {row['wall'] / max(row['floor'], 1e-9):.2f}x the floor of its claude processes "
              f"({row['floor']:.2f} s on {os.cpu_count()} cores)")
    goals = Goals("PARALLEL_BENCH")
    for label, value in (("1", one_own), (many["label"], many["own_per_trial"]),
                         (together["label"], together["own_per_trial"])):
        print(f"PARALLEL_BENCH harness own CPU per trial ({label}): {value:.3f} s (goal <= {GOAL_CPU_S}): "
              f"{goals.check(f'CPU per trial ({label})', value <= GOAL_CPU_S)}")
    _, start_cpu = floor.describe("parallel", ("jsonschema", "libtmux", "yaml"), env=env)
    print(f"FLOOR parallel: every `live-trial run` process pays {start_cpu:.3f} s CPU for python and the libraries a "
          f"trial uses before its own work; one process for {args.trials} trials pays it once "
          f"({start_cpu / args.trials:.3f} s per trial)")
    return goals.exit_code()


if __name__ == "__main__":
    sys.exit(main())
