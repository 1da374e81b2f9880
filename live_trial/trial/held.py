"""The trial's container, from boot to collect (README "Nothing left running").

Before boot the trial gets its container (:func:`hold`: the strongest kind :mod:`live_trial.session.containment`
finds and ``LIVE_TRIAL_CONTAINMENT`` allows, recorded in ``trial-state.json`` so a resume or ``reap`` ends it); the
pane's command is the holder that enters it. At the end (:func:`finish_session`) the pane is captured, the session
killed, and the container ended and verified empty BEFORE collect reads the workdir: nothing of the session runs
while the harness writes its records. A process that survives is the environment's failure (BLOCKED
``processes_left``), named in the notes. The verdict's notes say which containment held the trial.

Works on a trial through its public parts (:class:`~live_trial.trial.context.TrialContext`, and the runner's
``note_alternate_screen`` and ``transcript_path``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.session import containment, proctree
from live_trial.stop_reasons import StopReason
from live_trial.transcript.paths import subagents_dir
from live_trial.trial import activity
from live_trial.trial.collect import collect
from live_trial.trial.facts import phase_at_least
from live_trial.trial.folder_steps import folder_changes, side_effects_recorded, snapshot_problem
from live_trial.trial.moves import collect_moved
from live_trial.trial.seal import Sealer, seal_records

EVALUATOR_SUFFIX = containment.EVALUATOR_SUFFIX


def hold(trial: Any, name: str | None = None) -> containment.Container:
    """Make the container for the trial's session (or ``name``: the evaluator's) and record it in the state
    (``containment``, or ``evaluator_containment`` for a name that is not the session's). Raises RefusedInput for a
    bad ``LIVE_TRIAL_CONTAINMENT``."""
    assert trial.state is not None
    session = trial.state.session
    box = containment.create(name or session, trial.env)
    trial.journal.save(**{"containment" if box.name == session else "evaluator_containment": box.to_json()})
    trial.journal.log("contain", box.kind, name=box.name, path=box.path)
    return box


def recorded(doc: dict[str, Any] | None) -> containment.Container | None:
    """The container a state's record names, or None."""
    return containment.Container.from_json(doc) if doc else None


def finish_session(trial: Any) -> None:
    """Capture the pane, kill the session, end its container (verified empty), then collect what exists (once) and
    reap orphans. A trial already past collecting (a resume) only ends what may be left. Never raises."""
    if trial.wd is None or trial.state is None:
        return
    session = trial.state.session
    ended = False
    try:
        if phase_at_least(trial.state.phase, "evaluating") or trial.state.collected:
            return                      # collected before the kill a resume continues from: only end processes
        trial.journal.save(phase="collecting")
        pane_text = None
        if trial.backend is not None and session and trial.backend.has_session(session):
            pane_text = trial.backend.capture(session, scrollback=True)
            trial.note_alternate_screen(session)
        if session:
            end_processes(trial, session)       # nothing of the session runs while collect reads the workdir
            ended = True
        tpath = trial.transcript_path() if trial.backend is not None else None
        subagents = subagents_dir(tpath) if tpath is not None else None
        snapshot_changed(trial)
        got = collect(trial.wd.root, pane_text=pane_text, transcript_src=tpath, subagents_src=subagents,
                      sealer=(sealer := Sealer(trial.wd.root)), **folder_changes(trial))
        debug_log = activity.private_log(trial.wd.root)
        sealer.file(debug_log)      # the CLI's record of the plugins' hooks and servers (trial/activity.py)
        moved = collect_moved(trial)
        trial.journal.log("collect", "complete" if got.complete else "partial", missing=got.missing,
                          out_files=got.out_files, side_effects=got.side_effects,
                          **({"moved_from": moved} if moved else {}))
        side_effects_recorded(trial)
        trial.journal.save(collected=True)
        seal_records(trial.wd.root, sealer, moved, keep=lambda digest: trial.journal.save(records_seal=digest))
    except Exception as exc:  # noqa: BLE001 - cleanup must go on
        trial.journal.log("collect", "error", problem=f"{type(exc).__name__}: {exc}")
    finally:
        if session and not ended:
            end_processes(trial, session)


def snapshot_changed(trial: Any) -> None:
    """The trial folder's snapshot at start no longer has the digest recorded when it was written
    (:func:`live_trial.trial.folder_steps.snapshot_problem`; the one in memory, also in trial-state.json): the side
    effects are not measured against it, and the trial stops as ``records_tampered`` (the skill's doing: its session
    could write there), completion FAIL, a note saying so; a trial already BLOCKED only gets the note (README "What a
    trial leaves behind")."""
    problem = snapshot_problem(trial.state.to_doc())
    if problem is None:
        return
    if problem not in trial.facts.notes:
        trial.facts.notes.append(problem)
    if not trial.facts.blocked:
        trial.facts.completion, trial.facts.stop_reason = "FAIL", StopReason.RECORDS_TAMPERED
    trial.journal.log("records", StopReason.RECORDS_TAMPERED.value, when="at_collect", found=[problem])


def end_processes(trial: Any, session: str) -> None:
    """Kill the session (its process tree walked first), end its container and verify it is empty, then end whatever
    still carries the trial's tag and the evaluator recorded in the state (a resume's leftovers). A process that
    will not die: BLOCKED ``processes_left`` with its pids and commands in the notes. Before the kill it looks for what
    the container does not hold (:func:`outside`): a process of a ``cgroup-v2`` session that left the cgroup (ended,
    then BLOCKED ``processes_left`` naming it, and no note says the cgroup held it), and for ``tag-only`` the tagged
    processes outside the pane's tree (named in the note). Never raises."""
    box = recorded(trial.state.containment) or containment.Container(containment.TAG_ONLY, session)
    escaped, strays, commands = outside(trial, box, session)
    if trial.backend is not None:
        try:
            killed = trial.backend.kill_session(session)
            trial.journal.log("cleanup", "kill_session", session=session, killed=bool(killed))
        except Exception as exc:  # noqa: BLE001 - tmux may be gone; the processes are ended below all the same
            trial.journal.log("cleanup", "error", problem=f"{type(exc).__name__}: {exc}")
    try:
        state = trial.state
        left = containment.end(box)
        left += containment.end_named(session)      # one the state could not record (a disk that refused it)
        ev = state.evaluator
        left += proctree.end([proctree.Proc(ev["pid"], ev["start"])] if ev else [],
                             find_more=lambda: proctree.tagged(session))
        ev_box = recorded(state.evaluator_containment)
        if ev_box is not None:
            left += containment.end(ev_box)
        if ev or ev_box:
            trial.journal.save(evaluator=None, evaluator_containment=None)
        left += proctree.end(escaped + strays, grace_s=1.0)
        note_containment(trial, box, left, escaped=escaped, strays=strays, commands=commands)
        if trial.backend is not None:
            removed = trial.backend.reap()
            if removed:
                trial.journal.log("cleanup", "reap", removed=removed)
    except Exception as exc:  # noqa: BLE001
        trial.journal.log("cleanup", "error", problem=f"{type(exc).__name__}: {exc}")


def outside(trial: Any, box: containment.Container, session: str
            ) -> tuple[list[proctree.Proc], list[proctree.Proc], dict[proctree.Proc, str]]:
    """``(escaped, strays, commands)`` before the session is killed: the processes of a ``cgroup-v2`` session outside
    its cgroup (:func:`containment.escaped`), and for ``tag-only`` the processes carrying the trial's tag outside the
    pane's process tree (daemons only the tag finds), and each one's command line read now. Never raises."""
    try:
        escaped = containment.escaped(box)
        strays: list[proctree.Proc] = []
        if box.kind == containment.TAG_ONLY:
            row = trial.backend.pane(session) if trial.backend is not None else None
            tree = set(proctree.descendants(row.pane_pid)) if row is not None and not row.dead else set()
            strays = [p for p in proctree.tagged(session) if p not in tree]
        return escaped, strays, {p: _command(p.pid) for p in escaped + strays}
    except Exception as exc:  # noqa: BLE001 - the ending below goes on
        trial.journal.log("cleanup", "error", problem=f"{type(exc).__name__}: {exc}")
        return [], [], {}


def _named(procs: Sequence[proctree.Proc], commands: Mapping[proctree.Proc, str]) -> str:
    return ", ".join(f"{p.pid} ({commands.get(p) or _command(p.pid)})" for p in sorted(set(procs), key=lambda p: p.pid))


def note_containment(trial: Any, box: containment.Container, left: list[proctree.Proc], *,
                     escaped: Sequence[proctree.Proc] = (), strays: Sequence[proctree.Proc] = (),
                     commands: Mapping[proctree.Proc, str] | None = None) -> None:
    """The verdict's note naming the containment (once), and for survivors the BLOCKED ``processes_left`` stop. A
    process that left the cgroup (``escaped``): BLOCKED ``processes_left`` naming it, and the note says the cgroup did
    not hold it. ``tag-only``: the note says what the tag cannot see, and names the tagged ``strays`` it ended."""
    note = box.note()
    if escaped:
        note = (f"{containment.NOTE_PREFIX}{box.kind}: the cgroup v2 subtree {box.path} did not hold every process "
                f"of the trial: {len(set(escaped))} left it before the end: "
                f"{_named(escaped, commands or {})}")
    elif box.kind == containment.TAG_ONLY:
        note += ("; a process that cleared its environment (e.g. setsid env -i) and left the pane's process tree "
                 "cannot be seen by tag-only containment, so one may still run; tagged processes outside the tree "
                 "ended at the end: " + (_named(strays, commands or {}) if strays else "none"))
    if not any(n.startswith(containment.NOTE_PREFIX) for n in trial.facts.notes):
        trial.facts.notes.append(note)
    trial.journal.log("cleanup", "contained", held_by=box.kind, path=box.path, left=[p.pid for p in left],
                      escaped=[p.pid for p in escaped], strays=[p.pid for p in strays])
    if not left and not escaped:
        return
    what = _named(list(left) + list(escaped), commands or {})
    trial.facts.blocked, trial.facts.stop_reason = True, StopReason.PROCESSES_LEFT
    trial.facts.notes.append(f"{StopReason.PROCESSES_LEFT.why}: {what}")
    trial.journal.log("cleanup", "processes_left", pids=sorted({p.pid for p in list(left) + list(escaped)}),
                      problem=what)


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)[:120] or "?"
