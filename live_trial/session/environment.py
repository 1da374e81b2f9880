"""The environment a trial's claude (and its evaluator) starts with: the user's own, less the variables that would make
it believe it is nested, with the classic renderer forced. Pure; never starts anything."""
from __future__ import annotations

from typing import Mapping

# Variables the CLI sets for the processes it starts (read from the 2.1.197 bundle: the env it gives
# Bash/hooks/MCP children and the list it deletes before re-spawning itself) plus the IDE/SDK markers.
# 2.1.332 (read with `strings` from its binary; references/transcript-jsonl.md "Validator, nested variables and the
# doctor probe") gives Bash/hook children CLAUDE_CODE_SESSION_ATTENDED, CLAUDE_PID, CLAUDE_CODE_CHILD_NOTES_DIR, the
# messaging socket and token, CLAUDE_CODE_STARTER_MAY_HOLD_CONNECTOR_FILE and TRACEPARENT; MCP children also get
# CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS and CLAUDE_CODE_CHROME_MCP_ORG_DENIED; its shell snapshot leaves out
# CLAUDE_CODE_INVOKED_SKILLS as one of its own; and it deletes the bridge/eval/host-worktree markers before starting
# another claude. A child that inherits them believes it is nested, and a trial must be a fresh session
# (seed 001 "Purpose").
NESTED_VARS = (
    "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_CODE_EXECPATH", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_AGENT_SDK_CLIENT_APP",
    "CLAUDE_PROJECT_DIR", "CLAUDE_EFFORT", "AI_AGENT", "CLAUDE_CODE_REMOTE", "CLAUDE_CODE_REMOTE_SESSION_ID",
    "CLAUDE_CODE_SESSION_KIND", "CLAUDE_CODE_SESSION_NAME", "CLAUDE_CODE_TMUX_SESSION", "CLAUDE_CODE_TMUX_PREFIX",
    "CLAUDE_CODE_COORDINATOR_MODE", "CLAUDE_CODE_RESUME_INTERRUPTED_TURN", "CLAUDE_CODE_RESUME_PROMPT",
    "CLAUDE_CODE_CHILD_NOTES_DIR", "CLAUDE_CODE_MESSAGING_SOCKET", "CLAUDE_CODE_MESSAGING_TOKEN",
    "CLAUDE_CODE_SESSION_ATTENDED", "CLAUDE_PID", "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS",
    "CLAUDE_CODE_STARTER_MAY_HOLD_CONNECTOR_FILE", "CLAUDE_CODE_INVOKED_SKILLS", "CLAUDE_CODE_CHROME_MCP_ORG_DENIED",
    "CLAUDE_CODE_BRIDGE_CHILD_HELD_TO_AUTO", "CLAUDE_CODE_BRIDGE_SESSION_ID", "CLAUDE_CODE_EVAL_INTERVIEW_SESSION",
    "CLAUDE_CODE_HOST_WORKTREE", "CLAUDE_CODE_HOST_WORKTREE_FENCE", "TRACEPARENT", "TRACESTATE",
    "TMUX", "TMUX_PANE",
)
# The classic renderer for every trial session: 2.1.332 starts a fresh config in its fullscreen renderer (tmux's
# alternate screen: no scrollback, so pane.txt would keep only the visible rows). Both 2.1.197 and 2.1.332 read
# CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN before any setting, and before CLAUDE_CODE_NO_FLICKER=1 (which would force
# fullscreen, so it is dropped); read in both bundles and observed (references/transcript-jsonl.md "Screen and boot").
RENDERER_ENV = {"CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}
RENDERER_DROPPED = ("CLAUDE_CODE_NO_FLICKER",)

def child_env(base_env: Mapping[str, str], overrides: Mapping[str, str] | None = None, *,
              rehearsal: bool) -> dict[str, str]:
    """The environment of the trial's claude: ``base_env`` (the user's, with their auth) minus
    :data:`NESTED_VARS` and :data:`RENDERER_DROPPED`, plus ``overrides`` and :data:`RENDERER_ENV` (the classic
    renderer); ``IS_SANDBOX=1`` in rehearsal."""
    env = {k: v for k, v in base_env.items() if k not in NESTED_VARS and k not in RENDERER_DROPPED}
    env.update({k: v for k, v in (overrides or {}).items() if k not in NESTED_VARS and k not in RENDERER_DROPPED})
    env.update(RENDERER_ENV)
    if rehearsal:
        env["IS_SANDBOX"] = "1"
    return env
