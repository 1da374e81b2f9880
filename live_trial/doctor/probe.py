"""The doctor's rehearsal probe: one short session of the real ``claude`` in tmux against the project's rehearsal
server, driven by the harness's own functions, and the :class:`~live_trial.doctor.checks.Report` of what held.

What it plays (:mod:`live_trial.doctor.kit`): boot with the bypass dialog shown, the probe plugin loaded (a skill,
a Stop hook that blocks once, a PostToolUse hook that fails once and one that times out, two MCP servers) and the
session's debug log and stand-in MCP server given as a trial gives them (``--debug-file``, ``--mcp-config``); the
task pasted once the MCP servers said how their start went; a multi-line paste; a Skill call, a tool call (the reply
delayed so the spinner shows) and a background shell the model waits for; the Stop hook's one extra reply; a second
prompt answered through an AskUserQuestion gate, then a call of the stand-in's tool; meanwhile ``claude -p
--output-format json --json-schema`` (the evaluator's call), ``claude plugin validate`` on the probe plugin and, once
the first boot is READY, a second boot in a git work tree under a trusted folder (:mod:`live_trial.doctor.trust`).
About 10 s (6-11 s seen on both supported versions, 14 s once under load). The screen is read through a backend
that keeps every capture boot and the probe take, so a changed dialog is reported with what it showed. Never raises
for what the CLI does; raises :class:`~live_trial.errors.Blocked` when tmux or claude is missing.
"""
from __future__ import annotations

import os
import secrets
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, cast

from live_trial.clock import run_id_time
from live_trial.doctor import activity, kit, trust
from live_trial.doctor.checks import Checks, Report
from live_trial.doctor.recording import Recording
from live_trial.doctor.records import judge_records, judge_rehearsal, shown, tool_answer
from live_trial.errors import LiveTrialError
from live_trial.judge.evaluator import build_argv, parse_output, run_process
from live_trial.rehearsal.config import rehearsal_env, seed_config
from live_trial.rehearsal.server import RehearsalServer
from live_trial.session import screen, send
from live_trial.session.backend import Backend
from live_trial.session.boot import BootRequest, boot
from live_trial.session.claude_bin import find_claude
from live_trial.session.markers import MARKERS, PROMPT_GLYPH
from live_trial.session.plugin_check import validate_plugins
from live_trial.transcript import status as tstatus
from live_trial.transcript.paths import locate, read_cli_session_status
from live_trial.transcript.reader import read_records
from live_trial.transcript.records import is_task_notification

POLL_S = 0.15
BOOT_TIMEOUT_S = 30.0
TURN_TIMEOUT_S = 25.0
GATE_TIMEOUT_S = 15.0
PRINT_TIMEOUT_S = 60.0
QUIET_S = 3.0                # an ended turn that stays ended this long without the request expected: it is not coming


def describe_bypass(capture: str) -> str:
    """What a bypass dialog the harness does not accept showed: the markers missing, its options (cursor first)."""
    missing = [m for m in MARKERS["bypass"] if m not in capture]
    box = screen.dialog(capture)
    saw = f"missing {', '.join(repr(m) for m in missing)}" if missing else "all four markers"
    if box is not None:
        opts = " | ".join(("❯ " if o.selected else "") + (f"{o.number}. " if box.numbered else "") + o.label
                          for o in box.options)
        return f"{saw}; options: {opts}"
    lines = [ln.strip() for ln in capture.splitlines()
             if any(m in ln for m in MARKERS["bypass"][1:]) or ln.lstrip().startswith(PROMPT_GLYPH)]
    return f"{saw}; no numbered options: {' / '.join(lines[-4:]) or shown(capture)}"


def judge_boot(checks: Checks, captures: list[str], error: LiveTrialError | None, bypass_seen: bool) -> None:
    """``screen.bypass_dialog`` and ``screen.ready_prompt`` from boot's outcome and the screens it saw."""
    warned = [c for c in captures if MARKERS["bypass"][0] in c or MARKERS["bypass"][2] in c
              and MARKERS["dialog_footer"].search(c)]
    if bypass_seen:
        checks.holds("screen.bypass_dialog")
    elif warned:
        checks.changed("screen.bypass_dialog", describe_bypass(warned[-1]))
    if error is None:
        checks.holds("screen.ready_prompt")
    elif not warned or bypass_seen:
        tail = (error.details or {}).get("tail") or screen.tail(captures[-1] if captures else "", 6)
        checks.changed("screen.ready_prompt", f"{error.code}: {error.message} — screen: "
                                              f"{' / '.join(t.strip() for t in tail if t.strip())[-160:]}")


