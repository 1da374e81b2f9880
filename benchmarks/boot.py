"""Benchmark of boot: the harness's median time-to-READY over the bare CLI's
time-to-prompt, same dialog condition, same run (goals: ``boot()`` in-process at most 1.2x, the ``boot`` command as
a user runs it at most 1.1x).

Each round starts, in alternating order, (a) the bare CLI: one raw ``tmux new-session`` with the same claude and
the rehearsal environment as ``-e`` flags, a 0.05 s capture loop that answers the bypass dialog with Down + Enter when it shows and stops at
the first ``❯``+NBSP line; and (b) the harness: :func:`live_trial.session.boot.boot` (validation, pinned argv, the
four-marker dialog handling, READY rules), timed from the call to its return. Both get the same resolved
claude path and a freshly seeded config (``--condition dialog``: the bypass dialog shows; ``nodialog``: it is
pre-accepted). No model traffic happens at boot. Needs tmux and the pinned CLI. (c) the ``boot`` command as a user
runs it: the ``live-trial`` console script (bytecode compiled, as an install leaves it) with ``--rehearsal-server``
and ``--config-dir``, timed from starting the process to its exit after printing READY. Then the floor
(``benchmarks/floor.py``): the interpreter's start and libtmux's import, which come before the command can start
claude, and the least command ratio they leave.

Usage: ``python benchmarks/boot.py [--runs 5] [--condition dialog|nodialog|both]``
"""
from __future__ import annotations

import argparse
import re
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import floor  # noqa: E402

from live_trial.rehearsal.config import rehearsal_env, seed_config, settings_args  # noqa: E402
from live_trial.session.backend import Backend  # noqa: E402
from live_trial.session.boot import BootRequest, boot  # noqa: E402
from live_trial.session.claude_bin import find_claude  # noqa: E402
from live_trial.trial.workdir import new_run_id  # noqa: E402

NBSP = "\u00a0"
DEAD_URL = "http://127.0.0.1:9"   # never contacted at boot
#: The bypass dialog's cursor on its accept option, with or without the option's number.
ACCEPT_SELECTED = re.compile(r"^❯\s*(?:2\.\s*)?Yes, I accept")


def bare_once(socket: str, claude: str, cwd: Path, config: Path, name: str, timeout_s: float = 60,
              plugin_dirs: tuple[Path, ...] | list[Path] = (), url: str = DEAD_URL,
              then: Callable[[list[str], str], None] | None = None) -> float:
    """Seconds from ``new-session`` to the first ``❯``+NBSP line, answering the bypass dialog like a person would;
    ``plugin_dirs`` are loaded with ``--plugin-dir``, the model is at ``url`` (none is asked at boot), and ``then(tmux
    argv, pane target)`` runs once the prompt is there, before the session is killed (benchmarks/activation.py)."""
    env_flags = [a for k, v in rehearsal_env(url, config).items() for a in ("-e", f"{k}={v}")]
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    started = time.monotonic()
    subprocess.run(tmux + ["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", str(cwd), *env_flags,
                           claude, "--setting-sources", "local", *settings_args(config),
                           "--dangerously-skip-permissions", *[a for d in plugin_dirs for a in ("--plugin-dir", str(d))]],
                   check=True)
    target = f"={name}:"
    down_pressed, enters, last_enter = False, 0, 0.0
    try:
        while time.monotonic() - started < timeout_s:
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", target], capture_output=True, text=True).stdout
            if any(line.startswith("❯" + NBSP) for line in screen.splitlines()):
                ready = time.monotonic() - started
                if then is not None:
                    then(tmux, target)
                return ready
            if "Yes, I accept" in screen and "Enter to confirm" in screen:
                # the cursor line reads "❯ 2. Yes, I accept" on 2.1.197 and "❯ Yes, I accept" (no numbers) on 2.1.332
                selected = any(ACCEPT_SELECTED.match(line.strip()) for line in screen.splitlines())
                if not selected and not down_pressed:
                    subprocess.run(tmux + ["send-keys", "-t", target, "Down"], check=True)
                    down_pressed = True
                elif selected and enters < 3 and time.monotonic() - last_enter > 0.3:
                    # a dialog drops an Enter in its first ~0.3 s (README "Keys pressed again"): as a person would,
                    # press it again while the dialog stays
                    subprocess.run(tmux + ["send-keys", "-t", target, "Enter"], check=True)
                    enters, last_enter = enters + 1, time.monotonic()
            time.sleep(0.05)
        raise RuntimeError(f"bare CLI showed no prompt within {timeout_s}s")
    finally:
        subprocess.run(tmux + ["kill-session", "-t", f"={name}"], capture_output=True)


def harness_once(backend: Backend, claude: str, cwd: Path, config: Path, slug: str) -> float:
    """Seconds from the ``boot()`` call to READY."""
    req = BootRequest(session=f"lt-{new_run_id()}-{slug}", cwd=cwd, claude=claude, rehearsal=True,
                      env_overrides=rehearsal_env(DEAD_URL, config), owner_pid=os.getpid(), timeout_s=60)
    started = time.monotonic()
    result = boot(req, backend)
    elapsed = time.monotonic() - started
    backend.kill_session(result.session)
    return elapsed


