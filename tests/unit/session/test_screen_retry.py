"""The CLI's API-retry line (live_trial.session.screen.api_retry; seed 001 STALL table), on screens captured from 2.1.197 and
2.1.332 while the rehearsal server answered 529 / 500 (references/transcript-jsonl.md "API errors")."""
from __future__ import annotations

import pytest

from live_trial.session import screen

NB = "\u00a0"
RULE = "─" * 60
HEAD = ("● Invoking the skill as the task asks.\n\n● Skill(trialkit:mark)\n  ⎿  Loaded skill · 2 tools allowed\n\n")


def box(footer: str = "  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt") -> str:
    return f"{RULE}\n❯{NB}\n{RULE}\n{footer}\n"


#: 2.1.332: the retry line, its hint row under it, then the input box.
NEW = HEAD + "✻ 529 rehearsal error 529 · retrying in 39s · attempt 10/10\n  ⎿  If it persists, check your inference " \
             "gateway (127.0.0.1:36747).\n\n" + box()
#: 2.1.197: the first attempt's line says "API error"; a tip row under it.
OLD = HEAD + "✻ API error · Retrying in 2s · attempt 9/10\n  ⎿  Tip: Use /btw to ask a quick side question without " \
             "interrupting Claude's current work\n\n" + box()
GAVE_UP = HEAD + "● API Error: 529 rehearsal error 529. This is a server-side issue, usually temporary — try again in " \
                 "a moment.\n\n" + box("  ⏵⏵ bypass permissions on (shift+tab to cycle)")


@pytest.mark.parametrize("capture,line", [
    (NEW, "529 rehearsal error 529 · retrying in 39s · attempt 10/10"),
    (OLD, "API error · Retrying in 2s · attempt 9/10"),
    (HEAD + "✻ Unable to connect to API (ConnectionRefused) · Retrying in 7s · attempt 5/10\n" + box(),
     "Unable to connect to API (ConnectionRefused) · Retrying in 7s · attempt 5/10"),
])
def test_the_retry_line_above_the_input_box_is_read_on_both_clis(capture, line):
    assert screen.api_retry(capture) == line
    assert screen.is_busy(capture)          # a retrying CLI is busy, on 2.1.332's lower-case line too


def test_no_retry_line_once_the_cli_gave_up_or_when_one_is_only_history():
    assert screen.api_retry(GAVE_UP) is None
    later = OLD.replace("✻ API error · Retrying in 2s · attempt 9/10", "✻ API error · Retrying in 2s · attempt 9/10\n\n"
                        "● Working on it again.\n\n✻ Zigzagging… (3s)")
    assert screen.api_retry(later) is None
    assert screen.api_retry("") is None


def test_the_countdown_is_masked_on_both_clis():
    assert screen.mask_volatile(NEW) == screen.mask_volatile(NEW.replace("in 39s · attempt 10/10", "in 8s · attempt 4/10"))
    assert screen.mask_volatile(OLD) == screen.mask_volatile(OLD.replace("in 2s · attempt 9/10", "in 16s · attempt 6/10"))
