"""Benchmark of the steps that read whole transcripts, on huge ones (ARCHITECTURE invariant 9).

Generates its files in a temporary folder (about 2.6 GB; ``df -h`` first) and deletes them at the end.

- ``verdict`` and the launch check on a ``--turn-mb`` (default 500) MB one-turn transcript (a prompt, the Skill call,
  a Write of half that size and its result, the end of the turn, in the 2.1.197 CLI's key order). Each runs in a
  child process that reports its own time and its peak memory (``resource.getrusage`` ``ru_maxrss``); the baseline
  is one ``hashlib`` sha256 pass over the same file in a child process. Goals: peak memory < 200 MB; time <= 1.5x
  the sha256 pass. ``verdict`` is the real command (``python -m live_trial verdict``, timed inside the child after its
  modules are imported, so interpreter start-up and imports are left out); the launch check is :func:`live_trial.transcript.skill_calls.skill_call_records` +
  :func:`~live_trial.transcript.skill_calls.skill_calls`.
- ``plan`` with ``--plan-gb`` (default 2) GB of reused transcripts: ``--skills`` (default 8) live skills, each with
  a live PASS verdict whose transcript is an equal share of the total. Times (median of ``--repeat``, in-process,
  a new PluginIndex each run): plan over the same verdicts without their transcripts (the baseline: everything
  but the transcripts), plan's first run over the transcripts (it reads them), and its second run (the transcript
  cache in the eval root answers). Goal: second run <= 1.5x plan with none. Plan with no verdict at all is printed
  for information.

Prints ratios, asserts nothing. Usage: ``python benchmarks/huge.py [--turn-mb 500] [--plan-gb 2] [--keep DIR]``
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from goals import Goals  # noqa: E402

from live_trial.transcript.builder import TranscriptBuilder, cli_key_order  # noqa: E402

MODEL = "claude-opus-4-8"
CHILD_PRELUDE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
"""