def command_once(socket: str, claude: str, cwd: Path, config: Path, slug: str, env: dict) -> float:
    """Seconds from starting ``live-trial boot`` to its exit with READY (the session is killed afterwards)."""
    script = Path(sys.executable).with_name("live-trial")
    name = f"lt-{new_run_id()}-{slug}"
    argv = ([str(script)] if script.exists() else [sys.executable, "-m", "live_trial"]) + [
        "boot", name, str(cwd), "--socket", socket, "--claude-bin", claude, "--rehearsal-server", DEAD_URL,
        "--config-dir", str(config), "--owner-pid", str(os.getpid()), "--timeout", "60"]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - started
    Backend(socket).kill_session(name)
    if proc.returncode != 0 or not proc.stdout.startswith("READY"):
        raise RuntimeError(f"live-trial boot failed ({proc.returncode}): {proc.stdout} {proc.stderr}")
    return elapsed


def run_condition(condition: str, runs: int, claude: str, tmp: Path, socket: str,
                  bare_socket: str) -> tuple[float, float, float]:
    backend = Backend(socket)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "live_trial")], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    bare, harness, command = [], [], []
    for i in range(runs):
        order = ("bare", "harness", "command")
        for kind in (order if i % 2 == 0 else order[::-1]):
            cwd = tmp / f"{condition}-{kind}-{i}"
            cwd.mkdir()
            config = seed_config(tmp / f"{condition}-{kind}-{i}-cfg", [cwd], skip_bypass_dialog=condition == "nodialog")
            if kind == "bare":
                bare.append(bare_once(bare_socket, claude, cwd, config, f"bare-{condition}-{i}"))
            elif kind == "harness":
                harness.append(harness_once(backend, claude, cwd, config, f"bench-{i}"))
            else:
                command.append(command_once(socket, claude, cwd, config, f"cmd-{i}", env))
    hb, bb, cb = statistics.median(harness), statistics.median(bare), statistics.median(command)
    print(f"  {condition:9s} bare   : " + " ".join(f"{x:.2f}" for x in bare) + f"  median {bb:.2f}s")
    print(f"  {condition:9s} boot() : " + " ".join(f"{x:.2f}" for x in harness) + f"  median {hb:.2f}s")
    print(f"  {condition:9s} command: " + " ".join(f"{x:.2f}" for x in command) + f"  median {cb:.2f}s")
    print(f"BOOT_BENCH {condition}: boot() median {hb:.2f}s / bare median {bb:.2f}s = ratio {hb / bb:.2f} "
          f"(goal <= 1.2, {runs} runs each): {'met' if hb / bb <= 1.2 else 'NOT met'}")
    print(f"BOOT_BENCH {condition}: `live-trial boot` median {cb:.2f}s / bare median {bb:.2f}s = ratio {cb / bb:.2f} "
          f"(goal <= 1.1, {runs} runs each; load average {os.getloadavg()[0]:.1f}): "
          f"{'met' if cb / bb <= 1.1 else 'NOT met'}")
    start_s, _ = floor.describe("boot", ("libtmux",), env=env)
    print(f"FLOOR boot: the command starts claude only after python and libtmux are loaded (every tmux call goes "
          f"through libtmux): (bare {bb:.2f}s + {start_s:.2f}s) / bare = {(bb + start_s) / bb:.2f} at best; the "
          f"in-process boot() ratio above is the harness's own part")
    return hb, bb, cb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--condition", choices=("dialog", "nodialog", "both"), default="both")
    args = ap.parse_args(argv)
    if not shutil.which("tmux"):
        print("BLOCKED: tmux not found")
        return 3
    claude = find_claude().path
    socket = f"lt-bench-{os.getpid()}"
    tmp = Path(tempfile.mkdtemp(prefix="lt-boot-bench-"))
    worst = 0.0
    # A keeper session on each server so it never exits between rounds (a client connecting while the server shuts
    # down gets "server exited unexpectedly"). The bare CLI has its own server: the harness changes the options only
    # of a server it started itself (session/backend.py), so its keeper is started through the harness.
    bare_socket = f"{socket}-bare"
    subprocess.run(["tmux", "-L", bare_socket, "-f", "/dev/null", "new-session", "-d", "-s", "keeper", "sleep",
                    "3600"], check=True)
    Backend(socket).new_session(f"lt-{new_run_id()}-keeper", ["sleep", "3600"], cwd=tmp, env=dict(os.environ))
    try:
        for condition in (("dialog", "nodialog") if args.condition == "both" else (args.condition,)):
            hb, bb, cb = run_condition(condition, args.runs, claude, tmp, socket, bare_socket)
            worst = max(worst, hb / bb / 1.2, cb / bb / 1.1)
    finally:
        for name in (socket, bare_socket):
            subprocess.run(["tmux", "-L", name, "kill-server"], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
