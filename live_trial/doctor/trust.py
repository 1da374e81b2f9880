"""The doctor's ``screen.trust_question``: one boot in a git work tree under a trusted folder, as a ``--cwd`` copy of
a git repository is made under the eval root the person trusted (references/transcript-jsonl.md "A git work tree under
a trusted folder"; README "The trusted folder").

2.1.197 carries the trusted folder's trust into the work tree and asks nothing; 2.1.332 asks, and draws the question
twice. Either holds, and the line says which: asked, boot answers it for the folder it was told it may trust
(``BootRequest.trusted_folder``, :mod:`live_trial.session.boot_dialogs`), and the answer took when the CLI wrote that
folder's trust into its config and reached its prompt. The boot has a config, a rehearsal server and a tmux session of
its own (the bypass warning pre-accepted: it is the main probe's to check), killed as soon as it is judged.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, cast

from live_trial.doctor.checks import Checks
from live_trial.doctor.recording import Recording
from live_trial.doctor.records import shown
from live_trial.errors import LiveTrialError
from live_trial.rehearsal.config import rehearsal_env, seed_config, settings_args
from live_trial.rehearsal.server import RehearsalServer
from live_trial.session.backend import Backend
from live_trial.session.boot import BootRequest, boot
from live_trial.session.boot_dialogs import trust_folder_shown

ASKED = "asked; boot answered it for the git work tree, whose trust the CLI wrote"
NOT_ASKED = "not asked: the trusted folder's trust reaches into the git work tree"
WRITE_WAIT_S = 2.0           # after READY, how long the CLI may take to write the folder's trust to its config
GIT_TIMEOUT_S = 20.0


@dataclass
class TrustSeen:
    """What the trust boot showed: ``folder`` (the git work tree), ``asked`` (the question was on a screen boot
    captured), ``answered`` (boot answered it), ``ready`` (boot reached the prompt), ``error`` (boot's, None when
    READY), ``accepted`` (the work tree's ``hasTrustDialogAccepted`` in the config afterwards), ``captures``,
    ``skipped`` (why it could not be played: no git; "" when it was)."""

    folder: Path
    asked: bool = False
    answered: bool = False
    ready: bool = False
    error: LiveTrialError | None = None
    accepted: object = None
    captures: list[str] = field(default_factory=list)
    skipped: str = ""


def make_work_tree(root: Path) -> tuple[Path, Path]:
    """``(trusted folder, git work tree inside it)`` under ``root``: ``git init`` and one empty commit. Raises
    OSError / subprocess.SubprocessError when git is missing or fails."""
    trusted = root / "trusted"
    repo = trusted / "repo"
    repo.mkdir(parents=True)
    git = shutil.which("git")
    if git is None:
        raise FileNotFoundError("git is not on PATH")
    who = ["-c", "user.name=live-trial doctor", "-c", "user.email=doctor@localhost", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], [*who, "commit", "-q", "--allow-empty", "-m", "doctor probe"]):
        subprocess.run([git, *args], cwd=repo, check=True, capture_output=True, timeout=GIT_TIMEOUT_S)
    return trusted, repo.resolve()


def _accepted(config: Path, folder: Path) -> object:
    try:
        doc = json.loads((config / ".claude.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    entry = (doc.get("projects") or {}).get(str(folder)) if isinstance(doc, dict) else None
    return entry.get("hasTrustDialogAccepted") if isinstance(entry, dict) else None


def play(claude_path: str, env: Mapping[str, str], root: Path, backend: Backend, session: str,
         timeout_s: float) -> TrustSeen:
    """Boot ``claude_path`` once in a git work tree under a folder trusted in a fresh config (all under ``root``),
    telling boot the work tree is the folder it may trust; kill the session once READY (or failed) and the config
    read. Never raises for what the CLI does."""
    try:
        trusted, repo = make_work_tree(root)
    except (OSError, subprocess.SubprocessError) as exc:
        return TrustSeen(root, skipped=f"no git work tree could be made ({exc})")
    seen = TrustSeen(repo)
    config = seed_config(root / "trust-config", [trusted], skip_bypass_dialog=True)
    recording = Recording(backend)
    with RehearsalServer({"name": "doctor-trust", "rules": []}) as server:
        try:
            result = boot(BootRequest(session=session, cwd=repo, env_overrides=rehearsal_env(server.url, config),
                                      rehearsal=True, owner_pid=os.getpid(), timeout_s=timeout_s, plugin_dirs=[],
                                      claude=claude_path, settings_args=settings_args(config),
                                      trusted_folder=repo), cast(Backend, recording), base_env=env)
            seen.ready, seen.answered = True, result.trust_answered is not None
            end = time.monotonic() + WRITE_WAIT_S
            while seen.answered and _accepted(config, repo) is not True and time.monotonic() < end:
                time.sleep(0.05)
        except LiveTrialError as exc:
            seen.error = exc
        finally:
            backend.kill_session(session)
    seen.accepted = _accepted(config, repo)
    seen.captures = recording.captures
    seen.asked = any(trust_folder_shown(c) is not None for c in seen.captures)
    return seen


def judge_trust(checks: Checks, seen: TrustSeen) -> None:
    """``screen.trust_question`` from :func:`play`: holds when the boot reached the prompt and either the question was
    never drawn (:data:`NOT_ASKED`) or boot answered it and the CLI wrote the work tree's trust (:data:`ASKED`)."""
    name = "screen.trust_question"
    if seen.skipped:
        return
    folders = [f for c in seen.captures if (f := trust_folder_shown(c)) is not None]
    asked = f"the question was drawn for {folders[0]}" if folders else "no trust question drawn"
    if seen.error is not None:
        tail = (seen.error.details or {}).get("tail") or []
        screen_tail = " / ".join(t.strip() for t in tail if t.strip())[-160:] or \
            shown(seen.captures[-1] if seen.captures else "")
        checks.changed(name, f"{asked}; boot: {seen.error.code}: {seen.error.message} — screen: {screen_tail}")
    elif seen.asked and not seen.answered:
        checks.changed(name, f"{asked}, boot did not answer it and still reached the prompt")
    elif seen.answered:
        checks.judge(name, seen.accepted is True, f"boot answered the question for {seen.folder}, but the config "
                                                  f"holds hasTrustDialogAccepted {seen.accepted!r} for it", form=ASKED)
    else:
        checks.holds(name, NOT_ASKED)
