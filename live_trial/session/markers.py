"""The one table of Claude Code TUI markers (``MARKERS``) and the line reading every screen function shares: the
lines of a capture and where the input box is. Pure, no tmux. What each marker was seen as, per CLI release: the
docstring of :mod:`live_trial.session.screen` and references/transcript-jsonl.md "Screen and boot on 2.1.197 and
2.1.332"."""
from __future__ import annotations

import re
from typing import TypedDict

NBSP = "\u00a0"
PROMPT_GLYPH = "\u276f"  # ❯


class Markers(TypedDict):
    """The shape of :data:`MARKERS`: a compiled pattern per marker, but for the bypass dialog's four exact texts and
    the label of the free-text option."""

    input_line: re.Pattern[str]
    placeholder: re.Pattern[str]
    menu_cursor: re.Pattern[str]
    spinner: re.Pattern[str]
    api_retry: re.Pattern[str]
    turn_done: re.Pattern[str]
    rule: re.Pattern[str]
    option: re.Pattern[str]
    option_cursor: re.Pattern[str]
    dialog_footer: re.Pattern[str]
    bypass: tuple[str, str, str, str]
    trust: re.Pattern[str]
    api_key: re.Pattern[str]
    onboarding: re.Pattern[str]
    login: re.Pattern[str]
    ask_user_question: re.Pattern[str]
    exit_plan_mode: re.Pattern[str]
    permission: re.Pattern[str]
    error: re.Pattern[str]
    dead_pane: re.Pattern[str]
    subagent_row: re.Pattern[str]
    done_report: re.Pattern[str]
    footer: re.Pattern[str]
    footer_shells: re.Pattern[str]
    waiting_agents: re.Pattern[str]
    right_hint: re.Pattern[str]
    tool_clock: re.Pattern[str]
    tool_running: re.Pattern[str]
    prompt_echo: re.Pattern[str]
    question_end: re.Pattern[str]
    free_text_option: str


