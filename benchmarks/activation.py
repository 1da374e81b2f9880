"""Benchmark of an activation case (README "Does it start by itself?"): a case of 10 prompts with repeats 2 (20
sessions, each its own boot, paste, turn and cleanup) at ``--max-concurrency 2``, against the floor it cannot go
under: 20 bare boots of the same CLI with the same plugin at the same concurrency, plus the scripted model's own time
(every reply waits ``DELAY_S``: 20 replies shared by 2 lanes). Goal: at most 1.5x.

(a) the bare boots: one raw ``tmux new-session`` per boot with the CLI, the plugin and the rehearsal environment, a
capture loop that answers the bypass dialog and stops at the first prompt line, then ``kill-session``; two threads.
(b) the case: ``live-trial run hello:greet --case ten --suite <file> --max-concurrency 2 --json`` as a user runs it
(the process started to its exit), the model played by a scenario answering the five should-trigger prompts with the
Skill call (``stop_after_trigger``) and the five others with plain text. Rounds alternate the order. Prints each
time, the ratio, whether the goal was met, and the load average.

Then the floor: the same 20 sessions done bare (raw tmux, the prompt pasted and submitted, killed once the transcript
shows the Skill call's result or the turn's end), which no harness can beat: a session is more than a boot.

Usage: ``python benchmarks/activation.py [--runs 2]``
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from boot import bare_once  # noqa: E402

from live_trial.rehearsal.config import seed_config  # noqa: E402
from live_trial.session.claude_bin import find_claude  # noqa: E402

PLUGINS = ROOT / "examples" / "plugins"
SESSIONS, WIDTH, REPEATS, GOAL = 20, 2, 2, 1.5
#: what every scripted reply waits before it answers: the model's own time in both measures
DELAY_S = 0.3
SHOULD = ["Please write a file that welcomes Ada.", "Could you make me a welcome file for Bob?",
          "I'd like a file saying hi to Carol.", "Put a short hello for Dan in a file here.",
          "Make a text file that welcomes Eve."]
SHOULD_NOT = ["What is 2 + 2?", "Tell me a joke.", "List three colours.", "Which day comes after Monday?",
              "Spell the word cat backwards."]


def write_case(tmp: Path) -> Path:
    """The suite file of the case ``ten`` and its scenario; returns the suite's path."""
    rules = []
    for n, text in enumerate(SHOULD + SHOULD_NOT):
        content = ('[{tool_use: {name: Skill, input: {skill: "hello:greet"}}}]' if text in SHOULD
                   else '[{text: "A plain answer."}]')
        rules.append(f"  - id: p{n}\n    when: {{step: 0, first_prompt: {json.dumps(re.escape(text[:12]))}}}\n"
                     f"    reply: {{delay_s: {DELAY_S}, content: {content}}}\n")
    (tmp / "scenario.yaml").write_text("name: bench-activation\nside_query_text: Bench\nrules:\n" + "".join(rules))
    prompts = "".join(f"          - {{prompt: {json.dumps(t)}, should_trigger: {str(t in SHOULD).lower()}}}\n"
                      for t in SHOULD + SHOULD_NOT)
    suite = tmp / "live-trials.yaml"
    suite.write_text("skills:\n  greet:\n    cases:\n      - name: ten\n        kind: activation\n"
                     f"        repeats: {REPEATS}\n        stop_after_trigger: true\n"
                     f"        scenario: {tmp / 'scenario.yaml'}\n        stall_limit: 60\n        prompts:\n{prompts}")
    return suite


def bare_boots(claude: str, tmp: Path, socket: str, label: str) -> float:
    """Seconds for :data:`SESSIONS` bare boots of ``claude`` with the plugin, :data:`WIDTH` at a time."""
    def one(i: int) -> float:
        cwd = tmp / f"{label}-{i}"
        cwd.mkdir()
        config = seed_config(tmp / f"{label}-{i}-cfg", [cwd])
        return bare_once(socket, claude, cwd, config, f"bare-{label}-{i}", plugin_dirs=[PLUGINS / "hello"])

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=WIDTH) as pool:
        list(pool.map(one, range(SESSIONS)))
    return time.monotonic() - started


