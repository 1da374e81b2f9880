"""Shared parts of the e2e tests of boot, send and the backend: session names, a backend that cleans up what it made,
booting a rehearsal session."""
from __future__ import annotations

import os
from pathlib import Path

from live_trial.rehearsal.config import seed_config, settings_args
from live_trial.session.backend import Backend
from live_trial.session.boot import BootRequest, boot
from live_trial.trial.workdir import new_run_id

PLAIN_SCENARIO = {"name": "plain", "side_query_text": "Title",
                  "rules": [{"id": "plain", "reply": {"content": [{"text": "ok noted"}]}}]}


def session_name(slug: str) -> str:
    """A fresh valid ``lt-<run-id>-<slug>`` name."""
    return f"lt-{new_run_id()}-{slug}"


class TrackingBackend(Backend):
    """A Backend on the suite's socket that kills every session it created at :meth:`cleanup`."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[str] = []

    def new_session(self, name, argv, **kw):
        self.created.append(name)
        return super().new_session(name, argv, **kw)

    def cleanup(self) -> None:
        for name in self.created:
            self.kill_session(name)


def boot_rehearsal(backend: Backend, tmp: Path, slug: str, server_url: str = "http://127.0.0.1:9", *,
                   trust: bool = True, skip_dialog: bool = False, **kw):
    """Seed an isolated config, boot a session against ``server_url`` and return (result, cwd, config_dir)."""
    from live_trial.rehearsal.config import rehearsal_env

    cwd = tmp / f"cwd-{slug}"
    cwd.mkdir(parents=True, exist_ok=True)
    config = seed_config(tmp / f"cfg-{slug}", [cwd], trust=trust, skip_bypass_dialog=skip_dialog)
    req = BootRequest(session=session_name(slug), cwd=cwd, env_overrides=rehearsal_env(server_url, config),
                      settings_args=settings_args(config),
                      rehearsal=True, owner_pid=os.getpid(), timeout_s=kw.pop("timeout_s", 90), **kw)
    return boot(req, backend), cwd, config
