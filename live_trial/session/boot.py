"""Start ``claude`` in a fresh tmux session and bring it to a ready prompt (seed 001 "boot").

Order (nothing is created until every check passed):
1. refusals (RefusedInput, exit 2): session name, model / session id charset, proof without a full
   model id, denylisted target, missing cwd, root without IS_SANDBOX=1 (real trial);
2. tools (Blocked, exit 3): tmux, claude;
3. plugins (ClosureError = BOOT_FAIL, exit 2): ``closure.pinning.pin`` for a ``plugin:skill`` target; then the pinned
   CLI's own ``claude plugin validate`` on each of them (``session.plugin_check``: an error is BOOT_FAIL
   ``plugin_not_loaded``, warnings are returned in ``BootResult.plugin_warnings``);
4. start: argv as the pane's own command (no shell), child environment without the nested-session
   variables; then watch the screen: accept the bypass dialog only with all four of its markers (seed 001 "boot"),
   answer the folder-trust question only for :attr:`BootRequest.trusted_folder` (session/boot_dialogs.py), name
   any other blocking screen (BOOT_FAIL within seconds), name a screen it does not know (a dialog of no known kind
   unchanged for a second, or no prompt at the timeout: BOOT_FAIL ``unknown_screen``, a BLOCKED trial), notice an exit
   at start from ``#{pane_dead}`` (BOOT_FAIL with the pane's last lines), READY per
   :func:`live_trial.session.screen.is_ready`, TIMEOUT with the capture tail. Every failure kills the session it made.
"""
from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from live_trial.errors import Blocked, BootFail, BootTimeout, RefusedInput
from live_trial.session import boot_dialogs, dialogs, screen
from live_trial.session.backend import Backend
from live_trial.session.containment import Container
from live_trial.session.environment import child_env
from live_trial.session.rules import Lease, check_target_allowed, validate_session_name
from live_trial.stop_reasons import StopReason, exit_cause

MODEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,99}$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
MODEL_ALIASES = frozenset({"default", "sonnet", "opus", "haiku", "best", "opusplan", "sonnet[1m]", "opus[1m]"})
POLL_S = 0.05                # screen poll while booting, for the first POLL_FAST_S seconds (one tmux call per poll)
POLL_FAST_S = 1.5            # a CLI not READY by then boots on a busy machine (here: 0.5 s quiet, 3-5 s with 8 at once)
POLL_SLOW_S = 0.2            # ... whose cores the booting CLIs need more than a probe every 50 ms
UNKNOWN_CONFIRM_S = 1.0      # an unknown dialog must stay unchanged this long before boot gives up on it
UNKNOWN_FIRST_LINES = 3      # an unknown screen is named by this many of its first lines
BLOCKING_CONFIRM_POLLS = 2   # a blocking screen must be seen this many polls in a row
TAIL_LINES = 15
EXIT_STATUS_WAIT_S = 2.0     # after pane_dead, wait this long for the exit status


