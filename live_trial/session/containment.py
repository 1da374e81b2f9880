"""One place the kernel keeps for every process of a trial, so none can leave it (README "Nothing left
running").

A process the session starts with ``setsid env -i ...`` has no trial tag (:data:`proctree.TAG_ENV`) and is reparented
to init: neither the pane's process tree nor the tag finds it. The kinds, strongest first (:data:`KINDS`):

- ``cgroup-v2``: a cgroup ``<base>/live-trial/<name>`` in a writable cgroup v2 hierarchy (found in
  ``/proc/self/mountinfo``; ``<base>`` is the hierarchy's root or the harness's own, delegated, cgroup). The pane's
  holder joins it before it execs claude, so nothing of the session is born outside it and nothing can leave it
  (moving out needs write access to a common ancestor's ``cgroup.procs``). Ended by ``cgroup.kill`` (or freeze and
  SIGKILL each pid where the kernel has no ``cgroup.kill``), verified empty, removed.
- ``pid-namespace``: the holder runs claude under ``unshare --pid --fork --kill-child`` (with ``--user
  --map-current-user`` when not root) behind a small init (:mod:`live_trial.session.holder`); when that init dies the
  kernel kills everything in the namespace. Ended by SIGKILL to the init.
- ``subreaper``: the holder stays claude's parent with ``PR_SET_CHILD_SUBREAPER``, so a setsid'd or double-forked
  process is reparented to it, not to init; it ends all its descendants when claude exits or it is asked to stop.
- ``tag-only``: none of these works; the tag and the pane's tree find what they can (today's finders, kept as extra
  finders for every kind).

``LIVE_TRIAL_CONTAINMENT`` (:data:`SETTING_ENV`: ``auto`` (default) | ``cgroup`` | ``pidns`` | ``subreaper`` |
``tag``) chooses a weaker kind than the strongest available (never a stronger one). Linux only; elsewhere
``tag-only``. Never runs tmux.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.errors import RefusedInput
from live_trial.session import proctree

CGROUP_V2, PID_NAMESPACE, SUBREAPER, TAG_ONLY = "cgroup-v2", "pid-namespace", "subreaper", "tag-only"
#: Strongest first.
KINDS = (CGROUP_V2, PID_NAMESPACE, SUBREAPER, TAG_ONLY)
SETTING_ENV = "LIVE_TRIAL_CONTAINMENT"
SETTINGS = {"auto": CGROUP_V2, "cgroup": CGROUP_V2, "pidns": PID_NAMESPACE, "subreaper": SUBREAPER, "tag": TAG_ONLY}
SUBTREE = "live-trial"
HOLDER_MODULE = "live_trial.session.holder"
#: How the verdict's note naming the containment starts (a note, never a cause of the verdict).
NOTE_PREFIX = "containment: "
#: The evaluator's container is named after the trial's session with this suffix (a dot: no session name has one).
EVALUATOR_SUFFIX = ".evaluator"
END_WAIT_S = 5.0
_POLL_S = 0.02


@dataclass(frozen=True)
class Container:
    """Where one trial's (or one evaluator's) processes are held: ``kind`` (one of :data:`KINDS`), ``name`` (the tmux
    session name, or ``<session>-evaluator``; what the tag says) and ``path`` (the cgroup folder, for ``cgroup-v2``)."""

    kind: str
    name: str
    path: str | None = None

    @property
    def tag(self) -> str:
        """The trial tag its processes carry (:data:`proctree.TAG_ENV`): the session's name, also for the
        evaluator's container (``<session>.evaluator``: the evaluator carries the trial's tag)."""
        return self.name.removesuffix(EVALUATOR_SUFFIX)

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "name", "path"}``: the record ``trial-state.json`` keeps (a resume or ``reap`` ends it)."""
        return {"kind": self.kind, "name": self.name, "path": self.path}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "Container":
        """The container :meth:`to_json` recorded."""
        return cls(str(doc["kind"]), str(doc["name"]), doc.get("path") or None)

    def wrap(self, argv: list[str], python: str | None = None) -> list[str]:
        """``argv`` run by the holder (:mod:`live_trial.session.holder`), which enters this container before it
        starts the program; ``argv`` unchanged for ``tag-only``."""
        if self.kind == TAG_ONLY:
            return list(argv)
        extra = ["--cgroup", self.path] if self.path else []
        extra += ["--pidns", "1"] if nests_pidns(self) else []
        return [python or sys.executable, "-P", "-m", HOLDER_MODULE, "--kind", self.kind, "--name", self.name, *extra,
                "--", *argv]

    def note(self) -> str:
        """The verdict's note: which containment held the trial's processes."""
        inner = " with a PID namespace inside it" if nests_pidns(self) else ""
        where = {CGROUP_V2: f"the cgroup v2 subtree {self.path}{inner}",
                 PID_NAMESPACE: "a PID namespace whose init's end killed every process in it",
                 SUBREAPER: "a child-subreaper holder that ended every descendant",
                 TAG_ONLY: "only the trial's environment tag and the pane's process tree (no kernel containment "
                           "was available or allowed)"}[self.kind]
        return f"{NOTE_PREFIX}{self.kind}: the trial's processes were held by {where}"