def _session_name() -> str:
    return f"lt-{run_id_time()}-{secrets.token_hex(2)}-doctor"


class _Run:
    """One probe run's state: the session, its transcript, the server, the screens seen."""

    def __init__(self, backend: Recording, session: str, transcript: Path, config: Path, server: RehearsalServer,
                 pane_pid: int | None) -> None:
        # the proxy stands in for the backend it wraps (every method it does not override is that backend's)
        self.backend, self.session, self.transcript, self.config = cast(Backend, backend), session, transcript, config
        self.server, self.pane_pid = server, pane_pid
        self.seen: dict[str, Any] = {}        # captures by what they showed; the gate's Status

    def status(self) -> tuple[list[dict], tstatus.Status]:
        records = read_records(self.transcript).records
        return records, tstatus.classify(records, read_cli_session_status(self.config, self.pane_pid))

    def watch(self, done: Callable[[list[dict], tstatus.Status, str], bool], timeout_s: float) -> bool:
        """Capture and classify every :data:`POLL_S` until ``done(records, status, capture)``; note the screens
        seen (spinner, background shells, turn-done line). False at ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            capture = self.backend.capture(self.session)
            records, st = self.status()
            busy = st.state in (tstatus.BUSY_TOOL, tstatus.BUSY_GENERATING)
            if screen.is_busy(capture):
                self.seen["spinner"] = capture
            elif busy:
                self.seen.setdefault("busy_without_spinner", capture)
            if screen.background_work(capture)["shells"] > 0:
                self.seen["shells"] = capture
            if any(MARKERS["turn_done"].match(ln) for ln in capture.splitlines()):
                self.seen["turn_done"] = capture
            elif st.state == tstatus.IDLE_TURN_COMPLETE:
                self.seen["idle_capture"] = capture
            if done(records, st, capture):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)

    def ended_after(self, rule: str, quiet_s: float) -> Callable[[list[dict], tstatus.Status, str], bool]:
        """A ``watch`` condition: the turn ended (IDLE_TURN_COMPLETE, no spinner, no background work) after one more
        request than the one ``rule`` answered (the Stop hook's or the wake-up's), or it stayed ended ``quiet_s``
        seconds after ``rule`` fired (that request never came)."""
        since: dict[str, float] = {}

        def done(records: list[dict], st: tstatus.Status, capture: str) -> bool:
            idle = st.state == tstatus.IDLE_TURN_COMPLETE and not screen.is_busy(capture) and st.background is None
            if not self.served(rule) or not idle:
                since.clear()
                return False
            since.setdefault("idle", time.monotonic())
            return bool(self.requests_after(rule)) or time.monotonic() - since["idle"] >= quiet_s
        return done

    def served(self, rule: str) -> bool:
        return any(r.get("rule") == rule for r in self.server.requests)

    def requests_after(self, rule: str) -> list[dict]:
        reqs = self.server.main_requests()
        idx = next((i for i, r in enumerate(reqs) if r.get("rule") == rule), None)
        return [] if idx is None else reqs[idx + 1:]


def _first_turn(run: _Run, checks: Checks, root: Path) -> None:
    task = root / "task.md"
    task.write_text(kit.PASTE_TASK)
    try:
        send.send_file(run.backend, run.session, task, transcript_path=run.transcript)
        checks.holds("transcript.prompt")
    except LiveTrialError as exc:
        got = (exc.details or {}).get("arrived_head")
        checks.changed("transcript.prompt", f"{exc.code}: arrived {got!r}" if got is not None else
                       f"{exc.code}: {exc.message}")

    run.watch(run.ended_after("tool-done", QUIET_S), TURN_TIMEOUT_S)


def _second_turn(run: _Run, checks: Checks, root: Path) -> None:
    task = root / "gate.md"
    task.write_text(kit.GATE_TASK)
    try:
        send.send_file(run.backend, run.session, task, transcript_path=run.transcript)
    except LiveTrialError:
        pass                                       # judged by transcript.prompt already
    stable: list[str] = []

    def gate_shown(records: list[dict], st: tstatus.Status, capture: str) -> bool:
        box = screen.dialog(capture)
        stable.append("ask" if box is not None and box.kind == "ask_user_question" else "")
        run.seen["gate_status"] = st
        run.seen["gate_capture"] = capture
        # The dialog can be drawn before the CLI writes its tool_use record (seen on both versions under load:
        # GATE from the live status, no question yet): wait for the record too, then judge what was seen.
        drawn = stable[-2:] == ["ask", "ask"]
        return (drawn and st.question is not None) or (st.state == tstatus.GATE and len(stable) > 60)
    if not run.watch(gate_shown, GATE_TIMEOUT_S):
        return
    st, capture = run.seen["gate_status"], run.seen["gate_capture"]
    box = screen.dialog(capture)
    late = st.question is None and box is not None
    if late and box is not None:    # as poll does: the question read from the screen while the record is late
        st = tstatus.gate_from_screen(st, box.kind, box.question, [o.label for o in box.options])
    checks.judge("transcript.gate", st.state == tstatus.GATE and st.question == kit.QUESTION and
                 all(o in (st.options or []) for o in kit.OPTIONS),
                 f"state {st.state}, question {st.question!r}, options {st.options}"
                 + (" (the tool_use record came after the dialog: read from the screen, as poll reads it)"
                    if late else ""))
    checks.judge("screen.gate_dialog", box is not None and box.kind == "ask_user_question" and
                 all(box.option(o) for o in kit.OPTIONS),
                 f"dialog {box.kind if box else None}: {shown(capture)}")
    try:
        send.answer_gate(run.backend, run.session, kit.ANSWER)
    except LiveTrialError as exc:
        checks.changed("screen.gate_answer", f"{exc.code}: {exc.message}")
        return
    run.watch(run.ended_after("wait", QUIET_S), TURN_TIMEOUT_S)
    # The shell's end is queued first (a queue-operation record) and delivered as a task notification once the CLI is
    # idle: under load (2.1.197 in CI) that came after the turn above looked ended, and a queued notification was
    # judged as the CLI recording it differently; and the wake-up's request was answered before its records were
    # written. Wait until the notification's own turn is recorded to its end (bounded: a CLI that no longer records
    # it so is judged changed all the same).
    run.watch(lambda records, st, capture: run.served("task-notification") and _woken_turn_ended(records)
              and st.state == tstatus.IDLE_TURN_COMPLETE and not screen.is_busy(capture),
              kit.BACKGROUND_MAX_S + TURN_TIMEOUT_S)


def _woken_turn_ended(records: list[dict]) -> bool:
    """The transcript holds a task notification and a ``turn_duration`` after it: the turn it woke is recorded."""
    woke = next((i for i, r in enumerate(records) if is_task_notification(r)), None)
    return woke is not None and any(r.get("subtype") == "turn_duration" for r in records[woke + 1:])


def _await_recorded(transcript: Path, timeout_s: float) -> bool:
    """Wait, at most ``timeout_s``, until the transcript holds a ``turn_duration`` after its last assistant record:
    the last turn's records are all written (its Stop hooks' ``stop_hook_summary`` comes just before; 2.1.332's own
    status file can say idle a moment sooner). False at the timeout."""
    end = time.monotonic() + timeout_s
    while True:
        records = read_records(transcript).records
        kinds = [r.get("type") if r.get("subtype") != "turn_duration" else "turn_duration" for r in records
                 if r.get("type") == "assistant" or r.get("subtype") == "turn_duration"]
        if kinds and kinds[-1] == "turn_duration":
            return True
        if time.monotonic() > end:
            return False
        time.sleep(POLL_S)


def _in_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Start ``fn`` now; return a function that waits for it and returns its value (or the exception it raised)."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(value=_call(fn)), daemon=True)
    thread.start()

    def value() -> Any:
        thread.join()
        return box.get("value")
    return value


def _call(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - reported as the check's finding
        return exc


def _print_mode(claude_path: str, env: Mapping[str, str], cwd: Path) -> tuple[bool, str]:
    argv = build_argv(claude_path, kit.STRUCTURED_SCHEMA, str(uuid.uuid4()))
    answer, raw, error = parse_output(run_process(argv, "Doctor probe: give the structured output.", cwd, env,
                                                  PRINT_TIMEOUT_S))
    return answer == kit.STRUCTURED, error or f"structured_output {answer!r}, result {raw!r}"


def validator_holds(claude_path: str, plugin: Path, env: Mapping[str, str]) -> tuple[bool, str]:
    """The check ``validator.format``: ``claude plugin validate`` on ``plugin`` (not cached) answers in the format
    :mod:`live_trial.session.plugin_check` reads: exit 0, its result line, and no line left unknown, no error, no
    warning. Returns ``(holds, what it saw)``: the problems found, or ``"exit N"`` when there are none."""
    (found,) = validate_plugins(claude_path, [plugin], env, cache=False)
    issues = [f"unknown line {u!r}" for u in found.unknown] + [f"error {t!r}" for _, t in found.errors] + \
        [f"warning {t!r}" for _, t in found.warnings] + ([found.problem] if found.problem else [])
    if found.result is None and not found.problem:
        # exit 0 and silence is not the validator's answer (a binary that is not claude prints nothing)
        issues.append("no result line (\"✔ Validation passed\") in its output")
    return found.exit_code == 0 and not issues, "; ".join(issues) or f"exit {found.exit_code}"


def run_probe(claude: str | None = None, *, env: Mapping[str, str] | None = None,
              backend: Backend | None = None) -> Report:
    """Play the probe on ``claude`` (a path; None: found as ``run`` finds it, :func:`find_claude`) and return the
    :class:`Report` (every check of :data:`live_trial.doctor.checks.CHECKS`, in order).

    Raises :class:`~live_trial.errors.Blocked` (exit 3) when tmux or claude is missing. Everything it makes is in
    one temporary folder (removed) and one tmux session (killed)."""
    started = time.monotonic()
    env = dict(os.environ if env is None else env)
    found = find_claude(claude or None, env, flag="--cli")
    backend = backend or Backend()
    backend.require_tmux()
    checks, notes = Checks(), []
    recording = Recording(backend)
    session = _session_name()
    with tempfile.TemporaryDirectory(prefix="lt-doctor-") as tmp, \
            RehearsalServer(kit.scenario(Path(tmp) / "stop-hook-blocked")) as server:
        root = Path(tmp)
        cwd = root / "cwd"
        cwd.mkdir()
        stop_marker = root / "stop-hook-blocked"
        plugin = kit.write_plugin(root / "plugins", stop_marker)
        files = activity.write_files(root, plugin, stop_marker)
        config = seed_config(root / "config", [cwd])
        probe_env = {**env, **rehearsal_env(server.url, config)}
        printed = _in_thread(lambda: _print_mode(found.path, probe_env, cwd))
        validated = _in_thread(lambda: validator_holds(found.path, plugin, probe_env))
        trusted: Callable[[], Any] | None = None
        try:
            result, error = None, None
            try:
                result = boot(BootRequest(session=session, cwd=cwd, env_overrides=rehearsal_env(server.url, config),
                                          rehearsal=True, owner_pid=os.getpid(), timeout_s=BOOT_TIMEOUT_S,
                                          plugin_dirs=[plugin], claude=found.path, settings_args=files.flags()),
                              cast(Backend, recording), base_env=env)
            except LiveTrialError as exc:
                error = exc
            judge_boot(checks, recording.captures, error, bool(result and result.bypass_dialog_seen))
            if result is None:
                notes.append(f"the probe stopped at boot ({error.code if error else 'no result'})")
            else:
                # the second boot runs beside the turns, which mostly wait on the scenario's delays
                trusted = _in_thread(lambda: trust.play(found.path, env, root / "trust", backend,
                                                        f"{session}-trust", BOOT_TIMEOUT_S))
                pending = activity.await_servers(files.debug_log, BOOT_TIMEOUT_S)
                run = _Run(recording, session, locate(result.session_id, cwd, config), config, server,
                           result.pane_pid)
                _first_turn(run, checks, root)
                _second_turn(run, checks, root)
                _await_recorded(run.transcript, QUIET_S)
                judge_records(checks, run.transcript, run.seen)
                judge_rehearsal(checks, server.requests)
                _judge_activity(checks, plugin, run.transcript, files, pending)
        finally:
            backend.kill_session(session)
            seen = trusted() if trusted is not None else None     # its session is killed before the folder goes
        for name, outcome in (("print.structured_output", printed()), ("validator.format", validated())):
            ok, saw = outcome if isinstance(outcome, tuple) else (False, f"{type(outcome).__name__}: {outcome}")
            checks.judge(name, ok, saw)
        if trusted is not None:
            if isinstance(seen, trust.TrustSeen):
                trust.judge_trust(checks, seen)
                notes += [f"screen.trust_question not played: {seen.skipped}"] if seen.skipped else []
            else:
                checks.changed("screen.trust_question", f"{type(seen).__name__}: {seen}")
    return Report(checks.all(), found.path, found.version, time.monotonic() - started, "; ".join(notes))


def _judge_activity(checks: Checks, plugin: Path, transcript: Path, files: activity.ActivityFiles,
                    pending: list[str]) -> None:
    """The checks of what the plugins' activity ledger reads (:mod:`live_trial.doctor.activity`)."""
    records = read_records(transcript).records
    ledgers = activity.read_ledgers(plugin, records, files.debug_log)
    activity.judge_servers(checks, ledgers, pending)
    activity.judge_hook_runs(checks, ledgers)
    activity.judge_hook_records(checks, ledgers)
    activity.judge_stand_in(checks, ledgers, files, tool_answer(records, kit.ECHO_TOOL))