@dataclass
class BootRequest:
    """What to boot. ``cwd``: the trial folder. ``target``: ``plugin:skill`` (pinned plugins) or a plain
    skill name (no pinning) or None. ``claude``: a ClaudeBinary (or its path) — found with
    ``claude_bin.find_claude`` when None. ``env_overrides``: added to the child environment (rehearsal:
    ``rehearsal.config.rehearsal_env``). ``rehearsal``: sets IS_SANDBOX=1. ``timeout_s``: default the policy's
    ``boot_timeout_s``. ``plugin_dirs``: when given, used instead of computing the closure. ``lease``: a session started
    by the ``boot`` command holds one (reap keeps it while it holds; README "The steps, one by one"); ``run``'s sessions
    have none (their harness owns them)."""

    session: str
    cwd: Path
    model: str | None = None
    session_id: str | None = None
    target: str | None = None
    plugins_root: Path | None = None
    claude: Any = None
    env_overrides: Mapping[str, str] = field(default_factory=dict)
    proof: bool = False
    rehearsal: bool = False
    owner_pid: int | None = None
    timeout_s: float | None = None
    plugin_dirs: Sequence[Path] | None = None
    lease: Lease | None = None
    #: ``--setting-sources`` of the session: ``local`` for every trial (seed 001 absolute rule 3: the user's and the
    #: project's settings never reach a trial). None starts the CLI as a person does, reading every source, so the
    #: plugins installed from a marketplace load: the session run-skill-live-trial is called from (README "Use it ...").
    setting_sources: str | None = "local"
    #: Extra flags: ``--settings FILE`` of a rehearsal's pre-accepted bypass consent (rehearsal.config.settings_args), a
    #: trial's ``--debug-file`` and stand-in ``--mcp-config`` (trial/activity.py: what its plugins did).
    settings_args: Sequence[str] = ()
    #: Where the session's processes are held (session/containment.py): the pane runs its holder; None: claude itself.
    container: Container | None = None
    #: The one folder whose folder-trust question boot answers "Yes" (session/boot_dialogs.py): a folder the harness
    #: made under a folder the person trusts in this config, which the CLI asks about anyway (2.1.332 does not carry a
    #: parent's trust into a git work tree: references/transcript-jsonl.md "Folder trust"). None: boot answers none.
    trusted_folder: Path | None = None


@dataclass
class BootResult:
    """A READY session. ``elapsed_s``: from the boot call to READY. ``bypass_dialog_seen``: the dialog was
    shown and accepted (False: it never appeared, which is fine). ``plugin_warnings``: what the CLI's plugin
    validator remarked on the plugins loaded (one line each); ``plugin_checks``: per plugin, whether the validator's
    kept answer was used and how long its process took (``session.plugin_check.check_plugins``)."""

    session: str
    session_id: str
    model: str | None
    elapsed_s: float
    pane_id: str
    pane_pid: int
    bypass_dialog_seen: bool
    plugin_dirs: list[Path]
    argv: list[str]
    claude_path: str
    plugin_warnings: list[str] = field(default_factory=list)
    plugin_checks: list[dict[str, Any]] = field(default_factory=list)
    #: The folder whose trust question boot answered (:attr:`BootRequest.trusted_folder`), else None.
    trust_answered: Path | None = None

    def ready_line(self) -> str:
        """``READY: <session> (<N>s) MODEL:<model|default> SESSION_ID:<uuid>`` (seed 001 boot)."""
        return (f"READY: {self.session} ({self.elapsed_s:.0f}s) MODEL:{self.model or 'default'} "
                f"SESSION_ID:{self.session_id}")


# ---------------------------------------------------------------- checks (pure)