def nests_pidns(c: Container) -> bool:
    """True when the holder runs a ``cgroup-v2`` container's program in a PID namespace inside the cgroup: for a root
    harness (root may write its pid into any cgroup's ``cgroup.procs`` and so leave the cgroup, never the namespace,
    whose init's end kills it; README "Nothing left running"). Decided the same way by the harness at any time."""
    return c.kind == CGROUP_V2 and bool(c.path) and os.geteuid() == 0 and shutil.which("unshare") is not None


# ---------------------------------------------------------------- detection

def v2_mounts(mountinfo: str | None = None) -> list[Path]:
    """The mount points of the cgroup v2 hierarchy (filesystem type ``cgroup2``) in ``/proc/self/mountinfo`` (or the
    given text), in file order; empty when there is none."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return []
    out = []
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if sep and tail.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            out.append(Path(fields[4].replace("\\040", " ")))
    return out


def own_v2_cgroup(cgroup_file: str | None = None) -> str | None:
    """The cgroup v2 path of the harness (the ``0::`` line of ``/proc/self/cgroup``), e.g. ``/`` or
    ``/user.slice/.../app.slice/x.scope``; None when there is none."""
    if cgroup_file is None:
        try:
            cgroup_file = Path("/proc/self/cgroup").read_text()
        except OSError:
            return None
    for line in cgroup_file.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def v2_bases(mountinfo: str | None = None, cgroup_file: str | None = None) -> list[Path]:
    """Where a ``live-trial`` subtree may live, most general first: ``<mount>/live-trial`` (a root harness), then
    ``<mount><own cgroup>/live-trial`` (a subtree delegated to the user, e.g. systemd's ``user@.service``)."""
    own = own_v2_cgroup(cgroup_file)
    out: list[Path] = []
    for mount in v2_mounts(mountinfo):
        for base in (mount, mount / own.lstrip("/") if own and own != "/" else None):
            if base is not None and base / SUBTREE not in out:
                out.append(base / SUBTREE)
    return out


def _probe_cgroup(base: Path) -> bool:
    """True when a child cgroup of ``base`` can be made and a process moved into it (and back out by its end)."""
    try:
        base.mkdir(exist_ok=True)
        probe = base / f"probe-{os.getpid()}-{time.monotonic_ns()}"
        probe.mkdir()
    except OSError:
        return False
    child = None
    try:
        child = subprocess.Popen(["sleep", "5"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        (probe / "cgroup.procs").write_text(f"{child.pid}\n")
        return str(child.pid) in (probe / "cgroup.procs").read_text().split()
    except OSError:
        return False
    finally:
        if child is not None:
            child.kill()
            child.wait()
        _rmdir_wait(probe, 1.0)


def pidns_usable() -> bool:
    """True when ``unshare --pid --fork`` runs a program here (with a user namespace when not root)."""
    argv = ["unshare", "--pid", "--fork", "--kill-child", *_userns_flags(), "true"]
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _userns_flags() -> list[str]:
    return [] if os.geteuid() == 0 else ["--user", "--map-current-user"]


def subreaper_usable() -> bool:
    """True where ``prctl(PR_SET_CHILD_SUBREAPER)`` exists (Linux 3.4+, any user)."""
    return sys.platform.startswith("linux") and _prctl() is not None


def _prctl() -> Callable[..., int] | None:
    import ctypes
    import ctypes.util

    try:
        fn: Callable[..., int] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
        return fn
    except (OSError, AttributeError):
        return None


def setting(env: Mapping[str, str] | None = None) -> str:
    """The kind :data:`SETTING_ENV` allows at most (``auto`` and unset: the strongest); raises RefusedInput for a
    value that is not one of :data:`SETTINGS`."""
    value = (os.environ if env is None else env).get(SETTING_ENV, "").strip().lower() or "auto"
    if value not in SETTINGS:
        raise RefusedInput(f"{SETTING_ENV}={value!r} is not a containment setting", where=SETTING_ENV,
                           fix=f"use one of {', '.join(SETTINGS)} (README \"Nothing left running\")",
                           code="bad_containment")
    return SETTINGS[value]


def detect(env: Mapping[str, str] | None = None, *, probes: Mapping[str, Callable[[], Any]] | None = None
           ) -> tuple[str, Path | None]:
    """The strongest kind that works here and the setting allows: ``(kind, cgroup base or None)``. ``probes``
    replaces the real checks (keys ``cgroup`` -> base Path or None, ``pidns`` and ``subreaper`` -> bool)."""
    allowed = KINDS[KINDS.index(setting(env)):]
    checks: Mapping[str, Callable[[], Any]] = probes or {
        "cgroup": lambda: next((b for b in v2_bases() if _probe_cgroup(b)), None),
        "pidns": pidns_usable, "subreaper": subreaper_usable}
    if CGROUP_V2 in allowed:
        base = checks["cgroup"]()
        if base is not None:
            return CGROUP_V2, Path(base)
    if PID_NAMESPACE in allowed and checks["pidns"]():
        return PID_NAMESPACE, None
    if SUBREAPER in allowed and checks["subreaper"]():
        return SUBREAPER, None
    return TAG_ONLY, None


def create(name: str, env: Mapping[str, str] | None = None, *,
           probes: Mapping[str, Callable[[], Any]] | None = None) -> Container:
    """Make the container for ``name`` (the session name, or ``<session>-evaluator``): for ``cgroup-v2`` the folder
    ``<base>/live-trial/<name>`` (emptied first when an earlier one was left). Raises RefusedInput (a bad
    setting)."""
    kind, base = detect(env, probes=probes)
    if kind != CGROUP_V2 or base is None:
        return Container(kind, name)
    path = base / name
    if path.exists():
        end(Container(kind, name, str(path)))
    try:
        path.mkdir()
    except OSError:              # refused between the probe and now: the next kind down
        return Container(detect({SETTING_ENV: "pidns"}, probes=probes)[0], name)
    return Container(kind, name, str(path))


# ---------------------------------------------------------------- members and ending

def cgroup_pids(path: Path) -> list[int]:
    """The pids (as this process's PID namespace numbers them) in the cgroup folder ``path`` and its children, from
    their ``cgroup.procs``; a folder that is gone or unreadable adds none. Never raises."""
    out: list[int] = []
    for procs in [path / "cgroup.procs", *sorted(path.rglob("*/cgroup.procs"))]:
        try:
            out += [int(x) for x in procs.read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def _pidns_inits(name: str, tag: str | None = None) -> list[proctree.Proc]:
    """The holder inits of ``name``'s PID namespaces: processes tagged ``tag`` (default ``name``) running the holder
    for ``name`` whose pid is 1 in a namespace below ours."""
    out = []
    for p in holders(name, tag):
        try:
            status = Path(f"/proc/{p.pid}/status").read_text()
        except OSError:
            continue
        nspid = next((ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")), [])
        if len(nspid) >= 2 and nspid[-1] == "1":
            out.append(p)
    return out


def _ns_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def holders(name: str, tag: str | None = None) -> list[proctree.Proc]:
    """The holders of ``name``: processes tagged ``tag`` (default ``name``) running the holder module for that
    name."""
    out = []
    for p in proctree.tagged(tag or name):
        try:
            argv = Path(f"/proc/{p.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if HOLDER_MODULE.encode() in argv and name.encode() in argv:
            out.append(p)
    return out


def members(c: Container) -> list[proctree.Proc]:
    """Every running process the container holds now (for every kind also those carrying its tag)."""
    found = set(proctree.tagged(c.name)) if c.tag == c.name else set()
    if c.kind == CGROUP_V2 and c.path:
        found |= {p for p in map(proctree.proc, cgroup_pids(Path(c.path))) if p is not None}
    if c.kind == PID_NAMESPACE or nests_pidns(c):
        spaces = {_ns_of(p.pid) for p in _pidns_inits(c.name, c.tag)} - {None, _ns_of(os.getpid())}
        if spaces:
            for pid in (int(n) for n in os.listdir("/proc") if n.isdigit()):
                if _ns_of(pid) in spaces:
                    p = proctree.proc(pid)
                    found |= {p} if p is not None else set()
    elif c.kind == SUBREAPER:
        for holder in holders(c.name, c.tag):
            found |= set(proctree.descendants(holder.pid))
    return sorted(found, key=lambda p: p.pid)


def escaped(c: Container) -> list[proctree.Proc]:
    """The processes of a ``cgroup-v2`` container's session that live outside its cgroup now: those carrying the
    trial's tag, in the PID namespace nested in it (:func:`nests_pidns`) or below its holders, whose pid is not in the
    cgroup (nor in the evaluator's, a sibling). Empty for the other kinds. What the harness checks before it ends the
    container, so a verdict never says the cgroup held a process that left it (README "Nothing left running")."""
    if c.kind != CGROUP_V2 or not c.path:
        return []
    # the candidates are listed before the cgroup is read: a process forked in between is not yet a candidate, and
    # one that was in the cgroup as a candidate is in it still unless it left (what this looks for); one that ended
    # in between is no escape either
    candidates = set(members(c)) | {d for h in holders(c.name, c.tag) for d in proctree.descendants(h.pid)}
    inside = set(cgroup_pids(Path(c.path))) | set(cgroup_pids(Path(c.path).parent / (c.tag + EVALUATOR_SUFFIX)))
    return sorted((p for p in candidates if p.pid not in inside and p.pid != os.getpid() and proctree.alive(p)),
                  key=lambda p: p.pid)


def end(c: Container, *, wait_s: float = END_WAIT_S) -> list[proctree.Proc]:
    """End every process of the container and verify: ``cgroup-v2``: ``cgroup.kill`` (or freeze, SIGKILL each,
    thaw), wait until empty, remove the folder; ``pid-namespace``: SIGKILL the namespace's init (the kernel kills the
    rest); ``subreaper`` and ``tag-only``: SIGTERM, a grace, SIGKILL to the holder's descendants and the tagged
    (:func:`proctree.end`). Returns what is still alive after ``wait_s`` seconds (empty: the container is empty).
    Raises nothing."""
    if c.kind == CGROUP_V2 and c.path:
        path = Path(c.path)
        if path.is_dir():
            _kill_cgroup(path)
            _rmdir_wait(path, wait_s)
    elif c.kind == PID_NAMESPACE:
        for init in _pidns_inits(c.name, c.tag):
            proctree.end([init], grace_s=0.0)
    if c.kind in (SUBREAPER, TAG_ONLY, PID_NAMESPACE):
        proctree.end(members(c), find_more=lambda: members(c), grace_s=min(2.0, wait_s))
    deadline = time.monotonic() + wait_s
    while (left := members(c)) and time.monotonic() < deadline:
        if c.kind == CGROUP_V2 and c.path and Path(c.path).is_dir():
            _kill_cgroup(Path(c.path))
        time.sleep(_POLL_S)
    return left


def end_named(name: str) -> list[proctree.Proc]:
    """End ``name``'s container whatever its kind, found without a record: its cgroup under any ``live-trial``
    subtree, the PID namespaces and subreaper holders carrying its tag. Returns what is still alive (empty: all
    gone). What ``Backend.kill_session`` does after the kill, so a session killed by ``reap`` or by hand leaves nothing
    in its container either. Raises nothing."""
    left: list[proctree.Proc] = []
    box = leftover_cgroups().get(name)
    if box is not None:
        left += end(box)
    box = Container(TAG_ONLY, name)
    if _pidns_inits(name, box.tag):
        left += end(Container(PID_NAMESPACE, name))
    if holders(name, box.tag):
        left += end(Container(SUBREAPER, name))
    return left


def _kill_cgroup(path: Path) -> None:
    kill = path / "cgroup.kill"
    try:
        if kill.exists():
            kill.write_text("1\n")
            return
        (path / "cgroup.freeze").write_text("1\n")       # nothing forks while each pid is killed
        for pid in cgroup_pids(path):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        (path / "cgroup.freeze").write_text("0\n")
    except OSError:
        for pid in cgroup_pids(path):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _rmdir_wait(path: Path, wait_s: float) -> bool:
    """Remove ``path`` and its child cgroups once they are empty, waiting up to ``wait_s``; True when gone."""
    deadline = time.monotonic() + wait_s
    while True:
        for sub in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [path]:
            try:
                sub.rmdir()
            except OSError:
                pass
        if not path.exists() or time.monotonic() >= deadline:
            return not path.exists()
        time.sleep(_POLL_S)


def leftover_cgroups(mountinfo: str | None = None, cgroup_file: str | None = None) -> dict[str, Container]:
    """The cgroups under every ``live-trial`` subtree (by name) an earlier harness may have left: what ``reap`` matches
    against the trials it knows (:mod:`live_trial.trial.orphans`)."""
    out: dict[str, Container] = {}
    for base in v2_bases(mountinfo, cgroup_file):
        try:
            subs = sorted(p for p in base.iterdir() if p.is_dir())
        except OSError:
            continue
        for sub in subs:
            out.setdefault(sub.name, Container(CGROUP_V2, sub.name, str(sub)))
    return out
