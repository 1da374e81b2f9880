"""screen: the marker table against real 2.1.197 captures (tests/unit/screens/*.txt) and synthetic edge cases."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.session import dialogs, screen

SCREENS = Path(__file__).parents[1] / "screens"
NB = "\u00a0"
RULE = "─" * 120


def cap(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def box(line: str, footer: str = "  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents") -> str:
    return "\n".join([" ▐▛███▜▌   Claude Code v2.1.197", "", RULE, line, RULE, footer])


@pytest.mark.parametrize("name,ready", [
    ("ready_after_bypass", True), ("ready_no_dialog", True), ("bypass_dialog", False), ("bypass_dialog_yes", False),
    ("trust_question", False), ("api_key_approval", False), ("onboarding", False), ("not_logged_in", True),
    ("busy_unable_to_connect", False), ("parked_3_lines", False), ("parked_pasted_chip", False),
    ("dead_bad_flag", False), ("ask_user_question", False), ("after_answer_done", True),
])
def test_is_ready_on_real_captures(name, ready):
    assert screen.is_ready(cap(name)) is ready


@pytest.mark.parametrize("name,expected", [
    ("trust_question", "folder-trust question"), ("api_key_approval", "API-key approval"),
    ("onboarding", "onboarding screen"), ("not_logged_in", "login screen"), ("busy_unable_to_connect", "error screen"),
    ("bypass_dialog", None), ("ready_no_dialog", None), ("ask_user_question", None),
])
def test_blocking_screen_names(name, expected):
    got = screen.blocking_screen(cap(name))
    assert (got[0] if got else None) == expected
    if got:
        assert got[1]  # advice is never empty


def test_bypass_dialog_cursor_before_and_after_down():
    before, after = screen.dialog(cap("bypass_dialog")), screen.dialog(cap("bypass_dialog_yes"))
    assert before.kind == after.kind == "bypass"
    assert [o.label for o in before.options] == ["No, exit", "Yes, I accept"]
    assert before.selected.label == "No, exit" and after.selected.label == "Yes, I accept"
    assert dialogs.bypass_dialog(cap("bypass_dialog"))


def test_bypass_needs_all_four_markers():
    text = cap("bypass_dialog").replace("Enter to confirm", "")
    assert not dialogs.bypass_dialog(text)


def test_ask_user_question_dialog():
    d = screen.dialog(cap("ask_user_question"))
    assert d.kind == "ask_user_question"
    assert d.question == "Which colour?"
    assert [o.label for o in d.options] == ["Red", "Green", "Blue", "Type something.", "Chat about this"]
    assert d.selected.label == "Red"
    assert d.option("blue").number == 3 and d.option("Type something.").number == 4


def test_permission_prompt_dialog():
    d = screen.dialog(cap("permission_prompt"))
    assert d.kind == "permission" and d.question == "Do you want to proceed?"
    assert [o.number for o in d.options] == [1, 2, 3] and d.selected.label == "Yes" and d.options[2].label == "No"
    assert not screen.is_ready(cap("permission_prompt")) and not screen.is_busy(cap("permission_prompt"))


def test_trust_and_api_key_dialogs_parse():
    assert screen.dialog(cap("trust_question")).selected.label == "Yes, I trust this folder"
    assert screen.dialog(cap("api_key_approval")).selected.label == "No (recommended)"


def test_busy_spinner_and_retry_line():
    assert screen.is_busy(cap("busy_unable_to_connect"))
    assert screen.is_busy(box(f"❯{NB}", "  esc to interrupt").replace(RULE, "✢ Razzle-dazzling…\n" + RULE, 1))
    assert screen.is_busy("✽ Zigzagging… (5s · ↓ 25 tokens)")
    assert not screen.is_busy("✻ Crunched for 18s")
    assert not screen.is_busy(cap("ready_no_dialog"))


def test_ready_rules_nbsp_space_placeholder_and_menu():
    assert screen.is_ready(box(f"❯{NB}"))
    assert screen.is_ready(box("❯ "))
    assert screen.is_ready(box(f"❯{NB}Try \"refactor this function\""))
    assert screen.is_ready(box(f"❯{NB}Press up to edit queued messages"))
    assert not screen.is_ready(box(f"❯{NB}do the task"))          # typed text: parked, not ready
    assert not screen.is_ready(box("❯ 1. Red"))                    # a menu line is never READY
    assert not screen.is_ready(box(f"❯{NB}").replace(RULE, "✳ Thinking…\n" + RULE, 1))  # glyph alone while busy
    assert not screen.is_ready("")


def test_parked_input():
    assert screen.parked_input(cap("parked_3_lines")) == "[Pasted text #1 +3 lines]"
    assert screen.parked_input(cap("parked_pasted_chip")) == "[Pasted text #2 +20 lines]"
    assert screen.parked_input(box(f"❯{NB}AAA line one")) == "AAA line one"
    assert screen.parked_input(box(f"❯{NB}")) is None
    assert screen.parked_input(box(f"❯{NB}Press up to edit queued messages")) is None
    assert screen.parked_input(cap("ready_after_bypass")) is None


def test_dead_pane_status_and_errors():
    assert screen.dead_pane_status(cap("dead_bad_flag")) == 1
    assert "unknown option" in cap("dead_bad_flag")
    assert screen.error_screen(cap("busy_unable_to_connect")).startswith("Unable to connect to API")
    assert screen.error_screen("● API Error: 400 bad request") == "API Error: 400 bad request"
    assert screen.error_screen(cap("ready_no_dialog")) is None


def test_mask_volatile_hides_timers_and_spinner():
    a = "✽ Zigzagging… (5s · ↓ 25 tokens)\n● Bash(sleep 20)\n  ⎿  Running… (3s)"
    b = "✢ Razzling… (9s · ↓ 31 tokens)\n  Bash(sleep 20)\n  ⎿  Running… (7s)"
    assert screen.mask_volatile(a) == screen.mask_volatile(b)
    assert screen.mask_volatile("● hello") != screen.mask_volatile("● world")


def test_ends_with_question_and_reports_done():
    q = "\n".join(["❯ do the task", "● Which file should I edit?", RULE, f"❯{NB}", RULE])
    assert screen.screen_ends_with_question(q)
    assert screen.screen_ends_with_question(q.replace("Which file should I edit?", "どちらを使いますか"))
    assert not screen.screen_ends_with_question(q.replace("?", "."))
    assert screen.screen_reports_done(cap("after_answer_done"))
    # the task text echoed in the prompt asks for "DONE:"; that is not a report
    echoed = "\n".join(["❯ report DONE: <status> when finished", RULE, f"❯{NB}", RULE])
    assert not screen.screen_reports_done(echoed)
    echoed_block = "\n".join(["❯ Run the skill.", "  DONE: <status>", "  ask nothing?", "● Working on it.",
                               "  DONE: ok", RULE, f"❯{NB}", RULE])
    assert screen.screen_reports_done(echoed_block)
    assert not screen.screen_reports_done(echoed_block.replace("  DONE: ok", "  still going"))
    assert not screen.screen_ends_with_question(echoed_block.replace("  DONE: ok", ""))


def test_tail_shortens_rules_and_limits():
    t = screen.tail(cap("ready_no_dialog"), 3)
    assert len(t) == 3 and t[1] == "───" and t[0] == "❯"
    assert screen.tail("", 5) == [] and screen.tail("a\nb", 0) == []


AGENTS_FOOTER = "  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt · ← for agents · ↓ to manage"


def agent_screen(elapsed: str, tokens: str = "12", spinner: str = "✽ Zigzagging… (5s · ↓ 25 tokens)") -> str:
    """A busy screen while a subagent runs: Agent tool line, spinner, input box, footer, subagent panel."""
    return "\n".join(["❯ run the probe", "● Agent(Probe subagent)", "  ⎿  Bash(sleep 30)", "     Running… (3s)",
                      "", spinner, RULE, f"❯{NB}", RULE, AGENTS_FOOTER, "", "  ● main",
                      f"  ◯ general-purpose  Probe subagent   {elapsed} · ↓ {tokens} tokens"])


@pytest.mark.parametrize("later", ["4s", "59s", "1m 0s", "1m 5s", "12m 59s", "1h 2m"])
def test_mask_volatile_hides_subagent_panel_clock(later):
    # the panel's seconds tick every second: a hung subagent must not look like progress (else no STALL)
    assert screen.mask_volatile(agent_screen("3s")) == screen.mask_volatile(agent_screen(later))
    assert "  ◯ general-purpose  Probe subagent   #s · ↓ 12 tokens" in screen.mask_volatile(agent_screen(later))


@pytest.mark.parametrize("before,after", [("12", "40"), ("1.2k", "1.3k"), ("999", "1k")])
def test_mask_volatile_keeps_subagent_token_count(before, after):
    # a token count that grows is real progress, also when the clock ticked at the same time
    assert screen.mask_volatile(agent_screen("3s", before)) != screen.mask_volatile(agent_screen("3s", after))
    assert screen.mask_volatile(agent_screen("3s", before)) != screen.mask_volatile(agent_screen("9s", after))


def test_mask_volatile_subagent_row_forms():
    m = screen.mask_volatile
    # before the first token: elapsed only; with a tool-use count; the main row is left alone
    assert m("  ◯ general-purpose  Probe subagent   3s") == m("  ◯ general-purpose  Probe subagent   1m 2s")
    assert m("  ◯ Explore  Probe   3s · 2 tool uses · ↓ 12 tokens") == m("  ◯ Explore  Probe   8s · 2 tool uses · ↓ 12 tokens")
    assert m("  ◯ Explore  Probe   3s · 2 tool uses · ↓ 12 tokens") != m("  ◯ Explore  Probe   3s · 3 tool uses · ↓ 12 tokens")
    assert m("  ● main") == "  ● main"
    # only the last time on the row is the clock; a time in the description stays as written
    assert m("  ● Explore  Wait 5s · then check   12s · ↓ 7 tokens") == "  ● Explore  Wait 5s · then check   #s · ↓ 7 tokens"


@pytest.mark.parametrize("a,b", [
    ("  ⎿  Running… (3s)", "  ⎿  Running… (1m 5s)"),                                  # Bash tool timer
    ("     Running… (59s)", "     Running… (1m 0s)"),                                   # nested under an Agent
    ("✽ Zigzagging… (5s · ↓ 25 tokens)", "✢ Razzling… (1m 5s · ↓ 31 tokens)"),          # spinner line
    ("✢ Razzle-dazzling…", "* Razzle-dazzling…"),                                       # spinner before tokens
    ("✻ API error · Retrying in 1s · attempt 2/10", "✻ API error · Retrying in 4s · attempt 3/10"),
    ("✻ Unable to connect to API (ConnectionRefused) · Retrying in 7s · attempt 5/10",
     "✻ Unable to connect to API (ConnectionRefused) · Retrying in 3s · attempt 6/10"),
    ("● Bash(sleep 20)", "  Bash(sleep 20)"),                                           # blinking tool dot
])
def test_mask_volatile_hides_every_self_ticking_counter(a, b):
    assert screen.mask_volatile(a) == screen.mask_volatile(b)


def test_the_footer_and_its_passing_notices_are_not_progress():
    """After a turn the footer changes by itself for about 18 s on 2.1.197 ("paste again to expand" goes, a tmux
    focus-events notice comes and goes): none of it may reset the STALL clock, or an idle session STALLs 18 s late."""
    box = "────────────────────\n❯\u00a0\n────────────────────\n"
    seen = ["  paste again to expand",
            "  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents",
            "  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents" + " " * 20
            + "tmux focus-events off · add 'set -g focus-events on' to ~/.tmux.conf",
            "  ⏸ plan mode on (shift+tab to cycle)", "  ? for shortcuts"]
    masked = {screen.mask_volatile("● Hello\n\n" + box + footer) for footer in seen}
    assert len(masked) == 1
    # the subagent panel below the footer is kept: its token count is a subagent's progress
    panel = "\n  ● main\n  ◯ general-purpose  Probe subagent   3s · ↓ 12 tokens"
    assert screen.mask_volatile(box + seen[1] + panel) != screen.mask_volatile(box + seen[1] + panel.replace("12", "40"))
