"""Small fakes shared by unit tests: a manual clock, a tmux backend of one session, and a trial-state.json as ``run``
writes it."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence, Union

from live_trial.errors import Blocked
from live_trial.jsonfile import write_json
from live_trial.session.rules import PaneRow


class Clock:
    """A clock that moves only when ``sleep`` is called (seconds); call it for the current time."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


#: A screen of :class:`FakeBackend`: its text, or a function of the capture's number (1 = the first) that returns it.
FakeScreen = Union[str, Callable[[int], str]]


class FakeBackend:
    """One tmux session as :class:`live_trial.session.protocols.Backend` reads it, without tmux.

    ``screens``: what successive captures show (the last one repeats); ``alive`` False: its pane's process exited;
    ``exists`` False: no such session; ``pid``: the pane's pid (None: unknown, read as 0); ``blocked``: tmux is
    missing (every call raises Blocked). ``captures`` counts the screens read (``probe`` and ``capture``).
    """

    PANE_ID = "%1"

    def __init__(self, screens: Sequence[FakeScreen] | None = None, *, alive: bool = True, exists: bool = True,
                 pid: int | None = None, blocked: bool = False, idle: str = "") -> None:
        self.screens = list(screens) if screens is not None else [idle]
        self.alive, self.exists, self.pid, self.blocked = alive, exists, pid, blocked
        self.captures = 0
        self.socket = "test"

    def _tmux(self) -> None:
        if self.blocked:
            raise Blocked("tmux is not installed", code="tmux_missing")

    def has_session(self, name: str) -> bool:
        self._tmux()
        return self.exists

    def pane(self, name: str) -> PaneRow | None:
        self._tmux()
        if not self.exists:
            return None
        return PaneRow(session=name, pane_id=self.PANE_ID, pane_pid=self.pid or 0, dead=not self.alive,
                       dead_status=None if self.alive else 0, owner="", created=0)

    def probe(self, name: str, pane_id: str | None = None) -> tuple[bool, str]:
        self._tmux()
        if not self.pane_alive(name):
            return False, ""
        return True, self.capture(name)

    def pane_alive(self, name: str) -> bool:
        self._tmux()
        return self.alive and self.exists

    def pane_pid(self, name: str) -> int | None:
        return self.pid

    def capture(self, name: str, scrollback: bool = False) -> str:
        screen = self.screens[min(self.captures, len(self.screens) - 1)]
        self.captures += 1
        return screen(self.captures) if callable(screen) else screen


def write_state(wd: Path, plugin: str | None, skill: str, *, rehearsal: dict | None = None) -> None:
    """A schema-valid trial-state.json the way ``run`` writes it."""
    write_json(wd / "trial-state.json", {
        "schema_version": 1, "run_id": wd.name, "target": f"{plugin}:{skill}" if plugin else skill,
        "plugin": plugin, "skill": skill, "cwd": str(wd), "session": f"lt-{wd.name}-{skill}",
        "session_id": "s-1", "phase": "finished", "owner_pid": 1, "started_at": "2026-11-30T10:15:00.000Z",
        "nudge_count": 0, "gate_response_count": 0, "gate_responses": [], "stall_extended": False,
        "rehearsal": rehearsal}, "trial-state.schema.json")


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
               "problems": [] if answered else ["the CLI reported an error (success): Not logged in · Please run "
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