def bare_session(socket: str, claude: str, tmp: Path, name: str, url: str, prompt: str, timeout_s: float = 60) -> None:
    """One bare session, the floor of a session of the case: the CLI with the plugin started in raw tmux against the
    scripted model at ``url``, its bypass dialog answered (:func:`boot.bare_once`), the prompt pasted and submitted,
    then killed as soon as its transcript shows the Skill call's result or the end of the turn."""
    cwd = tmp / name
    cwd.mkdir()
    config = seed_config(tmp / f"{name}-cfg", [cwd])
    started = time.monotonic()

    def paste(tmux: list[str], target: str) -> None:
        subprocess.run(tmux + ["set-buffer", "-b", name, "--", prompt], check=True)
        subprocess.run(tmux + ["paste-buffer", "-p", "-d", "-b", name, "-t", target], check=True)
        time.sleep(0.05)
        subprocess.run(tmux + ["send-keys", "-t", target, "Enter"], check=True)
        while time.monotonic() - started < timeout_s:
            text = "".join(p.read_text(errors="replace") for p in (config / "projects").glob("*/*.jsonl"))
            if "turn_duration" in text or "Launching skill" in text:
                return
            time.sleep(0.02)
        raise RuntimeError(f"bare session {name} never ended its turn")

    bare_once(socket, claude, cwd, config, name, timeout_s, plugin_dirs=[PLUGINS / "hello"], url=url, then=paste)


def bare_sessions(claude: str, tmp: Path, socket: str, label: str, scenario: Path) -> float:
    """Seconds for the case's 20 sessions done bare (:func:`bare_session`), :data:`WIDTH` at a time."""
    from live_trial.rehearsal.server import RehearsalServer

    prompts = [t for t in SHOULD + SHOULD_NOT for _ in range(REPEATS)]
    with RehearsalServer(scenario) as server:
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=WIDTH) as pool:
            list(pool.map(lambda n: bare_session(socket, claude, tmp, f"sess-{label}-{n}", server.url, prompts[n]),
                          range(SESSIONS)))
        return time.monotonic() - started


def activation_case(suite: Path, tmp: Path, socket: str, label: str) -> float:
    """Seconds of ``live-trial run hello:greet --case ten`` as a process; raises when the case is not a PASS."""
    argv = [sys.executable, "-m", "live_trial", "run", "hello:greet", "--case", "ten", "--suite", str(suite),
            "--plugins-root", str(PLUGINS), "--max-concurrency", str(WIDTH), "--eval-root", str(tmp / f"eval-{label}"),
            "--socket", socket, "--json"]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    took = time.monotonic() - started
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out.get("status") != "PASS":
        raise RuntimeError(f"the case did not pass: {out.get('status')}: {out.get('summary')} {proc.stderr[-500:]}")
    return took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args(argv)
    if not shutil.which("tmux"):
        print("BLOCKED: tmux not found")
        return 3
    claude = find_claude().path
    socket = f"lt-bench-act-{os.getpid()}"
    bare_socket = f"{socket}-bare"
    tmp = Path(tempfile.mkdtemp(prefix="lt-activation-bench-"))
    subprocess.run(["tmux", "-L", bare_socket, "-f", "/dev/null", "new-session", "-d", "-s", "keeper", "sleep",
                    "3600"], check=True)
    suite = write_case(tmp)
    model_s = SESSIONS * DELAY_S / WIDTH
    bare, case, sessions = [], [], []
    try:
        for i in range(args.runs):
            for kind in (("bare", "case", "sessions") if i % 2 == 0 else ("sessions", "case", "bare")):
                if kind == "bare":
                    bare.append(bare_boots(claude, tmp, bare_socket, f"r{i}"))
                elif kind == "sessions":
                    sessions.append(bare_sessions(claude, tmp, bare_socket, f"r{i}", tmp / "scenario.yaml"))
                else:
                    case.append(activation_case(suite, tmp, socket, f"r{i}"))
    finally:
        for name in (socket, bare_socket):
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    bb, cb = statistics.median(bare), statistics.median(case)
    ratio = cb / (bb + model_s)
    print(f"  {SESSIONS} bare boots, {WIDTH} at a time: " + " ".join(f"{x:.1f}" for x in bare) + f"  median {bb:.1f}s")
    print(f"  the case ({len(SHOULD + SHOULD_NOT)} prompts x {REPEATS}): " + " ".join(f"{x:.1f}" for x in case)
          + f"  median {cb:.1f}s")
    print(f"ACTIVATION_BENCH: case {cb:.1f}s / (bare boots {bb:.1f}s + scripted model {model_s:.1f}s) = ratio "
          f"{ratio:.2f} (goal <= {GOAL}, {args.runs} runs each; load average {os.getloadavg()[0]:.1f}): "
          f"{'met' if ratio <= GOAL else 'NOT met'}")
    sb = statistics.median(sessions)
    print(f"  the same 20 sessions bare (raw tmux, paste, the turn to its Skill result or end, kill): "
          + " ".join(f"{x:.1f}" for x in sessions) + f"  median {sb:.1f}s")
    print(f"FLOOR activation: a session is a boot, a paste and the CLI's turn: 20 bare sessions take {sb:.1f}s, "
          f"{sb / (bb + model_s):.2f}x the boots and the model; the case / the bare sessions = {cb / sb:.2f} is the "
          "harness's own part (its checks, containment, delivery confirmation, collect)")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
