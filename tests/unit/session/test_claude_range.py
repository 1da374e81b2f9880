"""The supported Claude Code range (README "Set-up"): what claude-pin installs, and the one warning outside it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial import NEWEST_VERIFIED_CLAUDE_VERSION, OLDEST_CLAUDE_VERSION, PINNED_CLAUDE_VERSION
from live_trial.session.claude_bin import ClaudeBinary, version_key

ROOT = Path(__file__).resolve().parents[3]


def _pinned(folder: Path) -> str:
    return json.loads((folder / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]


def test_claude_pin_installs_the_newest_verified_release_and_the_oldest_beside_it():
    assert _pinned(ROOT / "claude-pin") == PINNED_CLAUDE_VERSION == NEWEST_VERIFIED_CLAUDE_VERSION
    assert _pinned(ROOT / "claude-pin" / "oldest") == OLDEST_CLAUDE_VERSION
    assert version_key(OLDEST_CLAUDE_VERSION) < version_key(NEWEST_VERIFIED_CLAUDE_VERSION)


@pytest.mark.parametrize("version", [OLDEST_CLAUDE_VERSION, "2.1.250", NEWEST_VERIFIED_CLAUDE_VERSION])
def test_a_cli_inside_the_verified_range_gets_no_warning(version):
    assert ClaudeBinary(path="/x/claude", version=version, source="path").warning() is None


@pytest.mark.parametrize("version", ["2.1.196", "2.1.333", "2.2.0", "10.0.0", "unknown"])
def test_a_cli_outside_the_verified_range_is_warned_about_naming_the_range_and_doctor(version):
    warning = ClaudeBinary(path="/x/claude", version=version, source="path").warning()
    assert warning is not None
    assert f"{OLDEST_CLAUDE_VERSION}–{NEWEST_VERIFIED_CLAUDE_VERSION}" in warning
    assert "live-trial doctor --cli /x/claude" in warning and version in warning


def test_version_keys_compare_as_numbers_not_text():
    assert version_key("2.1.332") > version_key("2.1.40")
    assert version_key("2.1") is None and version_key("v2.1.3") is None and version_key("unknown") is None
