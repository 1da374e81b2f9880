"""A trial target as the command line takes it: ``plugin:skill`` (the plugin by its plugin.json name) or
``PLUGIN_DIR:skill`` (README "Your own plugin and skill"). Shared by ``run``, ``prepare`` and ``rehearsal new``."""
from __future__ import annotations

import json
from pathlib import Path

from live_trial.errors import RefusedInput


def split_target(target: str, plugins_root: Path | None) -> tuple[str, Path]:
    """Accept plugin:skill or PLUGIN_DIR:skill; return (plugin:skill, plugins_root). Raises :class:`RefusedInput` for
    a PLUGIN_DIR whose manifest has no name."""
    if ":" in target:
        left, skill = target.rsplit(":", 1)
        manifest = Path(left) / ".claude-plugin" / "plugin.json"
        if ("/" in left or left.startswith(".")) and manifest.is_file():
            try:
                name = json.loads(manifest.read_text(encoding="utf-8"))["name"]
            except (ValueError, KeyError, TypeError, RecursionError, OSError):
                raise RefusedInput("plugin manifest has no name", where=str(manifest),
                                   fix='add "name" to .claude-plugin/plugin.json') from None
            return f"{name}:{skill}", plugins_root or Path(left).resolve().parent
    return target, plugins_root or Path("plugins")
