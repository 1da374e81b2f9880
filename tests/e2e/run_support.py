"""Helpers for the e2e tests of ``run``: start the real command as a user would and read what it left."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from live_trial.jsonfile import schema_errors
from live_trial.transcript.order import causal_order

from .waiting import DEFAULT_TIMEOUT_S, screen_of, wait_for

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "tests" / "e2e" / "plugins"
SCENARIOS = ROOT / "tests" / "e2e" / "scenarios"
EXAMPLES = ROOT / "examples"


def run_cmd(tmp_path: Path, *args: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m live_trial run ... --json`` with the eval-root under ``tmp_path``; returns the process. With no
    ``--cwd`` / ``--in-place`` in ``args`` the trial works in its own new folder ``<workdir>/cwd`` (the default)."""
    argv = [sys.executable, "-m", "live_trial", "run", *args, "--eval-root", str(tmp_path / "eval"), "--json"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def popen_cmd(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """The same as :func:`run_cmd`, started in the background."""
    argv = [sys.executable, "-m", "live_trial", "run", *args, "--eval-root", str(tmp_path / "eval"), "--json"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, **(env or {})})


def final_json(proc) -> dict:
    """The last stdout line of ``run --json``, parsed."""
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.strip()]
    assert lines, f"no output; stderr: {proc.stderr[-2000:]}"
    return json.loads(lines[-1])


def workdirs(tmp_path: Path) -> list[Path]:
    """Every trial workdir under the test's eval-root."""
    return sorted(p.parent for p in (tmp_path / "eval").glob("*/*/live-trial/*/task.md"))


def wait_for_state(tmp_path: Path, predicate, timeout: float = DEFAULT_TIMEOUT_S) -> dict:
    """Wait until a workdir's trial-state.json satisfies ``predicate``; return it (with ``_workdir``)."""
    def state():
        for wd in workdirs(tmp_path):
            try:
                doc = json.loads((wd / "trial-state.json").read_text())
            except (OSError, ValueError):
                continue
            if predicate(doc):
                return {**doc, "_workdir": str(wd)}
        return None

    def seen() -> str:
        states = []
        for wd in workdirs(tmp_path):
            try:
                states.append(json.loads((wd / "trial-state.json").read_text()).get("phase"))
            except (OSError, ValueError):
                states.append("(unreadable)")
        return f"phases seen: {states}"
    return wait_for(state, what="the trial state", timeout_s=timeout, seen=seen)


def records(path: Path) -> list[dict]:
    """The JSON records of a transcript copy in the order they happened (the CLI's line order is not that order
    for a session's first turn: a CI run once had the Write tool_use on line 4, before the prompt)."""
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return causal_order(out, sidechains=True)


def tmux_sessions() -> list[str]:
    """Session names on the test socket."""
    proc = subprocess.run(["tmux", "-L", os.environ["LIVE_TRIAL_SOCKET"], "list-sessions", "-F", "#{session_name}"],
                          capture_output=True, text=True)
    return proc.stdout.split()


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_busy(state: dict) -> None:
    """Wait until the trial's session shows the CLI at work (the spinner line): the turn has really started."""
    from live_trial.session import screen
    from live_trial.session.backend import Backend

    backend = Backend()
    wait_for(lambda: screen.is_busy(backend.capture(state["session"])), what="the CLI busy in the trial's session",
             seen=screen_of(backend, state["session"]))


def wait_polled(state: dict) -> None:
    """Wait until poll has written its state file once (its first tick): the clocks a resume continues exist."""
    path = Path(state["_workdir"]) / "poll-state.json"
    wait_for(path.is_file, what=f"{path.name} written by the first poll tick")


def verdict_doc(result: dict) -> dict:
    """The verdict a ``run --json`` result points to, checked against its schema."""
    doc = json.loads(Path(result["verdict_path"]).read_text())
    assert schema_errors(doc, "live-trial-verdict.schema.json") == []
    return doc


def no_leftovers(workdir: Path, state: dict | None = None) -> None:
    """The trial's tmux session and its claude process are gone."""
    state = state or json.loads((workdir / "trial-state.json").read_text())
    assert state["session"] not in tmux_sessions()
    if state.get("pane_pid"):
        assert not pid_alive(state["pane_pid"]), "the trial's claude process is still running"
