"""Fakes shared by unit tests, each with the parameters of what it stands for (tests/unit/package/test_fakes.py
checks them): a manual clock (seconds, moved by ``sleep``); a tmux session as boot drives it and poll reads it; the CLI's input box as send types
into it; the real tmux backend over an in-memory tmux; the evaluator's ``claude -p``; and a trial-state.json, an
evaluation.json and a TrialState as ``run`` writes them."""
from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Callable, Mapping, Sequence, Union

from live_trial.errors import Blocked
from live_trial.jsonfile import write_json
from live_trial.judge.evaluator import ProcessResult
from live_trial.session import backend as bk
from live_trial.session.backend import MIN_HEIGHT, MIN_WIDTH, Backend, TmuxResult
from live_trial.session.rules import PaneRow, SessionInfo


class Clock:
    """A clock that moves only when ``sleep`` is called (seconds); call it for the current time (``start`` at first).
    ``sleeps`` counts the calls to ``sleep``; ``actions[n]``: functions run right after the n-th sleep (1 = the
    first), for what happens while the code under test waits."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.sleeps = 0
        self.actions: dict[int, list[Callable[[], object]]] = {}

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s
        self.sleeps += 1
        for fn in self.actions.pop(self.sleeps, []):
            fn()


#: A screen of :class:`FakeBackend`: its text, or a function of the capture's number (1 = the first) that returns it.
FakeScreen = Union[str, Callable[[int], str]]
#: Screens as a state machine: state -> (its screen, {key: the state that key leads to}).
Flow = Mapping[str, tuple[str, Mapping[str, str]]]


class FakeBackend:
    """One tmux session without tmux, as ``boot`` drives it and ``poll`` reads it: it implements
    :class:`live_trial.session.protocols.Backend`, and the methods boot calls have the real backend's parameters.

    ``screens``: what successive captures show (the last one repeats), or a :data:`Flow` that starts at ``start``
    and moves on the keys ``send_keys`` presses. ``alive`` False: the pane's process exited (``exit_status``);
    ``dead_after`` n: it exits once ``pane_alive`` was asked more than n times, and its pane then shows
    ``dead_tail``. ``exists`` False: no such session; ``pid``: the pane's pid (None: unknown, read as 0);
    ``blocked``: tmux is missing (every read raises Blocked).

    What it saw: ``captures`` (screens read, by ``probe`` and ``capture``), ``polls`` (``pane_alive`` questions),
    ``keys`` pressed, ``created`` sessions ``(name, argv, cwd, env)``, ``meta`` set, ``killed`` sessions.
    """

    PANE_ID = "%1"
    SESSION_PID = 4242     # the pane pid new_session reports

    def __init__(self, screens: Sequence[FakeScreen] | Flow | None = None, start: str | None = None, *,
                 alive: bool = True, exists: bool = True, pid: int | None = None, blocked: bool = False,
                 idle: str = "", dead_after: int | None = None, dead_tail: str | None = None,
                 exit_status: int = 1) -> None:
        self.flow = screens if isinstance(screens, Mapping) else None
        self.state = start
        self.screens = [idle] if screens is None else [] if self.flow is not None else list(screens)
        self.alive, self.exists, self.pid, self.blocked = alive, exists, pid, blocked
        self.dead_after, self.dead_tail, self.exit_status = dead_after, dead_tail, exit_status
        self.captures = 0
        self.polls = 0
        self.keys: list[str] = []
        self.created: list[tuple] = []
        self.meta: dict = {}
        self.killed: list[str] = []
        self.socket = "test"

    def _tmux(self) -> None:
        if self.blocked:
            raise Blocked("tmux is not installed", code="tmux_missing")

    def require_tmux(self) -> str:
        self._tmux()
        return "tmux"

    def has_session(self, name: str) -> bool:
        self._tmux()
        return self.exists

    def pane(self, name: str) -> PaneRow | None:
        self._tmux()
        if not self.exists:
            return None
        return PaneRow(session=name, pane_id=self.PANE_ID, pane_pid=self.pid or 0, dead=not self.alive,
                       dead_status=None if self.alive else self.exit_status, owner="", created=0)

    def probe(self, name: str, pane_id: str | None = None) -> tuple[bool, str]:
        self._tmux()
        if not self.pane_alive(name):
            return False, ""
        return True, self.capture(name)

    def pane_alive(self, name: str) -> bool:
        self._tmux()
        self.polls += 1
        if self.dead_after is not None and self.polls > self.dead_after:
            self.alive = False
        return self.alive and self.exists

    def pane_pid(self, name: str) -> int | None:
        return self.pid

    def pane_dead_status(self, name: str) -> int | None:
        return None if self.alive else self.exit_status

    def capture(self, name: str, scrollback: bool = False) -> str:
        self.captures += 1
        if not self.alive and self.dead_tail is not None:
            return self.dead_tail
        if self.flow is not None:
            return self.flow[self.state][0]
        screen = self.screens[min(self.captures, len(self.screens)) - 1]
        return screen(self.captures) if callable(screen) else screen

    def new_session(self, name, argv, *, cwd, env, owner_pid=None, width=MIN_WIDTH, height=MIN_HEIGHT,
                    lease=None) -> SessionInfo:
        self.created.append((name, list(argv), cwd, dict(env)))
        return SessionInfo(name, "$1", self.PANE_ID, self.SESSION_PID)

    def set_meta(self, name, **values) -> None:
        self.meta.update(values)

    def send_keys(self, name, *keys) -> None:
        for k in keys:
            self.keys.append(k)
            if self.flow is not None:
                self.state = self.flow[self.state][1].get(k, self.state)

    def kill_session(self, name) -> bool:
        self.killed.append(name)
        return True


NB = "\u00a0"
RULE = "─" * 100


def screen_with_input(text: str) -> str:
    """A ready screen whose input box holds ``text``."""
    return "\n".join([RULE, f"❯{NB}{text}", RULE, "  ⏵⏵ bypass permissions on"])


class FakeCLI:
    """The CLI's input box as ``send`` drives it through the tmux backend (its methods have the real backend's
    parameters): pastes park text in the input box; Enter writes a user record to ``transcript`` unless told to
    swallow it (``swallow`` Enters are lost); ``transform`` changes the text the record holds."""

    def __init__(self, transcript: Path, swallow: int = 0, transform=lambda t: t):
        self.transcript = transcript
        self.swallow = swallow
        self.transform = transform
        self.input = ""
        self.keys: list[str] = []
        self.pasted: list[str] = []

    def paste_file(self, name, path):
        text = Path(path).read_text()
        self.pasted.append(text)
        self.input = text
        return "lt-buf-x"

    def capture(self, name, scrollback=False):
        shown = f"[Pasted text #1 +{self.input.count(chr(10))} lines]" if self.input.count("\n") > 2 else self.input
        return screen_with_input(shown.split("\n")[0])

    def send_keys(self, name, *keys):
        for k in keys:
            self.keys.append(k)
            if k == "Enter":
                if self.swallow:
                    self.swallow -= 1
                    continue
                if self.input.strip():
                    self.write(self.transform(self.input.rstrip("\n")))
                self.input = ""

    def write(self, text):
        rec = {"type": "user", "uuid": str(uuid.uuid4()), "parentUuid": None, "isSidechain": False,
               "timestamp": "2026-11-30T10:00:00.000Z", "sessionId": "s", "origin": {"kind": "human"},
               "promptSource": "typed", "message": {"role": "user", "content": text}}
        with self.transcript.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")


class FakeTmux(Backend):
    """The real tmux backend whose tmux is a tiny in-memory model (its ``_run``): sessions with a pane each, their
    owner option, a server that is ours, foreign, starting or not running. A bare ``-t NAME`` matches by prefix, like
    tmux. ``calls`` records every tmux argv."""

    def __init__(self):
        super().__init__("lt-unit")
        self.calls: list[tuple[str, ...]] = []
        self.sessions: dict[str, dict] = {}
        self.next_pane = 0
        self.fail_paste = False
        self.server = "ours"            # ours | foreign | starting | none: what runs on the socket
        self.marked_after = 0           # starting: the option shows from this show-options call on (0: never)
        self.option_asked = 0
        self.procs = NoProcesses()      # the fake panes' pids are not real processes: never signal them

    def _tmux(self):
        return "tmux"

    def _find(self, target: str):
        if target.startswith("="):
            name = target[1:].rstrip(":")
            return name if name in self.sessions else None
        if target.startswith("%"):
            return next((n for n, s in self.sessions.items() if s["pane"] == target), None)
        return next((n for n in sorted(self.sessions) if n.startswith(target)), None)

    def add(self, name, owner="", created=0, dead=False):
        self.next_pane += 1
        self.sessions[name] = {"pane": f"%{self.next_pane}", "pid": 1000 + self.next_pane, "dead": dead,
                               "owner": owner, "created": created}

    def _run(self, *args, env=None):
        self.calls.append(tuple(args))
        out, rc, err = [], 0, []
        cmds, cur = [], []
        for a in args:
            if a == ";":
                cmds.append(cur); cur = []
            else:
                cur.append(a)
        cmds.append(cur)
        for cmd in cmds:
            verb = cmd[0]
            t = cmd[cmd.index("-t") + 1] if "-t" in cmd else None
            if verb == "list-panes":
                for n, s in self.sessions.items():
                    out.append(f"{n}|{s['pane']}|{s['pid']}|{int(s['dead'])}|{1 if s['dead'] else ''}|{s['owner']}|{s['created']}")
            elif verb == "has-session":
                rc = 0 if self._find(t) else 1
            elif verb == "kill-session":
                n = self._find(t)
                if n:
                    del self.sessions[n]
                else:
                    rc, err = 1, [f"can't find session: {t}"]
            elif verb == "new-session":
                name = cmd[cmd.index("-s") + 1]
                self.add(name)
                s = self.sessions[name]
                out.append(f"$1|{s['pane']}|{s['pid']}")
            elif verb == "set-option" and t:
                n = self._find(t)
                if n is None:
                    rc, err = 1, [f"no such session: {t}"]
                elif cmd[-2] == bk.OWNER_OPTION:
                    self.sessions[n]["owner"] = cmd[-1]
            elif verb == "show-options" and bk.SERVER_OPTION in cmd:
                self.option_asked += 1
                if self.server == "starting" and self.marked_after and self.option_asked >= self.marked_after:
                    self.server = "ours"            # the harness that started it ran its first command
                if self.server == "none":
                    rc, err = 1, ["no server running on /tmp/tmux-0/lt-unit"]
                elif self.server == "ours":
                    out.append("1")
            elif verb == "list-sessions":
                if self.server == "none":
                    rc, err = 1, ["no server running on /tmp/tmux-0/lt-unit"]
                else:
                    out += (["mine"] if self.server == "foreign" else []) + list(self.sessions)
            elif verb == "paste-buffer" and self.fail_paste:
                rc, err = 1, ["paste failed"]
        return TmuxResult(argv=("tmux", *args), returncode=rc, stdout=out, stderr=err, duration_s=0.0)


class NoProcesses:
    """Stands in for :mod:`live_trial.session.proctree`: records what the backend asked to end."""

    def __init__(self):
        self.ended: list[tuple[list, str | None]] = []

    def descendants(self, pid):
        return [("tree-of", pid)]

    def tagged(self, value):
        return [("tagged", value)]

    def end(self, procs, find_more=None, grace_s=None):
        self.ended.append((list(procs), list(find_more()) if find_more else None))
        return []


class FakeRunner:
    """The evaluator's ``claude -p`` without a process (:class:`live_trial.judge.evaluator.Runner`): each call answers
    with the next of ``outputs``: a :class:`~live_trial.judge.evaluator.ProcessResult` as it is, a string as the
    process's stdout, anything else as the structured output of a successful result. ``calls`` records each call
    (argv, prompt, cwd, env, timeout_s); ``prompts`` the prompts alone."""

    def __init__(self, *outputs):
        self.outputs = list(outputs)
        self.calls: list[dict] = []

    @property
    def prompts(self) -> list[str]:
        return [call["prompt"] for call in self.calls]

    def __call__(self, argv, stdin_text, cwd, env, timeout_s):
        self.calls.append({"argv": argv, "prompt": stdin_text, "cwd": cwd, "env": dict(env), "timeout_s": timeout_s})
        out = self.outputs.pop(0)
        if isinstance(out, ProcessResult):
            return out
        if isinstance(out, str):
            return ProcessResult(0, out, "", False, 0.1)
        doc = {"type": "result", "subtype": "success", "is_error": False, "result": json.dumps(out),
               "session_id": "x", "structured_output": out}
        return ProcessResult(0, json.dumps(doc), "", False, 0.1)


def write_state(wd: Path, plugin: str | None, skill: str, *, rehearsal: dict | None = None,
                case_run: dict | None = None) -> None:
    """A schema-valid trial-state.json the way ``run`` writes it (``case_run``: an attempt of a case run's)."""
    write_json(wd / "trial-state.json", {
        "schema_version": 1, "run_id": wd.name, "target": f"{plugin}:{skill}" if plugin else skill,
        "plugin": plugin, "skill": skill, "cwd": str(wd), "session": f"lt-{wd.name}-{skill}",
        "session_id": "s-1", "phase": "finished", "owner_pid": 1, "started_at": "2026-11-30T10:15:00.000Z",
        "nudge_count": 0, "gate_response_count": 0, "gate_responses": [], "stall_extended": False,
        "rehearsal": rehearsal, **({"case_run": case_run} if case_run else {})}, "trial-state.schema.json")


def write_evaluation(wd: Path, goal: str, *, judged_by: str = "evaluator", evidence: list[dict] | None = None,
                     blockers: list[str] | None = None, unverified: list[str] | None = None,
                     answered: bool = True) -> dict:
    """A schema-valid evaluation.json the way the fresh evaluator writes it (one attempt); ``answered`` False: the
    CLI gave no answer at all (its error in the attempt's problems, as for "Not logged in")."""
    blockers = blockers if blockers is not None else ([] if goal == "PASS" else ["0 files found"])
    attempt = {"n": 1, "session_id": "11111111-2222-4333-8444-555555555555", "started_at": "2026-11-30T10:15:00Z",
               "duration_s": 0.1, "exit_code": 0 if answered else 1, "timed_out": False, "request": "judge",
               "answer": {"verdict": goal} if answered else None, "raw_result": None if answered else
               "Not logged in · Please run /login", "stderr_tail": None,
               "problems": [] if answered else ["the CLI reported an error: Not logged in · Please run "
                                                "/login"], "valid": answered}
    doc = {"version": 2, "workdir": str(wd), "target": "t", "description": "", "criteria": [], "criteria_skipped": [],
           "model": None, "judged_by": judged_by, "session_id": attempt["session_id"], "goal_result": goal,
           "blockers": blockers, "evidence": evidence or [], "checks": [], "unverified": unverified or [],
           "attempts": [attempt], "finished_at": "2026-11-30T10:16:00Z"}
    write_json(wd / "evaluation.json", doc, "evaluation.schema.json")
    return doc


def trial_state(**changes):
    """A schema-valid :class:`~live_trial.trial.state.TrialState` of a trial of ``hello:greet`` in phase ``polling``,
    with ``changes`` set (fields of TrialState)."""
    from live_trial.trial.state import TrialState

    state = TrialState(run_id="20261130T101500-abcd", target="hello:greet", plugin="hello", skill="greet",
                       cwd="/tmp/cwd", session="lt-20261130T101500-abcd-greet",
                       session_id="12345678-1234-4234-8234-123456789abc", phase="polling", owner_pid=1,
                       started_at="2026-11-30T10:15:00.000Z")
    state.update(**changes)
    return state


def write_poll_state(wd: Path, *exits: str, session: str = "lt-s", reason: str | None = None) -> None:
    """A schema-valid poll-state.json whose calls ended with ``exits`` (oldest first; none: a poll that never ended),
    the way ``poll --state-file`` leaves it; ``reason``: the last exit's reason (default: its word in lower case)."""
    at = "2026-11-30T10:15:00.000Z"
    write_json(wd / "poll-state.json", {
        "version": 1, "session": session, "session_id": None, "marker": str(wd / "out" / "status.json"),
        "started_at": at, "updated_at": at, "calls": max(1, len(exits)), "ticks": len(exits),
        "transcript_path": None, "transcript_offset": 0, "last_change_at": at, "last_screen_hash": None,
        "last_state": None, "done_streak": 0, "done_since": None, "gate_streak": 0, "last_gate_id": None,
        "warned": {"hard_cap": False},
        "exits": [{"exit": e, "at": at, "reason": reason if reason and i == len(exits) - 1 else e.lower(),
                   "state": None, "ticks": i + 1} for i, e in enumerate(exits)],
        "moves": [], "move_pending": None, "background_outputs": {}}, "poll-state.schema.json")


def skill_call(builder, skill: str, *, ok: bool = True) -> None:
    """A Skill tool call of ``skill`` and its result (an error when not ``ok``), as the CLI records the launch."""
    use = builder.tool_use("Skill", {"skill": skill})
    builder.tool_result(use, f"Launching skill: {skill}" if ok else "Unknown skill", is_error=not ok)
