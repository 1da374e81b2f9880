"""examples/ci/github-actions.yml replays the committed tapes on every pull request with no secret (README "Replaying
a real trial offline")."""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]


def test_the_ci_example_replays_each_committed_tape_without_a_secret() -> None:
    doc = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    replay = doc["jobs"]["replay"]
    assert "secrets." not in yaml.safe_dump(replay) and "ANTHROPIC_API_KEY" not in (replay.get("env") or {})
    runs = "\n".join(step.get("run", "") for step in replay["steps"])
    assert "for tape in tapes/*/*.jsonl" in runs and '--replay "$tape"' in runs and "exit $status" in runs
    assert "@anthropic-ai/claude-code@2.1.332" in runs and "LIVE_TRIAL_CLAUDE_BIN" in runs
    assert replay["if"] == "github.event_name != 'schedule'"
