"""The pane's command (and the evaluator's): enter the trial's container, then start claude in it (README
"Nothing left running"; :mod:`live_trial.session.containment`).

``python -m live_trial.session.holder --kind KIND --name NAME [--cgroup PATH [--pidns 1]] -- PROGRAM ARGS...``

- ``cgroup-v2``: write this process's pid to ``PATH/cgroup.procs`` and exec the program: nothing it starts is born
  outside the cgroup. With ``--pidns`` (a root harness, :func:`live_trial.session.containment.nests_pidns`) it then
  runs the program in a PID namespace inside the cgroup, as ``pid-namespace`` below (with ``--mount-proc``): root may
  write its pid into any cgroup's ``cgroup.procs`` and leave the cgroup, never the namespace, whose end kills it.
- ``pid-namespace``: exec ``unshare --pid --fork --kill-child`` (``--user --map-current-user`` when not root) running
  this module as ``--kind init``: pid 1 of the new namespace, which starts the program, passes on SIGHUP / SIGTERM,
  reaps every orphan, and exits with the program's status; the kernel then kills everything left in the namespace.
- ``subreaper``: ``PR_SET_CHILD_SUBREAPER``, start the program as a child, pass on signals; a setsid'd or
  double-forked process is reparented here, not to init. When the program exits (or SIGHUP / SIGTERM arrive and it
  has exited) every descendant gets SIGTERM, a short grace, then SIGKILL.

The program stays in the holder's process group (the pane's foreground group: it keeps the terminal); SIGINT is
ignored here (the terminal sends it to the program too). The program gets SIGKILL when the holder dies
(``PR_SET_PDEATHSIG``). Exit status: the program's, or 128+N when a signal N ended it; 125 when the container could not
be entered (nothing was started: the message is on stderr, in the pane).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
FORWARDED = (signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT)
CANNOT_ENTER = 125


def _prctl(option: int, value: int) -> bool:
    import ctypes
    import ctypes.util

    try:
        return bool(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl(
            option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _status(wait_status: int) -> int:
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else 1


def _start(argv: list[str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` as a child in this process group (the terminal's foreground group), SIGINT back to its default
    and SIGKILL when the holder dies. Returns its Popen, to be kept while it runs (a Popen collected early reaps its
    child itself, and the holder's wait would miss its status); raises OSError when it cannot be started."""
    parent = os.getpid()

    def arm() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)     # ignored here, inherited across exec otherwise
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:                       # the holder died before the signal was armed
            os.kill(os.getpid(), signal.SIGKILL)

    return subprocess.Popen(argv, preexec_fn=arm)


def supervise(argv: list[str], *, end_descendants: bool) -> int:
    """Start ``argv`` as a child, pass on SIGHUP/SIGTERM/SIGQUIT, reap every child (orphans included) until it exits;
    with ``end_descendants`` then end every process still below this one. Returns the exit status to use."""
    child = {"pid": 0}

    def forward(sig: int, _frame: object) -> None:
        if child["pid"]:
            try:
                os.kill(child["pid"], sig)
            except OSError:
                pass

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in FORWARDED:
        signal.signal(sig, forward)
    try:
        started = _start(argv)
        child["pid"] = started.pid
    except OSError as exc:
        os.write(2, f"live-trial holder: cannot start {argv[0]}: {exc}\n".encode())
        return 127
    status = 1
    while True:
        try:
            got, wait_status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if got == child["pid"]:
            status = _status(wait_status)
            break
    child["pid"] = 0
    started.returncode = status              # reaped here: the Popen must not wait for it again
    if end_descendants:
        end_all()
    return status


def end_all() -> None:
    """End every descendant of this process (SIGTERM, a grace, SIGKILL; :func:`proctree.end`) and reap them."""
    from live_trial.session import proctree

    me = os.getpid()

    def below() -> list[proctree.Proc]:
        return [p for p in proctree.descendants(me) if p.pid != me]
    proctree.end(below(), find_more=below, grace_s=1.0)
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


def _join_cgroup(path: str) -> str | None:
    try:
        (Path(path) / "cgroup.procs").write_text(f"{os.getpid()}\n")
        mine = Path("/proc/self/cgroup").read_text()
    except OSError as exc:
        return f"cannot join the cgroup {path}: {exc}"
    own = next((ln[3:] for ln in mine.splitlines() if ln.startswith("0::")), "")
    return None if own and path.endswith(own) else f"joined {path} but /proc/self/cgroup says {own!r}"


def main(args: list[str]) -> int:
    """Parse ``--kind K --name N [--cgroup P] -- PROGRAM ARGS...``; enter the container and run the program (see the
    module doc). Returns an exit status; does not return when the program is exec'd."""
    if "--" not in args:
        os.write(2, b"usage: holder --kind KIND --name NAME [--cgroup PATH] -- PROGRAM ARGS...\n")
        return 2
    cut = args.index("--")
    opts, argv = args[:cut], args[cut + 1:]
    flags = dict(zip(opts[::2], opts[1::2]))
    kind, name = flags.get("--kind", ""), flags.get("--name", "")
    if not argv or not name:
        os.write(2, b"live-trial holder: a name and a program are needed\n")
        return 2
    if kind == "cgroup-v2":
        problem = _join_cgroup(flags.get("--cgroup", ""))
        if problem:
            os.write(2, f"live-trial holder: {problem}\n".encode())
            return CANNOT_ENTER
        if flags.get("--pidns") != "1":
            os.execvp(argv[0], argv)
    if kind == "pid-namespace" or kind == "cgroup-v2":
        userns = [] if os.geteuid() == 0 else ["--user", "--map-current-user"]
        proc = ["--mount-proc"] if kind == "cgroup-v2" else []
        inner = [sys.executable, "-P", "-m", "live_trial.session.holder", "--kind", "init", "--name", name, "--", *argv]
        try:
            os.execvp("unshare", ["unshare", "--pid", "--fork", "--kill-child", *proc, *userns, "--", *inner])
        except OSError as exc:
            os.write(2, f"live-trial holder: cannot run unshare: {exc}\n".encode())
            return CANNOT_ENTER
    if kind == "init":
        return supervise(argv, end_descendants=False)   # pid 1: its exit kills the namespace
    if kind == "subreaper":
        if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
            os.write(2, b"live-trial holder: PR_SET_CHILD_SUBREAPER refused\n")
            return CANNOT_ENTER
        return supervise(argv, end_descendants=True)
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
