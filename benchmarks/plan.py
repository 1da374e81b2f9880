"""Benchmark of ``plan``: a generated plugin tree with 200 skills and 5,000 files.

The goal is on processes, as a person or a script runs them: ``live-trial plan --json`` (the console script,
bytecode compiled as an install leaves it) against one ``git hash-object --stdin-paths`` process over the same files,
medians of ``--repeat`` alternating runs (goal: ratio <= 3 on the ``fresh`` case). Two plan cases: ``fresh`` (no
verdicts: every live skill's behaviour closure is hashed) and ``reuse`` (a PASS verdict with a transcript for every
skill: closures + verdict checks + transcript hashes; the baseline then also hashes the verdicts and transcripts).
For information, plan in-process (a new PluginIndex each run, so no cached hashes) against the same git process,
and the floor (``benchmarks/floor.py``): the interpreter's start, jsonschema's import and the plan's schema check,
which every plan process pays before its own imports and work.

CPU-time ratios are printed too: on a shared machine they move less with other people's load than wall time.

Usage: ``python benchmarks/plan.py [--repeat 9] [--keep DIR]``
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import floor  # noqa: E402

SKILLS = 200
FILES = 5000


def generate(base: Path) -> list[Path]:
    """Write the tree; return every file in it (exactly FILES)."""
    plugins = base / "plugins"
    bench, dep = plugins / "bench", plugins / "bench-dep"
    files: list[Path] = []

    def put(path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)

    put(bench / ".claude-plugin" / "plugin.json", json.dumps({"name": "bench", "dependencies": ["bench-dep"]}))
    put(bench / "references" / "guide.md", "# shared guide\n" * 20)
    put(dep / ".claude-plugin" / "plugin.json", json.dumps({"name": "bench-dep"}))
    put(dep / "hooks" / "hooks.json", json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/start.py"}]}]}}))
    put(dep / "hooks" / "start.py", "print('{}')\n")
    per_skill = 24  # SKILL.md + 22 scripts + 1 prompt
    for i in range(SKILLS):
        sd = bench / "skills" / f"skill-{i:03d}"
        tools = "[Skill, Write]" if i % 4 else "[Read, Bash]"   # 150 live, 50 fork
        put(sd / "SKILL.md", f"---\nname: skill-{i:03d}\ndescription: generated skill {i}\nallowed-tools: {tools}\n"
                             f"script_refs: [scripts/main.py]\nreference_refs: [../../references/guide.md]\n---\n"
                             + f"Step {i}.\n" * 30)
        for j in range(22):
            name = "main.py" if j == 0 else f"s{j:02d}.py"
            put(sd / "scripts" / name, f"# skill {i} script {j}\n" + "x = 1\n" * (20 + j))
        put(sd / "prompts" / "p.md", f"prompt {i}\n" * 10)
    n = 0
    while len(files) < FILES:
        put(dep / ("scripts" if n % 3 else "schemas") / f"f{n:04d}.txt", f"dep file {n}\n" * 8)
        n += 1
    assert len(files) == FILES, len(files)
    assert per_skill * SKILLS <= FILES
    return files


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def git_hash(paths: list[Path]) -> tuple[float, float]:
    """(wall s, CPU s) of one ``git hash-object --stdin-paths`` over ``paths``."""
    data = ("\n".join(str(p) for p in paths) + "\n").encode()
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(["git", "hash-object", "--stdin-paths"], input=data, capture_output=True, check=True)
    elapsed, cpu = time.perf_counter() - t0, _children_cpu() - c0
    assert proc.stdout.count(b"\n") == len(paths)
    return elapsed, cpu


def plan_once(plugins: Path, eval_root: Path) -> tuple[float, float, dict]:
    """(wall s, CPU s, plan) of one in-process plan with a fresh PluginIndex (no cached hashes)."""
    from live_trial.acceptance.plan import plan

    c0, t0 = time.process_time(), time.perf_counter()
    doc = plan([plugins / "bench"], eval_root, max_live_trials=2, max_concurrency=2, watches=[])
    return time.perf_counter() - t0, time.process_time() - c0, doc


def add_verdicts(plugins: Path, eval_root: Path) -> list[Path]:
    """A live PASS verdict + transcript for every live skill (as a trial would leave them); return the files."""
    from live_trial.acceptance.verdict import write_trial_verdict
    from live_trial.closure.index import PluginIndex
    from live_trial.closure.target import resolve_target
    from live_trial.transcript.builder import TranscriptBuilder

    index = PluginIndex(plugins)
    out = []
    for sd in sorted((plugins / "bench" / "skills").iterdir()):
        t = resolve_target(f"bench:{sd.name}", index)
        wd = eval_root / "bench" / sd.name / "live-trial" / "20261130T101500-abcd"
        wd.mkdir(parents=True)
        b = TranscriptBuilder()
        b.turn("run", "DONE: ok", tools=3)
        b.write(wd / "transcript.jsonl")
        write_trial_verdict(workdir=wd, target=t, plugins_root=index, session_id="s", requested_model=None,
                                    launch="PASS", completion="PASS", goal_result="PASS", poll_exit="DONE",
                                    claude_version="bench", tmux_version="bench")
        out += [wd / "verdict.json", wd / "transcript.jsonl"]
    return out


def plan_process(plugins: Path, eval_root: Path, env: dict) -> tuple[float, float]:
    """(wall s, CPU s) of one ``live-trial plan --json`` process."""
    script = Path(sys.executable).with_name("live-trial")
    argv = ([str(script)] if script.exists() else [sys.executable, "-m", "live_trial"]) + [
        "plan", "--plugin-dir", str(plugins / "bench"), "--eval-root", str(eval_root), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"live-trial plan failed: {proc.stderr.read().decode()[-400:]}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def measure_processes(label: str, plugins: Path, eval_root: Path, paths: list[Path], repeat: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "live_trial")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    plan_process(plugins, eval_root, env)          # warm the page cache for both
    git_hash(paths)
    pw, pc, gw, gc = [], [], [], []
    for _ in range(repeat):
        wall, cpu = plan_process(plugins, eval_root, env)
        pw.append(wall)
        pc.append(cpu)
        wall, cpu = git_hash(paths)
        gw.append(wall)
        gc.append(cpu)
    p, g = statistics.median(pw), statistics.median(gw)
    cpu_ratio = statistics.median(pc) / max(statistics.median(gc), 1e-9)
    print(f"PLAN_BENCH {label:5s} as processes: live-trial plan {p * 1000:6.1f} ms, git hash-object {g * 1000:6.1f} ms"
          f" -> ratio {p / g:4.2f} wall (median of {repeat}), {cpu_ratio:4.2f} CPU; goal <= 3"
          + (f": {'met' if p / g <= 3 else 'NOT met'}" if label == "fresh" else " (reported)"))
    if label == "fresh":
        _floor(plugins, eval_root, g, env)
    return {"case": label, "ratio": p / g}


def _floor(plugins: Path, eval_root: Path, git_s: float, env: dict) -> None:
    """Print what any plan process pays before planning (the interpreter, jsonschema's import) plus checking this
    plan against its schema (ARCHITECTURE invariant 4), and the least ratio that leaves against git."""
    from live_trial.acceptance.plan import SCHEMA
    from live_trial.jsonfile import validate

    start_s, _ = floor.describe("plan", ("jsonschema",), env=env)
    doc = plan_once(plugins, eval_root)[2]
    validate(doc, SCHEMA, what="plan")       # the validator is built once per process; time the check itself
    checks = []
    for _ in range(5):
        t0 = time.perf_counter()
        validate(doc, SCHEMA, what="plan")
        checks.append(time.perf_counter() - t0)
    check_s = statistics.median(checks)
    print(f"FLOOR plan: + checking this plan against {SCHEMA}: {check_s * 1000:.1f} ms -> "
          f"{(start_s + check_s) * 1000:.1f} ms = {(start_s + check_s) / git_s:.2f}x git before any planning; "
          f"the goal leaves {max(0.0, 3 * git_s - start_s - check_s) * 1000:.1f} ms for the plan's own imports and "
          f"work (in-process plan below)")


def measure(label: str, plugins: Path, eval_root: Path, paths: list[Path], repeat: int) -> dict:
    git_hash(paths)  # warm the page cache for both
    plan_once(plugins, eval_root)
    plan_t, git_t, plan_c, git_c = [], [], [], []
    for _ in range(repeat):
        wall, cpu = git_hash(paths)
        git_t.append(wall)
        git_c.append(cpu)
        wall, cpu, doc = plan_once(plugins, eval_root)
        plan_t.append(wall)
        plan_c.append(cpu)
    p, g = statistics.median(plan_t), statistics.median(git_t)
    ratio, best = p / g, min(plan_t) / min(git_t)
    cpu_ratio = statistics.median(plan_c) / max(statistics.median(git_c), 1e-9)
    ok = ratio <= 1.5 and p < 2.0
    print(f"for information, in-process: {label:6s} files={len(paths):5d} plan={p * 1000:6.1f} ms  git hash-object="
          f"{g * 1000:6.1f} ms  ratio(median wall)={ratio:4.2f}  ratio(min wall)={best:4.2f}  "
          f"ratio(median CPU)={cpu_ratio:4.2f}  {doc['counts']}")
    return {"case": label, "plan_s": p, "git_s": g, "ratio": ratio, "ok": ok}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="lt-bench-plan-"))
    try:
        files = generate(base)
        plugins, eval_root = base / "plugins", base / "eval-log"
        print(f"tree: {SKILLS} skills, {len(files)} files under {plugins}")
        print(f"load average {os.getloadavg()[0]:.1f}")
        results = [measure_processes("fresh", plugins, eval_root, files, args.repeat)]
        measure("fresh", plugins, eval_root, files, args.repeat)
        extra = add_verdicts(plugins, eval_root)
        measure_processes("reuse", plugins, eval_root, files + extra, args.repeat)
        measure("reuse", plugins, eval_root, files + extra, args.repeat)
        return 0 if results[0]["ratio"] <= 3 else 1  # the goal is on the fresh tree; reuse is reported
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