def validate_model(model: str | None, *, proof: bool = False) -> str | None:
    """Return ``model`` (None = the CLI default) when it is a safe id; proof trials need a full id.

    Raises RefusedInput (exit 2): unsafe characters; ``--proof`` with no model or an alias
    (``sonnet``, ``opus``, … resolve to another id in the transcript, so the proof gate could not match).
    """
    if model is not None and model != "" and not MODEL_RE.fullmatch(model):
        raise RefusedInput(f"model {model!r} has characters outside [A-Za-z0-9._:@/[]-]", where="--model",
                           fix="pass a model id such as claude-sonnet-4-5-20250929", code="bad_model")
    model = model or None
    if proof:
        if model is None:
            raise RefusedInput("a proof trial needs --model", where="--proof",
                               fix="pass the full model id the trial must prove, e.g. claude-opus-4-8",
                               code="proof_needs_model")
        if model.lower() in MODEL_ALIASES or not model.lower().startswith(("claude-", "anthropic.", "us.", "eu.")) \
                or not re.search(r"\d", model):
            raise RefusedInput(f"proof trials need a full model id, not the alias {model!r}", where="--model",
                               fix="an alias resolves to another id in the transcript; pass e.g. "
                                   "claude-sonnet-4-5-20250929 or claude-opus-4-8", code="proof_alias")
    return model


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` when it is a lowercase canonical uuid; else RefusedInput (exit 2)."""
    if not isinstance(session_id, str) or not UUID_RE.fullmatch(session_id):
        raise RefusedInput(f"session id {session_id!r} is not a uuid", where="--session-id",
                           fix="omit it: boot makes a fresh uuid4", code="bad_session_id")
    return session_id


def check_root_sandbox(env: Mapping[str, str], *, euid: int | None = None) -> None:
    """As root the CLI refuses --dangerously-skip-permissions unless IS_SANDBOX=1: refuse first, in one line."""
    euid = os.geteuid() if euid is None else euid
    if euid == 0 and env.get("IS_SANDBOX") != "1":
        seen = "" if env.get("IS_SANDBOX") is None else f" (IS_SANDBOX is {env['IS_SANDBOX']!r}; only \"1\" counts)"
        raise RefusedInput("running as root without IS_SANDBOX=1: claude refuses --dangerously-skip-permissions "
                           f"as root{seen}", where="environment",
                           fix="if this machine is a disposable sandbox or container, set IS_SANDBOX=1; "
                               "otherwise run the harness as a normal user", code=StopReason.ROOT_NEEDS_SANDBOX)


def build_argv(req: BootRequest, claude_path: str, plugin_dirs: Sequence[Path] = (),
               settings_args: Sequence[str] = ()) -> list[str]:
    """``[claude, (--model M), --session-id UUID, --setting-sources local, (--settings FILE), (--plugin-dir P)…,
    --dangerously-skip-permissions]`` (seed 001 absolute rule 3; ``--setting-sources`` left out when
    ``req.setting_sources`` is None). ``settings_args``: a rehearsal config's own ``--settings`` file
    (:func:`live_trial.rehearsal.config.settings_args`). ``req.session_id`` must be set."""
    argv = [str(claude_path)]
    if req.model:
        argv += ["--model", req.model]
    argv += ["--session-id", str(req.session_id)]
    if req.setting_sources is not None:
        argv += ["--setting-sources", req.setting_sources]
    argv += [str(a) for a in settings_args]
    for d in plugin_dirs:
        argv += ["--plugin-dir", str(d)]
    argv.append("--dangerously-skip-permissions")
    return argv


def resolve_plugin_dirs(target: str | None, plugins_root: Path) -> list[Path]:
    """``--plugin-dir`` folders for ``target``: the target plugin and its direct dependency union, from
    ``closure.pinning.pin`` (the same computation as the closure digest, ARCHITECTURE invariant 1). A plain skill
    name or no target: ``[]``. Raises RefusedInput / ClosureError (BOOT_FAIL) before anything starts."""
    if not target or ":" not in target:
        return []
    from live_trial.closure.pinning import pin
    from live_trial.closure.target import resolve_target

    resolved = resolve_target(target, plugins_root)
    return [ref.root for ref in pin(resolved, plugins_root).plugins]


# ---------------------------------------------------------------- boot

def boot(req: BootRequest, backend: Backend, *, base_env: Mapping[str, str] | None = None,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> BootResult:
    """Boot ``req`` on ``backend`` and return a :class:`BootResult` once the prompt is READY.

    Raises RefusedInput (exit 2, nothing created), Blocked (exit 3: tmux / claude missing), BootFail
    (exit 2: bad plugins or a plugin the CLI's validator rejects (code ``plugin_not_loaded``), a blocking screen, a
    screen the harness does not know (code ``unknown_screen``), the CLI exiting at start; ``details["tail"]`` holds
    the capture tail, ``details["screen"]`` the screen name) or BootTimeout (exit 1, with the tail).
    """
    started = clock()
    base_env = os.environ if base_env is None else base_env
    validate_session_name(req.session)
    req.model = validate_model(req.model, proof=req.proof)
    req.session_id = validate_session_id(req.session_id or str(uuid.uuid4()))
    if req.target:
        check_target_allowed(req.target)
    cwd = Path(req.cwd).resolve()
    if not cwd.is_dir():
        raise RefusedInput("trial cwd is not a folder", where=str(cwd), fix="pass an existing folder", code="bad_cwd")
    env = child_env(base_env, req.env_overrides, rehearsal=req.rehearsal)
    check_root_sandbox(env)
    backend.require_tmux()
    claude_path = _claude_path(req.claude, base_env)
    plugin_dirs = ([Path(p) for p in req.plugin_dirs] if req.plugin_dirs is not None
                   else resolve_plugin_dirs(req.target, Path(req.plugins_root or cwd)))
    argv = build_argv(req, claude_path, plugin_dirs, req.settings_args)
    plugin_warnings: list[str] = []
    plugin_checks: list[dict[str, Any]] = []
    if plugin_dirs:
        from live_trial.session.plugin_check import check_plugins

        plugin_warnings = check_plugins(claude_path, plugin_dirs, env, plugin_checks)  # BootFail before anything runs
    timeout_s = req.timeout_s if req.timeout_s is not None else _policy_boot_timeout(base_env)
    leased: dict[str, Any] = {"lease": req.lease} if req.lease is not None else {}
    argv_pane = req.container.wrap(argv) if req.container else argv
    spawned = clock()                  # the probe schedule counts from here, after a plugin check that may be slow
    info = backend.new_session(req.session, argv_pane, cwd=cwd, env=env, owner_pid=req.owner_pid, **leased)
    ok = False
    try:
        backend.set_meta(req.session, cwd=str(cwd), session_id=req.session_id,
                         config_dir=env.get("CLAUDE_CONFIG_DIR", ""), model=req.model or "")
        seen, trust_answered = _wait_ready(backend, req.session, started=started, timeout_s=timeout_s, clock=clock,
                                           sleep=sleep, pane_id=info.pane_id, spawned=spawned, claude_path=claude_path,
                                           trusted=req.trusted_folder)
        ok = True
    finally:
        if not ok:
            backend.kill_session(req.session)
    return BootResult(session=req.session, session_id=req.session_id, model=req.model, elapsed_s=clock() - started,
                      pane_id=info.pane_id, pane_pid=info.pane_pid, bypass_dialog_seen=seen,
                      plugin_dirs=plugin_dirs, argv=argv, claude_path=claude_path, plugin_warnings=plugin_warnings,
                      plugin_checks=plugin_checks, trust_answered=trust_answered)


def _claude_path(claude: Any, env: Mapping[str, str]) -> str:
    """The claude executable: a ClaudeBinary's path, a given path (checked), or ``find_claude``. Blocked if missing."""
    if claude is None:
        from live_trial.session.claude_bin import find_claude

        return find_claude(None, env).path
    path = str(getattr(claude, "path", claude))
    resolved = shutil.which(path) or path
    if not (os.path.isfile(resolved) and os.access(resolved, os.X_OK)):
        raise Blocked("claude binary is not an executable file", where=path,
                      fix="point --claude-bin or LIVE_TRIAL_CLAUDE_BIN at the claude executable, or run `make setup`",
                      code=StopReason.CLAUDE_MISSING)
    return os.path.abspath(resolved)


def _policy_boot_timeout(env: Mapping[str, str]) -> float:
    from live_trial.policy import load_policy

    return load_policy(env).boot_timeout_s


def _tail(backend: Backend, session: str, scrollback: bool = False) -> list[str]:
    try:
        return screen.tail(backend.capture(session, scrollback=scrollback), TAIL_LINES)
    except RefusedInput:
        return []


def _exit_fix(text: str) -> str:
    if "root/sudo" in text:
        return "set IS_SANDBOX=1 if this is a disposable sandbox, or run as a normal user"
    if "unknown option" in text:
        return "this claude does not accept a flag the harness passes; use the pinned 2.1.197 (`make setup`)"
    if "already in use" in text:
        return "boot again (each boot makes a fresh session id)"
    return "run the same claude by hand in that folder to see the error"


def _wait_ready(backend: Backend, session: str, *, started: float, timeout_s: float,
                clock: Callable[[], float], sleep: Callable[[float], None], pane_id: str | None = None,
                spawned: float | None = None, claude_path: str = "",
                trusted: Path | None = None) -> tuple[bool, Path | None]:
    """Poll the screen until READY. Returns whether the bypass dialog was seen (and accepted), and the folder whose
    trust question was answered (None: none was). ``started``: when boot began (the timeout counts from it);
    ``spawned``: when the CLI was started (the probe schedule, :func:`boot_poll_s`, counts from it; default
    ``started``); ``claude_path``: named in the advice for a screen the harness does not know; ``trusted``: the one
    folder whose trust question may be answered (:attr:`BootRequest.trusted_folder`)."""
    spawned = started if spawned is None else spawned
    bypass_seen = False
    trust_answered: Path | None = None
    blocking_streak: tuple[str, int] = ("", 0)
    unknown: tuple[str, float] | None = None   # (the unknown dialog's screen, since when it has been unchanged)
    capture: str | None = None

    def probe() -> str:
        return _probe(backend, session, pane_id, clock=clock, sleep=sleep)

    while True:
        if capture is None:
            capture = probe()
        if dialogs.bypass_dialog(capture):
            kind, seen_at = boot_dialogs.BYPASS, clock()
            if not bypass_seen:
                bypass_seen = True
                capture = boot_dialogs.answer(kind, backend, session, capture, probe, clock=clock, sleep=sleep,
                                              seen_at=seen_at)
            else:
                capture = boot_dialogs.wait_gone(kind, backend, session, probe, clock=clock, sleep=sleep)
            continue  # judge the first screen after the dialog at once
        shown = boot_dialogs.trust_folder_shown(capture)
        if trusted is not None and trust_answered is None and shown is not None and _same(shown, trusted):
            trust_answered = shown
            capture = boot_dialogs.answer(boot_dialogs.TRUST, backend, session, capture, probe, clock=clock,
                                          sleep=sleep, seen_at=clock())
            continue
        block = screen.blocking_screen(capture)
        if block:
            streak = blocking_streak[1] + 1 if blocking_streak[0] == block[0] else 1
            blocking_streak = (block[0], streak)
            if streak >= BLOCKING_CONFIRM_POLLS:
                raise BootFail(f"boot stopped at the {block[0]}: claude is waiting for an answer the harness "
                               f"does not give", where=session, fix=block[1], code=StopReason.BLOCKING_SCREEN,
                               details={"screen": block[0], "tail": screen.tail(capture, TAIL_LINES)})
        else:
            blocking_streak = ("", 0)
            if screen.is_ready(capture):
                return bypass_seen, trust_answered
            unknown = _unknown_dialog(capture, unknown, clock())
            if unknown and clock() - unknown[1] >= UNKNOWN_CONFIRM_S:
                _raise_unknown(session, capture, "a dialog it has no answer for", claude_path)
        if clock() - started > timeout_s:
            if screen.input_line(capture) is None:
                _raise_unknown(session, capture, f"no prompt within {timeout_s:.0f}s", claude_path)
            raise BootTimeout(f"no ready prompt within {timeout_s:.0f}s", where=session,
                              fix="read the screen below; check that the folder is trusted and claude starts "
                                  "by hand; raise boot_timeout_s in references/convergence-policy.json if "
                                  "the machine is slow", code=StopReason.BOOT_TIMEOUT,
                              details={"tail": screen.tail(capture, TAIL_LINES)})
        sleep(boot_poll_s(clock() - spawned))
        capture = None


def _same(shown: Path, folder: Path) -> bool:
    """True when the folder a trust question names is ``folder``, as written or both resolved (the CLI shows the
    real path)."""
    if shown == Path(folder):
        return True
    try:
        return shown.resolve() == Path(folder).resolve()
    except OSError:
        return False


def _unknown_dialog(capture: str, seen: tuple[str, float] | None, now: float) -> tuple[str, float] | None:
    """``(screen, since)`` while an open dialog of kind ``unknown`` stays unchanged on screen, else None."""
    box = screen.dialog(capture)
    if box is None or box.kind != "unknown":
        return None
    return seen if seen is not None and seen[0] == capture else (capture, now)


def _raise_unknown(session: str, capture: str, what: str, claude_path: str = "") -> None:
    """BootFail ``unknown_screen`` (the trial is BLOCKED: :mod:`live_trial.stop_reasons`) naming the screen by
    its first lines, with the advice to check this CLI's screens (``live-trial doctor --cli <claude_path>``)."""
    first = " | ".join(screen.first_lines(capture, UNKNOWN_FIRST_LINES)) or "(a blank screen)"
    doctor = f"live-trial doctor --cli {claude_path}".rstrip()
    raise BootFail(f"boot stopped at a screen the harness does not know ({what}): \"{first}\"; run `{doctor}` to "
                   "check this claude's screens", where=session,
                   fix="a CLI newer than the newest verified one may draw it; if it asks you something, answer it "
                       "once by running that claude by hand, then run the trial again", code=StopReason.UNKNOWN_SCREEN,
                   details={"screen": f"unknown screen: {first}", "tail": screen.tail(capture, TAIL_LINES)})


def boot_poll_s(waited_s: float) -> float:
    """Seconds between two screen probes while the CLI boots, ``waited_s`` seconds after it was started:
    :data:`POLL_S` at first (READY is seen within 50 ms of a quick boot), then :data:`POLL_SLOW_S` (each probe is a
    tmux client process; eight CLIs booting at once on two cores took 60 probes each at 50 ms, and a boot that slow
    is not held up by 0.2 s)."""
    return POLL_S if waited_s < POLL_FAST_S else POLL_SLOW_S


def _probe(backend: Backend, session: str, pane_id: str | None, *, clock: Callable[[], float],
           sleep: Callable[[float], None]) -> str:
    """The visible screen; raises BootFail (exited at start) when the pane's process has exited."""
    alive, capture = backend.probe(session, pane_id)
    if not alive:
        _raise_exited(backend, session, clock=clock, sleep=sleep)
    return capture


def _raise_exited(backend: Backend, session: str, *, clock: Callable[[], float] = time.monotonic,
                  sleep: Callable[[float], None] = time.sleep) -> None:
    # #{pane_dead} turns 1 when the pty closes; the exit status (and tmux's "Pane is dead" line) follow
    # once the process is reaped: wait a moment for them so the last lines are all there.
    deadline = clock() + EXIT_STATUS_WAIT_S
    while True:
        status = backend.pane_dead_status(session)
        try:
            full = backend.capture(session, scrollback=True)
        except RefusedInput:
            full = ""
        if status is None:
            status = screen.dead_pane_status(full)
        if (status is not None and "Pane is dead" in full) or clock() >= deadline:
            break
        sleep(POLL_S)
    tail = [ln for ln in screen.tail(full, TAIL_LINES) if not ln.startswith("Pane is dead")]
    shown = "unknown" if status is None else status
    last = " | ".join(tail[-3:]) or "(no output)"
    raise BootFail(f"claude exited at start (exit status {shown}): {last}", where=session,
                   fix=_exit_fix(" ".join(tail)), code=exit_cause(" ".join(tail)),
                   details={"tail": tail, "status": shown})
