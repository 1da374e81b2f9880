"""A stand-in for the model's service and a person's own Claude Code config, for the e2e tests of the path a real
login takes (``run`` without ``--rehearsal``; README "Running a real trial").

The stand-in is the rehearsal server (:class:`live_trial.rehearsal.server.RehearsalServer`) run in the test process,
serving message ids as the service does (``msg_``), so nothing in the transcript tells it from the service. The
harness reaches it only the way a person's environment points the CLI at a service: ``ANTHROPIC_BASE_URL`` and
``ANTHROPIC_API_KEY`` (or ``CLAUDE_CODE_OAUTH_TOKEN``), and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` is NOT set
(a person's shell does not set it). The config is written as claude 2.1.197 and 2.1.332 leave it after a first run
where the person finished the set-up, trusted a folder and answered Yes to the key (references/transcript-jsonl.md,
"The live path"): ``hasCompletedOnboarding``, ``lastOnboardingVersion``, ``numStartups``, the key's last 20
characters in ``customApiKeyResponses.approved`` and the trusted folder in ``projects``.
"""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from live_trial.rehearsal.server import RehearsalServer

from .run_support import SCENARIOS

#: A key of the form the service issues; the stand-in does not check it, the CLI asks once whether to use it.
USER_KEY = "sk-ant-api03-" + "u" * 80 + "AA"
OTHER_KEY = "sk-ant-api03-" + "o" * 80 + "BB"
LIVE_SCENARIO = SCENARIOS / "live-path.yaml"
#: Variables the suite's own environment may hold that a person's shell does not: dropped from the trial's.
NOT_A_PERSONS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
                 "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "IS_SANDBOX", "DISABLE_AUTOUPDATER")


def stand_in() -> RehearsalServer:
    """The stand-in serving ``live-path.yaml``, started (the caller stops it)."""
    return RehearsalServer(LIVE_SCENARIO, message_id_prefix="msg_").start()


def first_run_config(config_dir: Path, *, trusted: list[Path], key: str | None = USER_KEY,
                     version: str = "2.1.332", finished: bool = True) -> Path:
    """``config_dir/.claude.json`` as a first ``claude`` run leaves it once the person finished the set-up, trusted
    ``trusted`` and approved ``key`` (None: logged in some other way, no key approved); ``finished`` False: as one
    left before its set-up was finished (``hasCompletedOnboarding`` false: the CLI shows the onboarding screen again).
    Returns ``config_dir``."""
    config_dir.mkdir(parents=True, exist_ok=True)
    project = {"allowedTools": [], "mcpContextUris": [], "mcpServers": {}, "enabledMcpjsonServers": [],
               "disabledMcpjsonServers": [], "hasTrustDialogAccepted": True,
               "hasClaudeMdExternalIncludesApproved": False, "hasClaudeMdExternalIncludesWarningShown": False}
    doc = {"numStartups": 1,
           "customApiKeyResponses": {"approved": [key[-20:]] if key else [], "rejected": []},
           "firstStartTime": "2026-12-02T19:12:31.662Z", "firstStartVersion": version,
           "machineID": uuid.uuid4().hex * 2, "opusProMigrationComplete": True, "seenNotifications": {},
           "migrationVersion": 15, "hasCompletedOnboarding": finished, "lastOnboardingVersion": version,
           "userID": uuid.uuid4().hex * 2, "lastReleaseNotesSeen": version,
           "projects": {str(Path(p).resolve()): dict(project) for p in trusted}}
    (config_dir / ".claude.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return config_dir


def persons_env(server: RehearsalServer | None, config_dir: Path, *, key: str | None = USER_KEY,
                oauth_token: str | None = None) -> dict[str, str]:
    """The environment of a person who exported their service's address, their key (or OAuth token) and their
    config folder: the suite's own, less :data:`NOT_A_PERSONS`, plus those. ``IS_SANDBOX=1`` when root (the CI
    container is a sandbox; README "Running a real trial")."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_A_PERSONS}
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    if server is not None:
        env["ANTHROPIC_BASE_URL"] = server.url
    if key:
        env["ANTHROPIC_API_KEY"] = key
    if oauth_token:
        env["CLAUDE_CODE_OAUTH_TOKEN"] = oauth_token
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env
