"""The model's side of a trial: what the trial's CLI (its session and its evaluator) talks to.

- a live trial: the model's API, as the person's environment names it; nothing to start;
- a recorded live trial (``run --record``): a recording proxy in front of that API, whose tape is
  ``<workdir>/model-tape.jsonl`` (README "Replaying a real trial offline");
- a rehearsal (``run --rehearsal SCENARIO``): the scripted model server, which stops the trial BLOCKED
  ``scenario_unmatched`` at the first request no rule of the scenario answers, naming it;
- a replay (``run --replay TAPE``): a rehearsal whose server answers from the tape and stops the trial BLOCKED
  ``replay_diverged`` at the first request the tape does not cover, naming the turn and the first difference.

A recorded trial runs its CLI with the variables a rehearsal and a replay set to keep it quiet
(:data:`RECORDING_ENV`): the requests the CLI sends depend on them (observed on 2.1.197 and 2.1.332:
references/transcript-jsonl.md "Two runs of one trial, request by request"), and a tape must hold the requests its
replay will send.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from live_trial.acceptance.activation import ActivationSession
from live_trial.acceptance.case_verdict import CaseRun
from live_trial.errors import Blocked
from live_trial.rehearsal.config import rehearsal_env, seed_config
from live_trial.rehearsal.scenario import load_scenario
from live_trial.rehearsal.server import RehearsalServer
from live_trial.rehearsal.unmatched import Unmatched
from live_trial.stop_reasons import StopReason
from live_trial.tape.diverge import Divergence
from live_trial.tape.file import TapeEntry, TapeRecorder, read_tape
from live_trial.tape.normalize import Roots
from live_trial.tape.proxy import RecordingProxy, upstream_of
from live_trial.tape.replay import TapeServer
from live_trial.trial.context import TrialContext

#: What a recorded trial's session and evaluator run with, as every rehearsal's do (rehearsal.config.rehearsal_env):
#: no title query, no telemetry, no update check.
RECORDING_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                 "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1"}
#: The CLI release in a tape line's ``client`` (``claude-cli/2.1.332 (external, cli)``).
_CLI_VERSION = re.compile(r"claude-cli/(\S+)")


def roots(trial: TrialContext, config_dir: Path) -> Roots:
    """The trial's paths a request may name (:class:`~live_trial.tape.normalize.Roots`): its workdir, its own folder,
    the CLI config folder ``config_dir``, the plugins root and the home folder."""
    assert trial.wd is not None and trial.state is not None
    folder = (trial.state.folder or {}).get("path") or str(trial.req.cwd)
    return Roots.of(workdir=trial.wd.root, folder=folder, config=config_dir, plugins=trial.req.plugins_root,
                    home=trial.env.get("HOME") or os.path.expanduser("~"))


def start(trial: TrialContext, port: int = 0) -> None:
    """Start the trial's model side on ``port`` (0: a free one) and point the child processes at it
    (``trial.child_overrides``), recorded in trial-state.json (``rehearsal`` or ``recording``) so a resume starts it
    again on the same port. Nothing for a plain live trial. Raises OSError when the port is taken and
    RefusedInput for a scenario or tape that became unreadable since the input checks (a resume)."""
    req = trial.req
    assert trial.wd is not None
    if req.record:
        _start_recording(trial, port)
        return
    if req.rehearsal is None:
        return
    config_dir = trial.wd.claude_config
    if not (config_dir / ".claude.json").exists():
        seed_config(config_dir, [req.cwd])
    server: RehearsalServer | TapeServer
    if req.replay:
        trial.tape = trial.tape if trial.tape is not None else read_tape(req.rehearsal)
        _note_tape(trial, trial.tape)
        server = TapeServer(trial.tape, roots(trial, config_dir), log=trial.wd.replay_log,
                            on_divergence=lambda div: trial.journal.log("replay", "diverged",
                                                                        problem=div.sentence(),
                                                                        tape_seq=div.tape_seq),
                            port=port)
    else:
        trial.scenario = trial.scenario if trial.scenario is not None else load_scenario(req.rehearsal)
        run = CaseRun.from_doc(trial.state.case_run if trial.state is not None else None)   # also after a resume
        prompt = ActivationSession.from_doc(trial.state.activation if trial.state is not None else None)
        attempt = run.attempt if run is not None else prompt.repeat if prompt is not None else 1
        server = RehearsalServer(trial.scenario, port=port, attempt=attempt,
                                 on_unmatched=lambda missed: _note_unmatched(trial, missed))
    server.start()
    trial.server = server
    trial.child_overrides = rehearsal_env(server.url, config_dir)
    played = {"tape": True} if req.replay else {}
    trial.journal.save(config_dir=str(config_dir),
                       rehearsal={"scenario": str(req.rehearsal), "port": server.port, **played})
    what = "the tape" if req.replay else "the scenario"
    trial.journal.log("rehearsal", "server_started", url=server.url,
                      note=f"the model is played from {what}: a PASS proves the harness path, not the skill")


def _note_tape(trial: TrialContext, tape: list[TapeEntry]) -> None:
    """The verdict's note naming the tape and the CLI that recorded it, and a warning when this trial runs another
    release (its requests then differ from the recorded ones from the first turn: references/transcript-jsonl.md "Two
    runs of one trial, request by request"). Once, also after a resume."""
    recorded = sorted({m.group(1) for e in tape if (m := _CLI_VERSION.search(e.client))})
    note = (f"the model's answers were replayed from the tape {trial.req.rehearsal} ({len(tape)} requests, recorded "
            f"with claude {', '.join(recorded) or 'of an unknown version'})")
    if note not in trial.facts.notes:
        trial.facts.notes.append(note)
    running = trial.claude.version if trial.claude is not None else None
    if running and running != "unknown" and recorded and running not in recorded:
        warning = (f"the tape was recorded with claude {', '.join(recorded)} and is replayed with claude {running}: "
                   "another release sends other requests, so the replay may leave the tape at its first turn")
        if warning not in trial.facts.warnings:
            trial.facts.warnings.append(warning)


def _start_recording(trial: TrialContext, port: int) -> None:
    """The recording proxy in front of the API the environment names, its tape in the workdir."""
    assert trial.wd is not None
    upstream = upstream_of(trial.env)
    recorder = TapeRecorder(trial.wd.model_tape, roots(trial, trial.config_dir()))
    proxy = RecordingProxy(upstream, recorder.record, env=trial.env, port=port, first_seq=recorder.lines + 1).start()
    trial.server, trial.tape_recorder = proxy, recorder
    trial.child_overrides = {"ANTHROPIC_BASE_URL": proxy.url, **RECORDING_ENV}
    trial.journal.save(recording={"port": proxy.port, "upstream": upstream})
    trial.journal.log("recording", "proxy_started", url=proxy.url, upstream=upstream, tape=str(trial.wd.model_tape))


def _note_unmatched(trial: TrialContext, missed: Unmatched) -> None:
    trial.journal.log("rehearsal", "unmatched", problem=missed.sentence(), role=missed.role)


def divergence(trial: TrialContext) -> Divergence | None:
    """The first request of a replay its tape did not cover, or None (not a replay, or none yet)."""
    return trial.server.diverged if isinstance(trial.server, TapeServer) else None


def uncovered(trial: TrialContext) -> tuple[StopReason, str] | None:
    """``(stop reason, sentence)`` once the model's side met a request its input does not cover: a replay's tape
    (``replay_diverged``, the turn and the first difference) or a rehearsal's scenario (``scenario_unmatched``, the
    request no rule answers); None otherwise. Either is the harness's input, never the skill's doing."""
    div = divergence(trial)
    if div is not None:
        return StopReason.REPLAY_DIVERGED, f"the tape does not cover this run: {div.sentence()}"
    missed = trial.server.unmatched if isinstance(trial.server, RehearsalServer) else None
    if missed is not None:
        return StopReason.SCENARIO_UNMATCHED, f"the scenario does not cover this run: {missed.sentence()}"
    return None


def check_divergence(trial: TrialContext) -> None:
    """Raise :class:`Blocked` once the model's side met a request its input does not cover (:func:`uncovered`):
    ``replay_diverged`` naming the turn and the first difference, ``scenario_unmatched`` naming the request no rule
    answers. Checked between poll ticks, so the trial stops within a tick, never after the STALL limit."""
    found = uncovered(trial)
    if found is None:
        return
    code, sentence = found
    fix = ("see replay-log.jsonl; record the trial again if the skill was meant to change"
           if code == StopReason.REPLAY_DIVERGED else
           "add a rule that answers it to the scenario (references/scenario-format.md)")
    raise Blocked(sentence, code=code, fix=fix)


def recording_problems(trial: TrialContext) -> list[str]:
    """What the recorder could not write (each a sentence for the verdict's notes); empty when it wrote every line."""
    return list(trial.tape_recorder.problems) if trial.tape_recorder is not None else []
