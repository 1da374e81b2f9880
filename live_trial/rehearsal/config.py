"""An isolated Claude Code configuration folder for rehearsal trials and tests.

In rehearsal the CLI must not touch the user's ``~/.claude`` and must not try the internet, so the
harness points ``CLAUDE_CONFIG_DIR`` at a folder under the workdir, pre-seeded with onboarding
done, the API key approved and the trial cwd trusted (claude-cli-observed.md, preamble). Without
that seeding the CLI shows onboarding or tries to log in.
"""
from __future__ import annotations

import json
from pathlib import Path

from live_trial import PINNED_CLAUDE_VERSION
from live_trial.jsonfile import make_private_dirs, write_text_atomic

REHEARSAL_API_KEY = "sk-ant-api03-live-trial-rehearsal-key-0000000000000000000000000000000000AA"
#: Every message the rehearsal server plays (:mod:`live_trial.rehearsal.server`) has an id starting with this; the CLI
#: keeps it in the transcript (``message.id``), so a transcript says by itself whether its model was scripted.
REHEARSAL_MESSAGE_PREFIX = "msg_rehearsal_"
#: The flag-settings file :func:`seed_config` writes for a pre-accepted bypass dialog (:func:`settings_args`).
FLAG_SETTINGS = "flag-settings.json"


def rehearsal_env(server_url: str, config_dir: Path) -> dict[str, str]:
    """Environment variables that point the real CLI at a rehearsal server with an isolated config.

    ``config_dir`` should be seeded with :func:`live_trial.rehearsal.config.seed_config` (onboarding done,
    the rehearsal key approved, the trial cwd trusted). ``IS_SANDBOX=1`` lets root use
    ``--dangerously-skip-permissions``; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` stops telemetry and
    update checks (the machine may have no network); ``CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN=1`` keeps the classic
    renderer (2.1.332 starts a fresh config fullscreen, without scrollback), as boot does for every trial. Returns a new
    dict of str -> str; merge it over the child's env.
    """
    return {
        "ANTHROPIC_BASE_URL": server_url.rstrip("/"),
        "ANTHROPIC_API_KEY": REHEARSAL_API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CONFIG_DIR": str(Path(config_dir).resolve()),
        "IS_SANDBOX": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1",
    }


def seed_config(config_dir: Path, trusted_cwds: list[Path], *, api_key: str = REHEARSAL_API_KEY,
                skip_bypass_dialog: bool = False, trust: bool = True) -> Path:
    """Create ``config_dir`` with ``.claude.json`` (and ``settings.json``) so the CLI boots straight to its prompt.

    ``trusted_cwds`` are marked as trusted folders (``trust=False`` leaves them untrusted, to test the
    trust question). ``skip_bypass_dialog`` pre-accepts the bypass-permissions warning: in ``settings.json`` (read
    by 2.1.197) and in ``flag-settings.json``, which a claude reads when started with :func:`settings_args`
    (2.1.332; ``boot`` adds it for a rehearsal).
    Returns ``config_dir``. Existing files are overwritten.
    """
    config_dir = Path(config_dir)
    make_private_dirs(config_dir)
    projects = {str(Path(c).resolve()): {"hasTrustDialogAccepted": bool(trust), "allowedTools": [],
                                         "hasCompletedProjectOnboarding": True}
                for c in trusted_cwds}
    doc = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": PINNED_CLAUDE_VERSION,
        "theme": "dark",
        "numStartups": 1,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": projects,
        "autoUpdates": False,
    }
    write_text_atomic(config_dir / ".claude.json", json.dumps(doc, indent=2) + "\n")
    settings = {"skipDangerousModePermissionPrompt": True} if skip_bypass_dialog else {}
    write_text_atomic(config_dir / "settings.json", json.dumps(settings, indent=2) + "\n")
    flag = config_dir / FLAG_SETTINGS
    if skip_bypass_dialog:
        write_text_atomic(flag, json.dumps(settings, indent=2) + "\n")
    elif flag.exists():
        flag.unlink()
    return config_dir


def settings_args(config_dir: Path) -> list[str]:
    """``["--settings", "<config_dir>/flag-settings.json"]`` when :func:`seed_config` pre-accepted the bypass dialog
    there, else ``[]``: add it to the argv of a claude started on ``config_dir``.

    2.1.197 reads ``skipDangerousModePermissionPrompt`` from ``<config>/settings.json`` (user settings) even under
    ``--setting-sources local``; 2.1.332 reads only the enabled sources there, but always the ``--settings`` file
    (flag settings), on both versions (references/transcript-jsonl.md "Screen and boot on 2.1.197 and 2.1.332").
    The trial's own folder (``.claude/settings.local.json``) is never written: that would be a side effect the
    session did not make."""
    flag = Path(config_dir) / FLAG_SETTINGS
    return ["--settings", str(flag.resolve())] if flag.is_file() else []
