"""Small fakes shared by unit tests: a manual clock, and a trial-state.json as ``run`` writes it."""
from __future__ import annotations

from pathlib import Path

from live_trial.jsonfile import write_json


class Clock:
    """A clock that moves only when ``sleep`` is called (seconds); call it for the current time."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.t += s


def write_state(wd: Path, plugin: str | None, skill: str, *, rehearsal: dict | None = None) -> None:
    """A schema-valid trial-state.json the way ``run`` writes it."""
    write_json(wd / "trial-state.json", {
        "schema_version": 1, "run_id": wd.name, "target": f"{plugin}:{skill}" if plugin else skill,
        "plugin": plugin, "skill": skill, "cwd": str(wd), "session": f"lt-{wd.name}-{skill}",
        "session_id": "s-1", "phase": "finished", "owner_pid": 1, "started_at": "2026-11-30T10:15:00.000Z",
        "nudge_count": 0, "gate_response_count": 0, "gate_responses": [], "stall_extended": False,
        "rehearsal": rehearsal}, "trial-state.schema.json")
