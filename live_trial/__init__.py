"""live_trial: run a Claude Code skill in a real claude session in tmux and judge whether it reached its goal."""
from __future__ import annotations

__version__ = "0.1.0"
PINNED_CLAUDE_VERSION = "2.1.197"
