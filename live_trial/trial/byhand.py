"""A trial driven step by step by a person (or an agent) instead of ``run`` (seed 001 uses the harness that way:
plan, boot, send, poll re-called with its state file until a terminal exit, collect, evaluate, verdict, reap; README
"The steps, one by one").

- :func:`prepare` makes what ``run`` makes before boot, through the same code (:mod:`live_trial.trial.start`,
  :func:`live_trial.trial.folder_steps.prepare`): the workdir, ``task.md``, ``trial-state.json`` (phase
  ``prepared``) and the trial's own folder with its snapshot at start; for a rehearsal, the isolated config and the
  port the scripted model will be served on. :func:`next_commands` are the steps that follow, with their real
  arguments.
- The session ``boot`` starts for it holds a lease (:class:`~live_trial.session.rules.Lease`): ``reap`` and ``run``
  keep it while the workdir's owner process lives or until its time-to-live runs out, and each step renews it.
- :func:`record_boot`, :func:`collect_by_hand` and :func:`release_copy` are what ``boot --workdir``, ``collect`` and
  ``backend kill-session`` do with a prepared workdir; :func:`verdict_by_hand` is ``verdict`` on any trial's workdir,
  through the same steps as the end of ``run`` (:func:`live_trial.trial.finish.record_verdict`).
"""
from __future__ import annotations

import shlex
import shutil
import socket as socketlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from live_trial.errors import SESSION_GONE, PollExit, RefusedInput
from live_trial.jsonfile import read_json, write_json
from live_trial.rehearsal.config import seed_config
from live_trial.transcript.paths import subagents_dir
from live_trial.trial import folder, folder_steps, start
from live_trial.trial.collect import Collected, collect
from live_trial.trial.facts import TrialRequest
from live_trial.trial.folder_steps import changes_since_start, snapshot_problem
from live_trial.trial.state import STATE_SCHEMA
from live_trial.workdir_files import CWD_SNAPSHOT, MARKER_PATH, POLL_STATE, Workdir

if TYPE_CHECKING:       # types only: imported where they are used, to keep start-up quick
    from live_trial.acceptance.claims import Claims, ServiceStop, TrialRecords
    from live_trial.acceptance.verdict_doc import Verdict

PREPARED = "prepared"
#: The lines of ``pane.txt`` (the last screen with scrollback) read for an error line: about one screen.
SCREEN_LINES = 60
NO_SNAPSHOT = (f"no snapshot of the trial's folder at start ({CWD_SNAPSHOT}): its side effects cannot be known, "
               "so none are recorded")


