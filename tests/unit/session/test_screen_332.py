"""screen on real 2.1.332 captures (tests/unit/screens/*_332.txt, tmux 3.3a, pane 200x50, rehearsal server): dialogs
drawn without numbers, the fullscreen renderer's status lines and its running-tool clock."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.session import dialogs, screen

SCREENS = Path(__file__).parents[1] / "screens"


def cap(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def test_unnumbered_bypass_dialog_before_and_after_down():
    before, after = screen.dialog(cap("bypass_dialog_332")), screen.dialog(cap("bypass_dialog_yes_332"))
    assert before.kind == after.kind == "bypass" and not before.numbered
    assert [o.label for o in before.options] == ["No, exit", "Yes, I accept"]
    assert before.selected.label == "No, exit" and after.selected.label == "Yes, I accept"
    assert dialogs.bypass_dialog(cap("bypass_dialog_332")) and screen.blocking_screen(cap("bypass_dialog_332")) is None


def test_unnumbered_bypass_dialog_still_needs_all_four_markers():
    text = cap("bypass_dialog_332").replace("Enter to confirm", "")
    assert not dialogs.bypass_dialog(text)
    text = cap("bypass_dialog_332").replace("WARNING: Claude Code running in Bypass Permissions mode", "")
    assert not dialogs.bypass_dialog(text) and screen.dialog(text).kind == "unknown"


def test_unnumbered_trust_dialog_puts_no_exit_first_and_blocks():
    d = screen.dialog(cap("trust_question_332"))
    assert d.kind == "trust" and [o.label for o in d.options] == ["No, exit", "Yes, I trust this folder"]
    assert d.selected.label == "No, exit"
    assert screen.blocking_screen(cap("trust_question_332"))[0] == "folder-trust question"


@pytest.mark.parametrize("name,kind,labels", [
    ("ask_user_question_332", "ask_user_question", ["Red", "Green", "Blue", "Type something.", "Chat about this"]),
    ("permission_prompt_332", "permission", ["Yes", None, None, "No"]),
])
def test_numbered_dialogs_of_332(name, kind, labels):
    d = screen.dialog(cap(name))
    assert d.kind == kind and d.numbered and d.selected.number == 1
    assert [o.number for o in d.options] == list(range(1, len(labels) + 1))
    assert [want is None or o.label == want for o, want in zip(d.options, labels)] == [True] * len(labels)


def test_unnumbered_block_needs_one_cursor_and_aligned_labels():
    footer = "  Enter to confirm · Esc to cancel"
    assert screen.dialog("  Pick one\n  ❯ Alpha\n    Beta\n\n" + footer).options[1].label == "Beta"
    assert screen.dialog("  Pick one\n    Alpha\n    Beta\n\n" + footer) is None          # no cursor
    assert screen.dialog("  ❯ Alpha\n  ❯ Beta\n\n" + footer) is None                   # two cursors
    assert screen.dialog("  ❯ Alpha\n\n\n\n\n" + footer) is None                        # one line, far away


@pytest.mark.parametrize("name", ["fullscreen_ready_332", "fullscreen_bg_agent_waiting_332"])
def test_fullscreen_screens_are_ready(name):
    assert screen.is_ready(cap(name))


def test_background_agent_read_past_the_fullscreen_right_hint():
    # the line right above the box is the tmux focus-events notice (right-aligned), the status line is above it
    assert screen.background_work(cap("fullscreen_bg_agent_waiting_332")) == {"shells": 0, "agents": 1}
    # and "◐ medium · /effort" there is no status line either
    assert screen.background_work(cap("fullscreen_ready_332")) == {"shells": 0, "agents": 0}


def test_fullscreen_running_tool_clock_is_masked():
    seen = cap("fullscreen_tool_running_332")
    assert "  Waiting a while · 13s" in seen and "sleep 24 (13s)" in seen
    later = seen.replace("  Waiting a while · 13s", "● Waiting a while · 1m 1s").replace("(13s)", "(1m 0s)")
    assert later != seen
    assert screen.mask_volatile(seen) == screen.mask_volatile(later)
    assert screen.mask_volatile(cap("fullscreen_tool_running_past_minute_332")).count(" · #s") == 1


def test_growing_tool_output_is_still_progress():
    seen = cap("fullscreen_tool_running_332")
    grown = seen.replace("  ⎿  $ sleep 24", "  ⎿  line 1\n  ⎿  $ sleep 24", 1)
    assert screen.mask_volatile(seen) != screen.mask_volatile(grown)
    # a description that itself ends in a clock-like word is only masked on a tool row, not in the middle of text
    assert screen.mask_volatile("● wait · 5s") == screen.mask_volatile("● wait · 9s")
    assert screen.mask_volatile("● took 5s") != screen.mask_volatile("● took 9s")


def test_classic_running_row_of_332_is_masked():
    seen = cap("tool_running_332")
    later = seen.replace("Running… (4s)", "Running… (22s)")
    assert seen != later and screen.mask_volatile(seen) == screen.mask_volatile(later)


@pytest.mark.parametrize("name,running", [
    ("tool_running_332", True), ("fullscreen_tool_running_332", True),
    ("fullscreen_tool_running_past_minute_332", True), ("fullscreen_ready_332", False), ("ask_user_question_332", False),
])
def test_tool_running_on_either_renderer(name, running):
    assert screen.tool_running(cap(name)) is running
