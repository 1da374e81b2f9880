"""Helpers for the e2e tests of ``run``: start the real command as a user would and read what it left."""
from __future__ import annotations

import json
import os
import socket
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
#: The limits of a quick rehearsal trial: a STALL after 4 s of no progress, the hard cap at 90 s.
FAST = ["--stall-limit", "4", "--hard-cap", "90"]


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


def proc_start(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc/<pid>/stat`` field 22), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def tree_of(pid: int) -> list[tuple[int, str]]:
    """``[(pid, start)]`` of ``pid`` and every process below it by parentage, read from ``/proc`` (not from the
    product): what the test records to check later that each of them is gone."""
    rows = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            rows[int(name)] = (int(fields[1]), fields[19])
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in rows and (p, rows[p][1]) not in out:
            out.append((p, rows[p][1]))
            todo += [c for c, (ppid, _) in rows.items() if ppid == p]
    return out


def still_running(procs) -> list[tuple[int, str]]:
    """The ``(pid, start)`` of ``procs`` that still run: same pid, same start time, not a zombie."""
    return [(p, s) for p, s in procs if proc_start(p) == s and pid_alive(p)]


def carrying_tag(session: str) -> list[int]:
    """Pids of the processes whose environment holds ``LIVE_TRIAL_SESSION=<session>`` (a trial's tag)."""
    needle = f"LIVE_TRIAL_SESSION={session}".encode()
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if needle in Path(f"/proc/{name}/environ").read_bytes().split(b"\0") and pid_alive(int(name)):
                    found.append(int(name))
            except OSError:
                continue
    return found


def age_s(pid: int) -> float:
    """Seconds since ``pid`` started (0 when it is gone)."""
    start = proc_start(pid)
    if start is None:
        return 0.0
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - int(start) / os.sysconf("SC_CLK_TCK")


def stopped(pid: int) -> bool:
    """True when ``pid`` is stopped (state T), as a harness that stopped itself at a phase is."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return False


def notifications(tmp_path: Path, run_id: str) -> list[dict]:
    """The lines of ``eval/notifications.jsonl`` about the trial ``run_id``."""
    path = tmp_path / "eval" / "notifications.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []
    return [r for r in lines if (r.get("refs") or {}).get("run_id") == run_id]


def resume_cmd(workdir: Path, *extra: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m live_trial run --resume WORKDIR --json`` as a person would run it after a crash."""
    clean = {k: v for k, v in os.environ.items() if k != "LIVE_TRIAL_STOP_AT_PHASE"}
    return subprocess.run([sys.executable, "-m", "live_trial", "run", "--resume", str(workdir), *extra, "--json"],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, env={**clean, **(env or {})})
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


def listening(port: int) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port`` (a rehearsal server still serving)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def kill_at_phase(tmp_path: Path, phase: str, *args: str) -> Path:
    """``run *args`` held at ``phase`` (the suite's fault-injection point ``LIVE_TRIAL_STOP_AT_PHASE``: the harness
    stops itself right after trial-state.json records it), then SIGKILLed there. Returns the trial's workdir."""
    import signal

    from live_trial.trial.journal import STOP_AT_PHASE_ENV

    proc = popen_cmd(tmp_path, *args, env={STOP_AT_PHASE_ENV: phase})
    try:
        wait_for(lambda: stopped(proc.pid) or proc.poll() is not None, what=f"the harness held at phase {phase}")
        assert proc.poll() is None, f"the harness ended before phase {phase}: {proc.stderr.read()[-2000:]}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return workdirs(tmp_path)[0]