@dataclass
class Prepared:
    """A prepared workdir: its path, its trial-state, the target skill's folder, and notes for the person."""

    workdir: Path
    state: dict[str, Any]
    skill_dir: Path
    notes: list[str] = field(default_factory=list)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick), for the rehearsal server of a prepared
    trial. Another process may take it before the server starts: ``rehearsal serve`` then fails naming the port."""
    with socketlib.socket(socketlib.AF_INET, socketlib.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare(req: TrialRequest, *, owner_pid: int, ttl_s: float, env: Mapping[str, str] | None = None,
            delivery: bool = False) -> Prepared:
    """Make a trial ready for the steps by hand and return it (see the module docstring).

    ``req``: a :class:`~live_trial.trial.facts.TrialRequest` checked as ``run`` checks it
    (:func:`live_trial.trial.inputs.validate`: bad input is refused, nothing created). ``owner_pid``: the process the
    lease of the session follows (trial-state ``owner_pid``); ``ttl_s``: the lease's time-to-live in seconds
    (trial-state ``lease_ttl_s``); ``delivery``: the first artifact waits for the person's choice (trial-state
    ``delivery``; :mod:`live_trial.acceptance.delivery_state`). Raises :class:`RefusedInput` (exit 2, nothing
    created) and :class:`~live_trial.errors.Blocked` (exit 3) when the folder cannot be made (the workdir is removed
    again)."""
    # imported here: the runner brings boot, send, the rehearsal server and the evaluator, which `collect`,
    # `verdict` and `backend kill-session` (the other users of this module) never need at start-up
    from live_trial.trial.inputs import validate
    from live_trial.trial.runner import Trial

    trial = Trial(req, env=dict(env) if env is not None else None)
    validate(trial)
    notes: list[str] = []
    try:
        start.create(trial)
        assert trial.wd is not None and trial.state is not None and trial.target is not None
        try:
            folder_steps.prepare(trial)
            if req.rehearsal is not None:
                config = trial.wd.claude_config
                seed_config(config, [req.cwd])
                trial.journal.save(config_dir=str(config),
                                   rehearsal={"scenario": str(req.rehearsal), "port": free_port()})
            trial.journal.save(phase=PREPARED, owner_pid=int(owner_pid), lease_ttl_s=float(ttl_s),
                               delivery=True if delivery else None)
        except BaseException:
            shutil.rmtree(trial.wd.root, ignore_errors=True)     # nothing half-made stays behind
            raise
    finally:
        if trial.folder_lock is not None:
            trial.folder_lock.release()
            trial.folder_lock = None
            notes.append(f"the trial works in {req.cwd} itself; by hand no lock holds it between the steps: start no "
                         "other trial there until you are done")
    if (trial.state.folder or {}).get("form") == folder.COPY:
        notes.append(f"the copy {(trial.state.folder or {})['path']} is removed by `backend kill-session` once collect "
                     "recorded its side effects")
    return Prepared(workdir=trial.wd.root, state=trial.state.to_doc(), skill_dir=Path(trial.target.skill_dir),
                    notes=notes)


def shell_values(p: Prepared) -> dict[str, str]:
    """The values the README's steps use as shell variables: ``WORKDIR``, ``SESSION``, ``SESSION_ID``, ``CWD`` (where
    the session works) and, for a rehearsal, ``CONFIG_DIR`` (its isolated Claude Code config) and ``PORT``."""
    values = {"WORKDIR": str(p.workdir), "SESSION": p.state["session"], "SESSION_ID": p.state["session_id"],
              "CWD": p.state["cwd"]}
    if p.state.get("rehearsal"):
        values.update(CONFIG_DIR=p.state["config_dir"], PORT=str(p.state["rehearsal"]["port"]))
    return values


def next_commands(p: Prepared, *, socket: str | None = None) -> list[str]:
    """The steps after ``prepare``, in order, with their real arguments, one shell command line each (a line starting
    with ``#`` says what the next one needs): the rehearsal server (in the background), boot, send, poll with its
    state file, collect, evaluate, verdict (which reads the launch and the completion from the workdir's records, so
    the same line serves after any poll exit), kill-session, reap, and stopping the server."""
    s, q = p.state, shlex.quote
    wd, cwd, session = p.workdir, s["cwd"], s["session"]
    files = Workdir.of(wd)
    sock = f" --socket {q(socket)}" if socket else ""
    rehearsal = s.get("rehearsal")
    lines = []
    boot = (f"live-trial boot {q(session)} {q(cwd)} --workdir {q(str(wd))} --target-skill {q(s['target'])} "
            f"--plugins-root {q(s['plugins_root'])} --session-id {q(s['session_id'])}")
    if s.get("model"):
        boot += f" --model {q(s['model'])}"
    if s.get("proof"):
        boot += " --proof"
    if rehearsal:
        lines.append(f"live-trial rehearsal serve {q(rehearsal['scenario'])} --port {rehearsal['port']} --cwd {q(cwd)} "
                     f"--config-dir {q(s['config_dir'])} &")
        boot += f" --rehearsal-server http://127.0.0.1:{rehearsal['port']} --config-dir {q(s['config_dir'])}"
    evaluate = f"live-trial evaluate --workdir {q(str(wd))}" + (f" --rehearsal {q(rehearsal['scenario'])}"
                                                                  if rehearsal else "")
    lines += [boot + sock,
              f"live-trial send {q(session)} {q(str(files.task))}{sock}",
              f"live-trial poll {q(str(files.marker))} {q(session)} "
              f"--state-file {q(str(files.poll_state))}{sock}",
              f"live-trial collect --workdir {q(str(wd))}{sock}"]
    if s.get("delivery"):
        lines.append("# the first artifact: the goal is not judged before the person's choice (no evaluate yet)")
    else:
        lines.append(evaluate)
    lines.append("# launch, completion and the last poll exit are read from the transcript and poll-state.json")
    verdict = (f"live-trial verdict --workdir {q(str(wd))} --target-skill {q(s['target'])} "
               f"--skill-dir {q(str(p.skill_dir))} --session-id {q(s['session_id'])}")
    if s.get("args"):
        verdict += f" --args {q(s['args'])}"
    if s.get("model"):
        verdict += f" --requested-model {q(s['model'])}"
    if s.get("proof"):
        verdict += " --proof"
    if rehearsal:
        verdict += f" --rehearsal-scenario {q(rehearsal['scenario'])}"
    lines += [verdict,
              f"live-trial backend{sock} kill-session {q(session)}",
              f"live-trial reap{sock}"]
    if rehearsal:
        lines.append("kill %1")
    if s.get("delivery"):
        lines += delivery_commands(wd, evaluate, verdict, sock)
    return lines


def delivery_commands(wd: Path, evaluate: str, verdict: str, sock: str) -> list[str]:
    """The steps of seed 001 ``artifact_delivery`` after the first artifact's verdict and the reap: the guards and the
    presentation, the person's choice, and (light, standard, detailed) the fresh evaluator and the verdict completed;
    the loop's ticket and rounds follow in the skill (README "Use it from Claude Code")."""
    record = f"live-trial delivery record {shlex.quote(str(wd))}{sock} --event"
    return [f"{record} minimum_guard_pass",
            f"{record} present_actual_artifact",
            "# ask the person once: accept-as-is, light, standard or detailed; then record it and its event",
            f"{record} record_user_choice --choice CHOICE",
            f"{record} CHOICE",
            "# accept-as-is ends here (handoff_complete); light, standard, detailed: the fresh evaluator judges",
            evaluate, verdict]


def read_state(workdir: Path) -> dict[str, Any] | None:
    """The workdir's trial-state.json (schema-checked), or None when it has none (a workdir made by hand).
    Raises :class:`~live_trial.errors.SchemaInvalid` when it does not fit its schema."""
    path = Workdir.of(workdir).trial_state
    return read_json(path, STATE_SCHEMA) if path.is_file() else None


def prepared_state(workdir: Path, session: str, *, cwd: Path | None = None,
                   target: str | None = None) -> dict[str, Any]:
    """The trial-state of a workdir ``prepare`` made for ``session``. Raises :class:`RefusedInput` (exit 2, nothing
    changed) when the workdir was not prepared, or was prepared for another session, another folder (``cwd``: where
    the session would start) or another target."""
    state = read_state(workdir)
    if state is None or state.get("phase") != PREPARED:
        raise RefusedInput("the workdir was not made by `live-trial prepare`", where=f"--workdir {workdir}",
                           code="not_prepared", fix="run `live-trial prepare <plugin:skill>` and use the workdir it "
                                                    "prints, or boot without --workdir")
    if state["session"] != session:
        raise RefusedInput(f"the workdir was prepared for session {state['session']}, not {session}",
                           where=f"--workdir {workdir}", code="session_mismatch",
                           fix=f"boot {state['session']} (the name prepare printed)")
    if cwd is not None and Path(cwd).resolve() != Path(state["cwd"]).resolve():
        raise RefusedInput(f"the workdir's trial works in {state['cwd']}, not {cwd}", where=f"--workdir {workdir}",
                           code="cwd_mismatch", fix="boot in the folder prepare printed: its start is what the side "
                                                    "effects are measured against")
    if target is not None and target != state["target"]:
        raise RefusedInput(f"the workdir was prepared for {state['target']}, not {target}",
                           where=f"--workdir {workdir}", code="target_mismatch",
                           fix=f"pass --target-skill {state['target']}")
    return state


def record_boot(workdir: Path, state: dict[str, Any], **facts: Any) -> None:
    """Add what boot established (``pane_pid``, ``claude_bin``, ``claude_version``, ``config_dir``) to the prepared
    workdir's trial-state.json (schema-checked, atomic)."""
    write_json(Workdir.of(workdir).trial_state, {**state, **facts}, STATE_SCHEMA)


def collect_by_hand(workdir: Path, state: dict[str, Any] | None, *, pane_text: str | None, transcript: Path | None,
                    cwd: Path) -> tuple[Collected, list[str]]:
    """``collect`` of one workdir: :func:`live_trial.trial.collect.collect` with the side effects measured against the
    trial folder's snapshot at start when the workdir has one (a prepared workdir; measured again at each collect),
    then trial-state ``folder.recorded``. Returns ``(Collected, notes)``; a workdir without a snapshot gets
    :data:`NO_SNAPSHOT` among the notes and ``cwd-snapshot.json`` among ``missing`` (the collection is partial)."""
    workdir = Path(workdir)
    eval_root = Path(state.get("eval_root") or workdir) if state else workdir
    kw = changes_since_start(state or {}, workdir, eval_root, cwd, again=True)
    subagents = subagents_dir(transcript) if transcript is not None else None
    got = collect(workdir, pane_text=pane_text, transcript_src=transcript, subagents_src=subagents, **kw)
    notes = []
    changed = snapshot_problem(state or {})
    if changed is not None:         # never measured against a snapshot that is not the one written at start
        got.missing.append(CWD_SNAPSHOT)
        notes.append(changed)
    elif kw["before"] is None:
        got.missing.append(CWD_SNAPSHOT)
        notes.append(NO_SNAPSHOT)
    elif state and isinstance(state.get("folder"), dict) and kw["cwd"] is not None:
        write_json(Workdir.of(workdir).trial_state, {**state, "folder": {**state["folder"], "recorded": True}},
                   STATE_SCHEMA)
    return got, notes


def release_copy(workdir: Path) -> tuple[Path | None, str | None]:
    """After ``backend kill-session`` of a prepared trial's session: remove the copy of ``--cwd DIR`` the trial ran
    in (exactly the folder its state records as a copy the harness made and may delete) once collect recorded its
    side effects, and mark it removed. Returns ``(removed folder or None, why it was kept or None)``."""
    state = read_state(workdir)
    if state is None or state.get("phase") != PREPARED:
        return None, None
    copy = folder.harness_copy(state.get("folder"), Path(workdir))
    if copy is None:
        return None, None
    if not state["folder"].get("recorded"):
        return None, (f"kept the trial's copy {copy}: its side effects were not collected yet (run "
                      f"`live-trial collect --workdir {workdir}`, then remove it)")
    if copy.exists():
        folder.remove_tree(copy)
    wd = Workdir.of(workdir)
    write_json(wd.trial_state, {**state, "folder": {**state["folder"], "removed": True}}, STATE_SCHEMA)
    shutil.rmtree(wd.cwd_baseline, ignore_errors=True)
    return copy, None


def trial_records(workdir: Path, target: str) -> TrialRecords:
    """What ``workdir``'s own records say of the launch and the completion (README "The steps, one by one"): the launch
    check over
    the session's transcripts (:func:`live_trial.transcript.skill_calls.launch_check` of ``target``, as ``run`` does
    it) and the last exit poll-state.json records (:mod:`live_trial.trial.poll_state`). Raises
    :class:`~live_trial.errors.RefusedInput` / SchemaInvalid when poll-state.json cannot be read."""
    from live_trial.acceptance.claims import TrialRecords
    from live_trial.transcript.skill_calls import launch_check, skill_call_records
    from live_trial.trial.poll_state import SCHEMA as POLL_SCHEMA

    files = Workdir.of(workdir)
    transcript = files.transcript.is_file()
    check = launch_check(skill_call_records(*files.session_transcripts), target) if transcript else None
    exits = read_json(files.poll_state, POLL_SCHEMA)["exits"] if files.poll_state.is_file() else []
    stalled = bool(exits) and exits[-1]["exit"] == PollExit.STALL and exits[-1]["reason"] != SESSION_GONE
    return TrialRecords(launch="PASS" if check is not None and check.launched else "FAIL",
                        skill_calls=check.seen if check is not None else "none", transcript=transcript,
                        poll_exit=str(exits[-1]["exit"]) if exits else None,
                        service=service_stop(files) if stalled and transcript else None,
                        screen_service=screen_service_stop(files) if stalled else None,
                        polled=files.poll_state.is_file())


def service_stop(files: Workdir) -> ServiceStop | None:
    """The model's service in the collected transcript's last turn, as poll classified it at its STALL
    (:func:`live_trial.transcript.status.classify` of :func:`live_trial.transcript.turn.read_turn`): the API error
    record the CLI gave up on when its cause is a row that blocks (README "Whose failure it is"); when the model never
    answered the task at all (only API errors, or nothing), ``model_never_answered``; else None."""
    from live_trial.acceptance.claims import ServiceStop
    from live_trial.stop_reasons import blocks
    from live_trial.transcript.status import classify
    from live_trial.transcript.turn import read_turn

    status = classify(read_turn(files.transcript).records)
    if blocks(status.api_error_cause):
        return ServiceStop(str(status.api_error_cause), status.api_error_text or "")
    from live_trial.stop_reasons import StopReason
    from live_trial.transcript.api_errors import refused_for_size
    from live_trial.transcript.reader import assistant_records
    from live_trial.transcript.records import model_answered

    if model_answered(assistant_records(files.session_transcripts)) or refused_for_size(status.api_error_text):
        return None         # a first request refused for its size: the session's api_error (trial/finish.py)
    # the model never answered the task at all: the skill was never reached (as run decides it: trial/finish.py)
    return ServiceStop(StopReason.MODEL_NEVER_ANSWERED.value, status.api_error_text or "")


def screen_service_stop(files: Workdir) -> ServiceStop | None:
    """The error line of the model's service on the last screen collect kept (``pane.txt``, its last
    :data:`SCREEN_LINES` lines: the screen ``run`` reads at STALL row 6), when no record of it is in the transcript:
    a usage limit, a refused key, an unreachable service (:func:`live_trial.transcript.api_errors.screen_error_cause`);
    None for any other screen."""
    from live_trial.acceptance.claims import ServiceStop
    from live_trial.session import screen
    from live_trial.stop_reasons import blocks
    from live_trial.transcript.api_errors import screen_error_cause

    try:
        text = files.pane.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    err = screen.error_screen("\n".join(text.splitlines()[-SCREEN_LINES:])) or ""
    cause = screen_error_cause(err) if err else None
    return ServiceStop(cause, err, on_screen=True) if cause is not None and blocks(cause) else None


def held_note(workdir: Path, notes: Sequence[str]) -> tuple[str, ...]:
    """The verdict note naming the containment ``boot`` held the session in, as ``run``'s verdict has it (README
    "Nothing left running"): ``(note,)`` when trial-state.json records one and ``notes`` lack it, else ``()``."""
    from live_trial.session.containment import NOTE_PREFIX, Container

    path = Workdir.of(workdir).trial_state
    doc = read_json(path, STATE_SCHEMA) if path.is_file() else {}
    if not doc.get("containment") or any(n.startswith(NOTE_PREFIX) for n in notes):
        return ()
    return (Container.from_json(doc["containment"]).note(),)


def check_polled(claims: Claims, records: TrialRecords, workdir: Path, session: str | None = None) -> None:
    """Refuse (:class:`RefusedInput`, exit 2, nothing written) the verdict by hand of a workdir whose poll never ran
    or never ended, and ``run`` recorded no findings for (README "The steps, one by one"): "did not get to the end"
    would blame the skill for a step the person skipped. Taken as said with ``--poll-exit BLOCKED --blocked`` (tmux
    was missing, so poll could not run: seed 001 boot). ``session``: the trial's tmux session, for the fix."""
    if records.poll_exit is not None or (claims.poll_exit == "BLOCKED" and claims.blocked):
        return
    path, (problem, code) = workdir / POLL_STATE, (
        ("poll never ended for this workdir: its poll-state.json records no exit", "poll_not_ended") if records.polled
        else ("poll never ran for this workdir: run poll first", "poll_never_ran"))
    poll = shlex.join(["live-trial", "poll", str(workdir / MARKER_PATH), session or "<session>", "--state-file",
                       str(path)])
    raise RefusedInput(problem, where=str(path), code=code,
                       fix=f"run `{poll}`{' again' if records.polled else ''}, then verdict; if tmux was missing and "
                           "poll could not run, pass --poll-exit BLOCKED --blocked")


def verdict_by_hand(claims: Claims, *, workdir: Path, skill_dir: Path, target: str, plugins_root: Path | None,
                    eval_root: Path | None, env: Mapping[str, str] | None = None) -> tuple[Verdict, Path]:
    """``verdict``: derive and write the verdict of the trial in ``workdir`` (a resolved trial folder) from what it
    holds and what a person says (``claims``: :class:`~live_trial.acceptance.claims.Claims`), as ``run`` derives its
    own (:func:`live_trial.acceptance.claims.settle`, then the steps of :func:`live_trial.trial.finish.record_verdict`).
    ``skill_dir`` / ``target``: ``--skill-dir`` and ``--target-skill``; ``eval_root``: the ledger of a live watch
    (default: the eval root the workdir lies in). Returns ``(Verdict, path)``. Raises what those steps raise
    (RefusedInput, exit 2, nothing written)."""
    from dataclasses import replace

    from live_trial.acceptance.claims import settle, target_of
    from live_trial.acceptance.derive import derive_verdict
    from live_trial.acceptance.evallog import eval_root_of
    from live_trial.acceptance.findings import recorded_findings
    from live_trial.acceptance.verdict import verdict_clock
    from live_trial.acceptance.verdict_facts import gather_facts
    from live_trial.notices.outcome import summariser
    from live_trial.trial import first_artifact
    from live_trial.trial.finish import record_verdict

    resolved, index = target_of(skill_dir, target, plugins_root)
    facts = gather_facts(workdir, resolved, index, scenario_path=claims.rehearsal_scenario,
                         claude_version=claims.claude_version, find_claude_version=True)
    delivery = first_artifact.plan_step(facts.workdir, claims, facts)
    if delivery is not None and delivery.kind == first_artifact.COMPLETE:
        facts = replace(facts, previous_verdict=None)      # completing the first artifact replaces no judgement
    records = trial_records(facts.workdir, resolved.qualified)
    settled = settle(claims, facts, records)
    if recorded_findings(facts.origin.state) is None:
        check_polled(claims, records, facts.workdir, (facts.origin.state or {}).get("session"))
    verdict = derive_verdict(facts, settled.findings, summarise=summariser(settled.findings.lang),
                             clock=verdict_clock(env))
    delivered = (first_artifact.note_of(delivery),) if delivery is not None else ()
    verdict = replace(verdict, notes=verdict.notes + settled.notes + delivered
                      + held_note(facts.workdir, verdict.notes), override=settled.override)
    if delivery is not None:
        first_artifact.keep_first(facts.workdir, delivery)
    written = record_verdict(verdict, workdir=facts.workdir, eval_root=eval_root or eval_root_of(facts.workdir),
                             objective=str(resolved.frontmatter.get("description") or ""), log=lambda *a, **k: None)
    if delivery is not None:
        first_artifact.after_write(facts.workdir, delivery, written[0].to_doc(), settled.findings.lang)
    return written