def write_turn(path: Path, size_mb: int, skill: str) -> int:
    """A one-turn transcript of about ``size_mb`` MB: prompt, Skill call and result, a Write of half of it and its
    result (the content twice, as the CLI writes it), the final text and turn_duration. Returns its size."""
    b = TranscriptBuilder(model=MODEL, seed=21)
    b.prompt("Run the skill.")
    tid = b.tool_use("Skill", {"skill": skill})
    b.tool_result(tid, f"Launching skill: {skill}")
    half = (size_mb << 20) // 2
    line = "generated line with \"quotes\", a tab\t and unicode \u00e9\n"
    content = line * (half // len(line.encode()) + 1)
    wid = b.tool_use("Write", {"file_path": "/tmp/project/out/big.txt", "content": content})
    b.tool_result(wid, "File created successfully at: /tmp/project/out/big.txt",
                  result={"type": "create", "filePath": "/tmp/project/out/big.txt", "content": content,
                          "structuredPatch": [], "originalFile": None})
    b.text("DONE: ok")
    b.turn_duration()
    with open(path, "w", encoding="utf-8") as fh:
        for rec in b.records:
            fh.write(json.dumps(cli_key_order(rec), ensure_ascii=False) + "\n")
    return path.stat().st_size


def child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object on its last line."""
    proc = subprocess.run([sys.executable, "-c", CHILD_PRELUDE.format(root=str(ROOT)) + code], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sha256_pass(path: Path) -> dict:
    return child(f"""
import hashlib
t0 = time.perf_counter()
with open({str(path)!r}, "rb") as fh:
    hashlib.file_digest(fh, "sha256")
print(json.dumps({{"s": time.perf_counter() - t0, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
""")


def verdict_run(wd: Path, plugins: Path) -> dict:
    skill_dir = plugins / "hello" / "skills" / "greet"
    argv = ["verdict", "--workdir", str(wd), "--target-skill", "hello:greet", "--skill-dir", str(skill_dir),
            "--plugins-root", str(plugins), "--goal-result", "FAIL", "--goal-blocker", "benchmark",
            "--claude-version", "2.1.197", "--json"]      # launch and completion: read from the workdir's records
    return child(f"""
import contextlib, io
from live_trial.cli.main import build_parser, main
import live_trial.acceptance.verdict, live_trial.closure.pinning, live_trial.session.backend  # imports are not timed
build_parser()
t0 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
s = time.perf_counter() - t0
doc = json.loads(out.getvalue())
print(json.dumps({{"s": s, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "code": code,
                  "sha": doc["verdict"]["transcript_sha256"][:19], "model": doc["verdict"]["actual_model"]}}))
""")


def launch_check(path: Path) -> dict:
    return child(f"""
from pathlib import Path
from live_trial.transcript.skill_calls import skill_call_records, skill_calls
t0 = time.perf_counter()
calls = skill_calls(skill_call_records(Path({str(path)!r})))
print(json.dumps({{"s": time.perf_counter() - t0, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "calls": calls}}))
""")


def turn_section(base: Path, size_mb: int, repeat: int) -> None:
    from tests.unit.fakes import write_state

    plugins = base / "plugins"
    shutil.copytree(ROOT / "examples" / "plugins", plugins)
    wd = base / "eval-log" / "hello" / "greet" / "live-trial" / "20261130T101500-abcd"
    wd.mkdir(parents=True)
    write_state(wd, "hello", "greet")
    t0 = time.perf_counter()                 # written by a child: this process stays small (its children's
    size = child(f"""                        # ru_maxrss starts from this process's peak on Linux)
from pathlib import Path
sys.path.insert(0, {str(ROOT / "benchmarks")!r})
from huge import write_turn
print(json.dumps(write_turn(Path({str(wd / "transcript.jsonl")!r}), {size_mb}, "hello:greet")))
""")
    print(f"one-turn transcript: {size / (1 << 20):.0f} MB written in {time.perf_counter() - t0:.1f}s")
    sha256_pass(wd / "transcript.jsonl")                      # warm the page cache
    rows: dict[str, list[dict]] = {"sha256": [], "verdict": [], "launch": []}
    for _ in range(repeat):                                  # interleaved, so other load hits all alike
        rows["sha256"].append(sha256_pass(wd / "transcript.jsonl"))
        rows["verdict"].append(verdict_run(wd, plugins))
        (wd / "verdict.json").unlink()
        rows["launch"].append(launch_check(wd / "transcript.jsonl"))
    base_s = statistics.median(r["s"] for r in rows["sha256"])
    print(f"  one sha256 pass: {base_s:.2f}s (peak {max(r['rss_mb'] for r in rows['sha256']):.0f} MB)")
    for name, note in (("verdict", "actual model {model}"), ("launch", "Skill calls {calls}")):
        s = statistics.median(r["s"] for r in rows[name])
        rss = max(r["rss_mb"] for r in rows[name])
        print(f"  {name:7s}: {s:.2f}s, peak memory {rss:.0f} MB ({note.format(**rows[name][-1])}); ratio to sha256 "
              f"{s / base_s:.2f}   (goals: <= 1.5, peak < 200 MB): {GOALS.check(name, s / base_s <= 1.5 and rss < 200)}")


GOALS = Goals("HUGE_BENCH")


def plan_section(base: Path, total_gb: float, skills: int, repeat: int) -> None:
    from live_trial.acceptance.plan import plan
    from live_trial.acceptance.verdict import write_trial_verdict
    from live_trial.closure.index import PluginIndex
    from live_trial.closure.target import resolve_target

    plugins, eval_root, none_root = base / "plan-plugins", base / "plan-eval", base / "plan-eval-none"
    pdir = plugins / "bench"
    (pdir / ".claude-plugin").mkdir(parents=True)
    (pdir / ".claude-plugin" / "plugin.json").write_text('{"name": "bench"}')
    for i in range(skills):
        (pdir / "skills" / f"s{i}").mkdir(parents=True)
        (pdir / "skills" / f"s{i}" / "SKILL.md").write_text(f"---\nname: s{i}\ndescription: skill {i}\n"
                                                             f"allowed-tools: [Skill, Write]\n---\nbody\n")
    share_mb = int(total_gb * 1024 / skills)
    t0 = time.perf_counter()
    first = base / "plan-transcript.jsonl"
    write_turn(first, share_mb, "bench:s0")
    index = PluginIndex(plugins)
    for i in range(skills):
        wd = eval_root / "bench" / f"s{i}" / "live-trial" / "20261130T101500-abcd"
        wd.mkdir(parents=True)
        shutil.copyfile(first, wd / "transcript.jsonl")
        write_trial_verdict(workdir=wd, target=resolve_target(f"bench:s{i}", index), plugins_root=index,
                            session_id="s", requested_model=None, launch="PASS", completion="PASS",
                            goal_result="PASS", poll_exit="DONE", claude_version="2.1.197", tmux_version="3.3a")
    first.unlink()
    for verdict in eval_root.rglob("verdict.json"):       # the same verdicts, without their transcripts
        (none_root / verdict.parent.relative_to(eval_root)).mkdir(parents=True)
        shutil.copyfile(verdict, none_root / verdict.relative_to(eval_root))
    total = sum(p.stat().st_size for p in eval_root.rglob("transcript.jsonl"))
    print(f"plan: {skills} live skills, {total / (1 << 30):.2f} GB of transcripts of reusable PASS verdicts "
          f"(set up in {time.perf_counter() - t0:.0f}s)")
    time.sleep(2.5)          # the transcripts are older than the transcript cache's racy window when plan reads them

    def once(root: Path) -> tuple[float, dict]:
        t = time.perf_counter()
        doc = plan([pdir], root, max_live_trials=skills, watches=[])
        return time.perf_counter() - t, doc

    once(base / "plan-eval-empty")
    empty = statistics.median(once(base / "plan-eval-empty")[0] for _ in range(repeat))
    once(none_root)
    none = statistics.median(once(none_root)[0] for _ in range(repeat))
    first_s, doc = once(eval_root)
    reused = doc["counts"]["reuse"]
    second = statistics.median(once(eval_root)[0] for _ in range(repeat))
    print(f"  plan with the same verdicts and no transcript: {none * 1000:.1f} ms (with no verdict at all: "
          f"{empty * 1000:.1f} ms)")
    print(f"  with the transcripts: first run {first_s:.2f}s (reads them; {reused} reused), second run "
          f"{second * 1000:.1f} ms (transcript cache)")
    print(f"  ratio second run/no transcript: {second / none:.2f}   (goal: <= 1.5): "
          f"{GOALS.check('plan with transcripts', second / none <= 1.5)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turn-mb", type=int, default=500)
    ap.add_argument("--plan-gb", type=float, default=2.0)
    ap.add_argument("--skills", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="generate into this folder and keep it")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="lt-bench-huge-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"disk where the files go: {shutil.disk_usage(base).free / (1 << 30):.0f} GB free")
    try:
        turn_section(base, args.turn_mb, args.repeat)
        plan_section(base, args.plan_gb, args.skills, max(3, args.repeat))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return GOALS.exit_code()


if __name__ == "__main__":
    sys.exit(main())