# ---------------------------------------------------------------- the marker table (2.1.197)
MARKERS: Markers = {
    # input line: ❯ + NBSP (or space) at column 0
    "input_line": re.compile(rf"^{PROMPT_GLYPH}[{NBSP} ](?P<rest>.*)$"),
    # placeholder hints that may follow the glyph on an empty input line
    "placeholder": re.compile(r"^(Try \".*\"|Try .*|Press up to edit queued messages|Type a message.*)$"),
    # a menu/dialog cursor line, never READY: "❯ 1. No, exit"
    "menu_cursor": re.compile(rf"^\s*{PROMPT_GLYPH}\s*\d+\.\s"),
    # spinner line (busy): glyph, space, gerund + U+2026; or the retry line
    "spinner": re.compile(r"^[·✢✳✶✻✽*] (?:\S[^…\n]{0,60}…|.*\b[Rr]etrying in \d+s\b)"),
    # the CLI retrying a failed API request (references/transcript-jsonl.md "API errors"): 2.1.197 "✻ API error ·
    # Retrying in 2s · attempt 9/10", 2.1.332 "✻ 529 rehearsal error 529 · retrying in 39s · attempt 10/10"; the
    # first attempt's line reads "API error", later ones the service's message
    "api_retry": re.compile(r"^[·✢✳✶✻✽*] (?P<what>.*?) · [Rr]etrying in (?P<s>\d+)s · attempt (?P<n>\d+)/(?P<of>\d+)"),
    "turn_done": re.compile(r"^✻ \S+ for \d"),
    "rule": re.compile(r"^\s*─{10,}\s*$"),
    # dialog option line: optional cursor, number, dot, label
    "option": re.compile(rf"^(?P<indent>\s*)(?P<cursor>{PROMPT_GLYPH}\s*)?(?P<num>\d+)\.\s+(?P<label>\S.*?)\s*$"),
    # 2.1.332 draws the bypass and trust dialogs without numbers: "  ❯ No, exit" / "    Yes, I accept" (the other
    # options start at the column of the cursor line's label)
    "option_cursor": re.compile(rf"^(?P<indent>\s+){PROMPT_GLYPH} (?P<label>\S.*?)\s*$"),
    "dialog_footer": re.compile(r"(Enter to confirm|Enter to select|Esc to cancel)"),
    "bypass": ("WARNING: Claude Code running in Bypass Permissions mode", "No, exit", "Yes, I accept",
               "Enter to confirm"),
    "trust": re.compile(r"(Is this a project you created or one you trust|Yes, I trust this folder|"
                        r"Do you trust the files in this folder)"),
    "api_key": re.compile(r"(Detected a custom API key in your environment|Do you want to use this API key\?)"),
    "onboarding": re.compile(r"(Let's get started\.|Choose the text style that looks best with your terminal|"
                             r"Welcome to Claude Code v\d)"),
    "login": re.compile(r"(Not logged in · Run /login|Select login method|Please run /login|"
                        r"Log in with your Claude account|Invalid API key)"),
    "ask_user_question": re.compile(r"(Type something\.|Chat about this|Enter to select · ↑/↓ to navigate)"),
    "exit_plan_mode": re.compile(r"(Ready to code\?|Here is Claude's plan:|Would you like to proceed\?)"),
    "permission": re.compile(r"Do you want to proceed\?"),
    "error": re.compile(r"(API Error: .*|Unable to connect to API.*|Claude usage limit reached.*|"
                        r"You've hit your (?:usage )?limit.*|Credit balance is too low.*|"
                        r"OAuth token has expired.*|Request timed out.*|Invalid API key.*)"),
    "dead_pane": re.compile(r"^Pane is dead \(status (?P<status>-?\d+)"),
    # subagent panel row: indented ◯/● glyph, agent type and description, then elapsed time, optionally
    # followed by " · ↓ 12 tokens" / " · 2 tool uses" and nothing else (so a "5s" in the description is not it)
    "subagent_row": re.compile(
        r"^(?P<head>\s+[◯●]\s+\S.*?\s)"
        r"(?P<elapsed>(?:\d+h\s?)?(?:\d+m\s?)?\d+(?:\.\d+)?s|\d+h(?:\s?\d+m)?|\d+m)"
        r"(?P<stats>(?:\s+·\s+(?:[↓↑]\s*)?\d[\d.,]*[kKmM]?\s+(?:tokens?|tool uses?))*)\s*$"),
    "done_report": re.compile(r"^(?:●\s+|\s{2})DONE:\s*\S"),
    # the footer line under the input box: the mode (bypass, plan, auto, default "? for shortcuts") and its hints
    # ("esc to interrupt", "← for agents"), or a hint standing in for it ("paste again to expand", "Press Ctrl-C
    # again to exit"); its right side shows passing notices ("tmux focus-events off · add 'set -g focus-events
    # on' …" for about 8 s after a turn). Seen on 2.1.197: none of it is progress of the conversation.
    "footer": re.compile(r"^\s{0,4}(?:⏵⏵|⏵|⏸|\? for shortcuts|paste again to expand|Press Ctrl-C again to exit)"),
    # background work (2.1.197, references/transcript-jsonl.md "Background work"): the footer while shells run
    # ("  ⏵⏵ bypass permissions on · 1 shell · ← for agents · ↓ to manage"), and the turn's status line above the
    # input box while background agents run ("✻ Waiting for 1 background agent to finish"; no "…", so not a spinner)
    "footer_shells": re.compile(r"·\s+(?P<n>\d+)\s+shells?\b"),
    "waiting_agents": re.compile(r"^[·✢✳✶✻✽*] Waiting for (?P<n>\d+) background agents? to finish"),
    # a right-aligned hint on the line above the input box (fullscreen renderer, 2.1.332): "◐ medium · /effort",
    # "tmux focus-events off · add 'set -g focus-events on' …"; not the turn's status line
    "right_hint": re.compile(r"^\s{20,}\S"),
    # the clock of a running tool's row in the fullscreen renderer (2.1.332): "● Waiting a while · 1m 1s"
    "tool_clock": re.compile(r"(?<=\S) · (?:\d+h ?)?(?:\d+m ?)?\d+s$"),
    # a running foreground tool: "⎿  Running… (4s)" (classic renderer, both versions) or "⎿  $ cmd (6s)"
    # (fullscreen renderer, 2.1.332)
    "tool_running": re.compile(r"^\s+⎿\s+(?:Running… \(\d|\$ .*\((?:\d+h ?)?(?:\d+m ?)?\d+s\)$)"),
    "prompt_echo": re.compile(rf"^{PROMPT_GLYPH} \S"),
    "question_end": re.compile(r"([?？]|(?:ますか|でしょうか|ください)[。.]?)\s*$"),
    "free_text_option": "Type something.",
}


def _norm_label(label: str) -> str:
    return re.sub(r"\s+", " ", label.replace(NBSP, " ")).strip().rstrip("✔").strip().lower()


def _lines(capture: str) -> list[str]:
    return (capture or "").replace("\r", "").split("\n")


def _input_index(lines: list[str]) -> int | None:
    """Index of the input line: the last column-0 ``❯`` + NBSP/space line that is not a menu cursor."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if MARKERS["input_line"].match(line) and not MARKERS["menu_cursor"].match(line):
            below = lines[i + 1:i + 6]
            if any(MARKERS["rule"].match(x) for x in below) or line.startswith(PROMPT_GLYPH + NBSP):
                return i
    return None


def _input_text(lines: list[str], idx: int) -> str:
    first = MARKERS["input_line"].match(lines[idx])
    assert first is not None                # idx is the input line (_input_index)
    rest = first.group("rest")
    parts = [rest]
    for line in lines[idx + 1:]:
        if MARKERS["rule"].match(line):
            break
        parts.append(line)
    return "\n".join(parts).replace(NBSP, " ").strip()
