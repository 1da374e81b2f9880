"""The one table of Claude Code TUI markers, and pure functions over a pane capture (no tmux here).

Version-dependent: every marker below was seen on the real CLI 2.1.197 in tmux 3.3a (pane 200x50,
``capture-pane -p``), on 2026-11-30 (references/transcript-jsonl.md) or in claude-cli-observed.md. What was seen:

- Ready prompt: the input box is ``────`` rule / ``❯`` + U+00A0 / ``────`` rule, then the footer
  ``  ⏵⏵ bypass permissions on (shift+tab to cycle) · ← for agents``. The box is drawn while busy too.
  Prompts echoed in the history use a normal space (``❯ hello there``); dialog cursors too (``❯ 1. No, exit``).
- Bypass dialog (seen 0.6-1 s after launch with a fresh config):
  ``  WARNING: Claude Code running in Bypass Permissions mode`` … ``  ❯ 1. No, exit`` / ``    2. Yes, I accept`` /
  ``  Enter to confirm · Esc to cancel``. After Down: ``    1. No, exit`` / ``  ❯ 2. Yes, I accept``.
- Folder trust (``projects.<cwd>.hasTrustDialogAccepted`` false): `` Accessing workspace:`` / cwd /
  `` Quick safety check: Is this a project you created or one you trust? …`` / `` ❯ 1. Yes, I trust this folder`` /
  ``   2. No, exit`` / `` Enter to confirm · Esc to cancel``.
- API-key approval (key not in ``customApiKeyResponses.approved``): ``  Detected a custom API key in your environment`` /
  ``  ANTHROPIC_API_KEY: sk-ant-...…AA`` / ``  Do you want to use this API key?`` / ``    1. Yes`` / ``  ❯ 2. No (recommended)``.
- Onboarding (no ``hasCompletedOnboarding``): ``Welcome to Claude Code v2.1.197`` / `` Let's get started.`` /
  `` Choose the text style that looks best with your terminal`` / ``   1. Auto (match terminal)`` / `` ❯ 2. Dark mode ✔`` …
- Not logged in (no key, no login): the ready prompt with the footer ``Not logged in · Run /login``.
- Unreachable API (ANTHROPIC_BASE_URL on a closed port) while busy:
  ``✻ Unable to connect to API (ConnectionRefused) · Retrying in 7s · attempt 5/10`` in place of the spinner line.
- Exit at start (pane kept by remain-on-exit; the visible screen shows only the tmux notice, the
  scrollback holds the CLI's line): ``error: unknown option '--no-such-flag'`` / ``--dangerously-skip-permissions
  cannot be used with root/sudo privileges for security reasons`` then ``Pane is dead (status 1, <date>)``.
- With CLAUDECODE=1 and CLAUDE_CODE_ENTRYPOINT=cli in its environment 2.1.197 still started (no nested guard seen).
- AskUserQuestion (rehearsal scenario, bypass mode): `` ☐ Colour`` / ``Which colour?`` / ``❯ 1. Red`` (column 0) /
  ``     warm`` / ``  2. Green`` … ``  4. Type something.`` / rule / ``  5. Chat about this`` /
  ``Enter to select · ↑/↓ to navigate · Esc to cancel``. Down moves the cursor, digits do not; on
  "Type something." typed text goes into the answer and Enter submits it (toolUseResult.answers holds it).
- Permission prompt (``--permission-mode default``, Bash): ``● Bash(echo hi > out.txt)`` / ``  ⎿  Waiting…`` / rule /
  `` Bash command`` / command / description / `` Do you want to proceed?`` / `` ❯ 1. Yes`` /
  ``   2. Yes, and always allow access to cwd/ from this project`` / ``   3. No`` /
  `` Esc to cancel · Tab to amend · ctrl+e to explain``.
- Pasted tabs arrive in the transcript as four spaces each; a pasted text ending in blank lines is
  submitted once, trailing newlines kept in the record.
- Subagent panel (claude-cli-observed.md "TUI markers"), under the footer while an Agent tool runs:
  ``  ● main`` / ``  ◯ general-purpose  Probe subagent   3s · ↓ 12 tokens``. The elapsed time ticks by
  itself; the token count grows only when the subagent receives tokens. Forms past a minute
  (``1m 5s``, ``1h 2m``) are assumed from the CLI's other timers, not seen in this panel.
- ExitPlanMode, spinner, API errors: claude-cli-observed.md "TUI markers".

Seen on 2.1.332 as well (2026-12-01, references/transcript-jsonl.md "Screen and boot on 2.1.197 and 2.1.332";
captures ``tests/unit/screens/*_332.txt``):

- Bypass and trust dialogs draw their options without numbers: ``  ❯ No, exit`` / ``    Yes, I accept``; the
  trust dialog puts `` ❯ No, exit`` first, then ``   Yes, I trust this folder``. :func:`dialog` reads them as the block
  right above the footer with one ``❯`` line, every label at one column (``Dialog.numbered`` False, numbers = positions).
  The four bypass markers and the trust marker are unchanged, so recognition stays on the same exact text.
- AskUserQuestion and the permission dialog stay numbered (the permission dialog gains
  ``3. Yes, and switch to auto mode · …`` and the footer `` Esc to cancel · Tab to amend``). Enter pressed in their
  first moments is dropped (callers press again: :mod:`live_trial.session.keys`).
- A fresh config gets the fullscreen renderer unless the CLI is told otherwise (boot does: the classic renderer
  draws as 2.1.197 does). Fullscreen shows a right-aligned ``◐ medium · /effort`` or focus-events notice right above
  the input box (skipped by :func:`background_work`) and a running tool as ``● <description> · 6s`` /
  ``  ⎿  $ cmd (6s)``, ``· 1m 1s`` past a minute (masked by :func:`mask_volatile`; :func:`tool_running`). The pane is
  then in tmux's alternate screen, without scrollback (:data:`ALTERNATE_SCREEN_NOTE`).
- The turn-done line gains `` · done 8:45 PM``; ``turn_done`` still matches.
- Background work (2.1.197, references/transcript-jsonl.md "Background work"): see :func:`background_work`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

NBSP = "\u00a0"
PROMPT_GLYPH = "\u276f"  # ❯

# ---------------------------------------------------------------- the marker table (2.1.197)
MARKERS: dict[str, object] = {
    # input line: ❯ + NBSP (or space) at column 0
    "input_line": re.compile(rf"^{PROMPT_GLYPH}[{NBSP} ](?P<rest>.*)$"),
    # placeholder hints that may follow the glyph on an empty input line
    "placeholder": re.compile(r"^(Try \".*\"|Try .*|Press up to edit queued messages|Type a message.*)$"),
    # a menu/dialog cursor line, never READY: "❯ 1. No, exit"
    "menu_cursor": re.compile(rf"^\s*{PROMPT_GLYPH}\s*\d+\.\s"),
    # spinner line (busy): glyph, space, gerund + U+2026; or the retry line
    "spinner": re.compile(r"^[·✢✳✶✻✽*] (?:\S[^…\n]{0,60}…|.*\bRetrying in \d+s\b)"),
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

BLOCKING_ADVICE = {
    "folder-trust question": "the CLI asks whether to trust the trial folder; run `claude` once in that folder and "
                             "choose \"Yes, I trust this folder\", then boot again",
    "API-key approval": "the CLI asks whether to use ANTHROPIC_API_KEY from the environment; run `claude` once and "
                        "answer Yes, or unset ANTHROPIC_API_KEY to use your login, then boot again",
    "onboarding screen": "this configuration has never finished the CLI's first-run setup; run `claude` once, finish "
                  "it (theme, login), then boot again",
    "login screen": "the CLI is not logged in; run `claude` and /login, or set ANTHROPIC_API_KEY, then boot again",
    "bypass-permissions dialog": "the bypass dialog does not show \"No, exit\" and \"Yes, I accept\" as expected, "
                                 "so nothing was pressed; run claude by hand once and check the dialog (CLI version?)",
    "error screen": "the CLI shows an error at start; read the capture tail, fix the cause (network, "
                    "ANTHROPIC_BASE_URL, account), then boot again",
}


#: The note a trial records when the CLI drew in tmux's alternate screen (the fullscreen renderer, 2.1.332's default
#: for a fresh config): the pane has no scrollback, so pane.txt holds only the rows visible at the end.
ALTERNATE_SCREEN_NOTE = ("the CLI drew its fullscreen renderer (tmux alternate screen): pane.txt holds only the rows "
                         "visible at the end, without scrollback")


@dataclass(frozen=True)
class DialogOption:
    """One option of a dialog: its label, its number (its position when the dialog draws none) and whether the
    cursor (❯) is on it."""

    label: str
    number: int
    selected: bool


@dataclass(frozen=True)
class Dialog:
    """An open dialog: ``kind`` (bypass, trust, api_key, onboarding, ask_user_question, exit_plan_mode,
    permission, unknown), its options in screen order, and the question text ("" when none found)."""

    kind: str
    options: list[DialogOption] = field(default_factory=list)
    question: str = ""
    #: False for a dialog drawn without option numbers (2.1.332's bypass and trust dialogs); ``number`` is then the
    #: option's position
    numbered: bool = True

    @property
    def selected(self) -> DialogOption | None:
        return next((o for o in self.options if o.selected), None)

    def option(self, label: str) -> DialogOption | None:
        """The option whose label equals ``label`` (NBSP as space, case and trailing ✔ ignored)."""
        want = _norm_label(label)
        return next((o for o in self.options if _norm_label(o.label) == want), None)


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
    rest = MARKERS["input_line"].match(lines[idx]).group("rest")
    parts = [rest]
    for line in lines[idx + 1:]:
        if MARKERS["rule"].match(line):
            break
        parts.append(line)
    return "\n".join(parts).replace(NBSP, " ").strip()


def input_line(capture: str) -> int | None:
    """Index (0-based line) of the input prompt ``❯`` on screen, or None when no prompt is drawn."""
    return _input_index(_lines(capture))


def tool_running(capture: str) -> bool:
    """True when a foreground tool's running row is on screen: ``⎿  Running… (Ns)`` (classic renderer) or
    ``⎿  $ cmd (Ns)`` (2.1.332's fullscreen renderer)."""
    return any(MARKERS["tool_running"].match(line.rstrip()) for line in _lines(capture))


def first_lines(capture: str, n: int = 3) -> list[str]:
    """The first ``n`` non-empty lines of the screen that are not rules, stripped, each cut to 100 characters: how
    a screen the harness does not know is named (boot's ``unknown_screen``)."""
    out = [ln.strip()[:100] for ln in _lines(capture) if ln.strip() and not MARKERS["rule"].match(ln)]
    return out[:n]


def is_busy(capture: str) -> bool:
    """True when a spinner line (or the API-retry line) is on screen (claude-cli-observed, recipe step 2)."""
    return any(MARKERS["spinner"].match(line) for line in _lines(capture))


def dialog(capture: str) -> Dialog | None:
    """The open dialog, or None. A dialog needs a footer (``Enter to confirm|select``, ``Esc to cancel``,
    ``Would you like to proceed?``) and a block of numbered options above it, or (2.1.332's bypass and trust dialogs)
    a block of unnumbered options right above it with the ``❯`` cursor on one of them."""
    lines = _lines(capture)
    footer = None
    for i in range(len(lines) - 1, -1, -1):
        if MARKERS["dialog_footer"].search(lines[i]) or MARKERS["permission"].search(lines[i]) \
                or MARKERS["exit_plan_mode"].search(lines[i]):
            footer = i
            break
    if footer is None:
        return None
    idx = _input_index(lines)
    if idx is not None and idx > footer and lines[idx].startswith(PROMPT_GLYPH + NBSP):
        return None  # the input box is drawn below: the "footer" words are part of the conversation
    # the option block: numbered lines above (or just below, for proceed questions) the footer
    opts: list[DialogOption] = []
    first = None
    start = max(0, footer - 40)
    for j in range(start, min(len(lines), footer + 12)):
        m = MARKERS["option"].match(lines[j])
        if m:
            num = int(m.group("num"))
            if opts and num != opts[-1].number + 1:
                opts, first = [], None
            if not opts and num != 1:
                continue
            first = j if first is None else first
            opts.append(DialogOption(label=m.group("label").replace(NBSP, " ").strip(), number=num,
                                     selected=bool(m.group("cursor"))))
    numbered = bool(opts)
    if not opts:
        first, opts = _unnumbered_options(lines, footer)
    if not opts:
        return None
    text = "\n".join(lines)
    kind = _dialog_kind(text)
    return Dialog(kind=kind, options=opts, question=_question(lines, first or 0, kind), numbered=numbered)


UNNUMBERED_GAP = 3   # at most this many blank lines between the last option and the footer (seen: 1 on 2.1.332)


def _unnumbered_options(lines: list[str], footer: int) -> tuple[int | None, list[DialogOption]]:
    """``(index of the first option, options)`` of an unnumbered option block right above the footer (2.1.332:
    ``  ❯ No, exit`` / ``    Yes, I accept``): the contiguous non-blank lines ending at most :data:`UNNUMBERED_GAP`
    blank lines above the footer, with exactly one ``❯`` cursor line (indented), every line's label starting at the
    column of the cursor line's label. Numbers are the positions (1, 2, …). ``(None, [])`` when there is none."""
    end = footer - 1
    while end >= 0 and not lines[end].strip() and footer - end <= UNNUMBERED_GAP:
        end -= 1
    if end < 0 or not lines[end].strip():
        return None, []
    start = end
    while start > 0 and lines[start - 1].strip():
        start -= 1
    block = list(range(start, end + 1))
    cursors = [j for j in block if MARKERS["option_cursor"].match(lines[j])]
    if len(cursors) != 1:
        return None, []
    cur = MARKERS["option_cursor"].match(lines[cursors[0]])
    col = len(cur.group("indent")) + 2
    first = cursors[0]
    while first > start and _label_at(lines[first - 1], col):
        first -= 1
    last = cursors[0]
    while last < end and _label_at(lines[last + 1], col):
        last += 1
    opts = []
    for n, j in enumerate(range(first, last + 1), start=1):
        label = cur.group("label") if j == cursors[0] else lines[j][col:]
        opts.append(DialogOption(label=label.replace(NBSP, " ").strip(), number=n, selected=j == cursors[0]))
    return (first, opts) if len(opts) >= 2 else (None, [])


def _label_at(line: str, col: int) -> bool:
    """True when ``line`` holds text starting exactly at column ``col`` (an unnumbered option's label)."""
    return len(line) > col and line[:col].strip() == "" and not line[col].isspace()


def _dialog_kind(text: str) -> str:
    if all(m in text for m in MARKERS["bypass"][:3]):
        return "bypass"
    for kind in ("trust", "api_key", "onboarding", "ask_user_question", "exit_plan_mode", "permission"):
        if MARKERS[kind].search(text):
            return kind
    return "unknown"


def _question(lines: list[str], first_option: int, kind: str) -> str:
    for j in range(first_option - 1, max(-1, first_option - 15), -1):
        line = lines[j].strip()
        if not line or MARKERS["rule"].match(lines[j]) or line.startswith("☐") or set(line) <= set("╌─ "):
            continue
        return line
    return ""


def bypass_dialog(capture: str) -> bool:
    """True when all four bypass-dialog markers are on screen (seed 001 "boot": accept only then)."""
    text = capture or ""
    return all(marker in text for marker in MARKERS["bypass"])


def blocking_screen(capture: str) -> tuple[str, str] | None:
    """A screen boot must not answer: ``(name, what the user must do)`` or None.

    Names: "folder-trust question", "API-key approval", "onboarding screen", "login screen", "error screen", and
    "bypass-permissions dialog" when its warning shows without all four expected markers. The normal bypass
    dialog is not blocking (boot answers it).
    """
    text = capture or ""
    if bypass_dialog(text):
        return None
    if MARKERS["bypass"][0] in text and MARKERS["dialog_footer"].search(text):
        return "bypass-permissions dialog", BLOCKING_ADVICE["bypass-permissions dialog"]
    if MARKERS["trust"].search(text):
        return "folder-trust question", BLOCKING_ADVICE["folder-trust question"]
    if MARKERS["api_key"].search(text):
        return "API-key approval", BLOCKING_ADVICE["API-key approval"]
    if MARKERS["onboarding"].search(text) and _input_index(_lines(text)) is None:
        return "onboarding screen", BLOCKING_ADVICE["onboarding screen"]
    if MARKERS["login"].search(text):
        return "login screen", BLOCKING_ADVICE["login screen"]
    err = error_screen(text)
    if err:
        return "error screen", BLOCKING_ADVICE["error screen"] + f" (seen: {err})"
    return None


def is_ready(capture: str) -> bool:
    """READY (seed 001 "boot"): the input line is ``❯`` + NBSP/space followed by nothing or a placeholder hint,
    no spinner line, no dialog. A menu line like ``❯ 1.`` is never READY and the glyph alone is not
    enough while busy (claude-cli-observed.md pitfall 4). Boot checks :func:`blocking_screen` first (e.g. a ready prompt
    whose footer says "Not logged in" is a prompt, but boot must not call it READY)."""
    lines = _lines(capture)
    idx = _input_index(lines)
    if idx is None or is_busy(capture) or dialog(capture) is not None:
        return False
    rest = _input_text(lines, idx)
    return rest == "" or bool(MARKERS["placeholder"].match(rest))


def background_work(capture: str) -> dict:
    """``{"shells": n, "agents": m}``: background work the screen shows running now.

    Shells from the footer under the input box (``· 1 shell ·``); agents from the turn's status line right above
    the input box (``✻ Waiting for 1 background agent to finish``). Lines higher up are history: the
    ``✻ Cooked for 0s · 1 shell still running`` line and an older ``Waiting for …`` line stay on screen after the
    work ended, so they are not read. A right-aligned hint between the status line and the box (the fullscreen
    renderer of 2.1.332 draws ``◐ medium · /effort`` or the tmux focus-events notice there) is skipped. The footer is masked from poll's progress hash (``MARKERS["footer"]``): it is
    read here for the state only."""
    lines = _lines(capture)
    found = {"shells": 0, "agents": 0}
    idx = _input_index(lines)
    if idx is None:
        return found
    for line in lines[idx + 1:]:
        if MARKERS["footer"].match(line):
            m = MARKERS["footer_shells"].search(line)
            found["shells"] = int(m.group("n")) if m else 0
            break
    j = idx - 1
    while j >= 0 and (not lines[j].strip() or MARKERS["rule"].match(lines[j]) or MARKERS["right_hint"].match(lines[j])):
        j -= 1
    m = MARKERS["waiting_agents"].match(lines[j]) if j >= 0 else None
    found["agents"] = int(m.group("n")) if m else 0
    return found


def parked_input(capture: str) -> str | None:
    """Text still sitting in the input box (typed or a ``[Pasted text #N …]`` chip), or None when the
    box is empty, shows a placeholder hint, or is not on screen (README Troubleshooting, "parked")."""
    lines = _lines(capture)
    idx = _input_index(lines)
    if idx is None:
        return None
    rest = _input_text(lines, idx)
    if not rest or MARKERS["placeholder"].match(rest):
        return None
    return rest


def error_screen(capture: str) -> str | None:
    """The first error line on screen (API error, unreachable API, usage limit, bad key), else None."""
    for line in _lines(capture):
        m = MARKERS["error"].search(line)
        if m:
            return m.group(1).strip()
    return None


def dead_pane_status(capture: str) -> int | None:
    """Exit status from tmux's ``Pane is dead (status N, …)`` line, or None."""
    for line in _lines(capture):
        m = MARKERS["dead_pane"].match(line.strip())
        if m:
            return int(m.group("status"))
    return None


_VOLATILE = [
    (re.compile(r"\(\d+[smh][^)]*\)"), "(#)"),                      # (5s · ↓ 25 tokens), (Ns)
    (re.compile(r"\b\d+(\.\d+)?[kKmM]? tokens\b"), "# tokens"),
    (re.compile(r"\bRetrying in \d+s\b"), "Retrying in #s"),
    (re.compile(r"\battempt \d+/\d+\b"), "attempt #/#"),
    (re.compile(r"\bfor \d+m? ?\d*s\b"), "for #s"),
    (re.compile(r"Running… \(\d+s\)"), "Running… (#)"),
]


def mask_volatile(capture: str) -> str:
    """The capture with what changes on an idle-but-alive screen masked, for poll's "screen changed =
    progress" hash (seed 001 STALL). Returns the masked text (lines right-stripped, same line count).

    Masked: the footer line under the input box (its mode, its hints and its passing notices: ``MARKERS["footer"]``,
    a turn's end is seen in the transcript, not there); the spinner line's glyph, verb and ``(Ns · ↓ N tokens)``; ``Running… (Ns)`` and any other
    ``(<N>s|m|h …)`` timer; ``✻ <Verb> for Ns``; ``Retrying in Ns`` / ``attempt N/M``; token counts outside
    the subagent panel; the blinking ``●`` at column 0 of a running tool; the clock at the end of a running tool's row
    in the fullscreen renderer (2.1.332: ``● Waiting a while · 1m 1s``, its ``⎿  $ cmd (1m 0s)`` is a ``(…)`` timer);
    and the elapsed time of a
    subagent panel row (``3s``, ``1m 5s``). Kept: that row's token count, which grows only when the
    subagent receives tokens, so a subagent that streams is progress and a hung one can STALL.
    """
    out = []
    for line in _lines(capture):
        row = MARKERS["subagent_row"].match(line)
        if row:  # only its clock ticks; the rest (token count included) is real
            out.append((row.group("head") + "#s" + row.group("stats")).rstrip())
            continue
        if MARKERS["footer"].match(line):
            out.append("<footer>")
            continue
        if MARKERS["spinner"].match(line):
            line = "<spinner>" + (" " + line.split("…", 1)[1] if "…" in line else "")
        if line.startswith("●"):
            line = " " + line[1:]
        if line.startswith(" "):
            line = MARKERS["tool_clock"].sub(" · #s", line.rstrip())
        for pattern, repl in _VOLATILE:
            line = pattern.sub(repl, line)
        out.append(line.rstrip())
    return "\n".join(out)


def _assistant_region(lines: list[str]) -> list[str]:
    """Lines after the last echoed prompt (``❯ text``) and above the input box."""
    idx = _input_index(lines)
    end = idx if idx is not None else len(lines)
    while end > 0 and (MARKERS["rule"].match(lines[end - 1]) or not lines[end - 1].strip()):
        end -= 1
    start = 0
    for i in range(end - 1, -1, -1):
        if MARKERS["prompt_echo"].match(lines[i]) and not MARKERS["menu_cursor"].match(lines[i]):
            start = i + 1
            break
    # the echoed prompt continues on indented lines; the assistant's part starts at its first "●" line
    while start < end and not lines[start].startswith("●"):
        start += 1
    return lines[start:end]


def ends_with_question(capture: str) -> bool:
    """True when the assistant's last words above the input box end with a question (``?``, ``？``,
    ``…ますか``): the STALL table row 4 "質問・確認待ち文" (seed 001)."""
    region = [ln for ln in _assistant_region(_lines(capture))
              if ln.strip() and not MARKERS["spinner"].match(ln) and not MARKERS["turn_done"].match(ln)]
    if not region:
        return False
    return bool(MARKERS["question_end"].search(region[-1].replace(NBSP, " ").rstrip()))


def reports_done(capture: str) -> bool:
    """True when the assistant reported ``DONE: <status>`` after the last echoed prompt (task contract item 3)."""
    return any(MARKERS["done_report"].match(ln) for ln in _assistant_region(_lines(capture)))


def tail(capture: str, n: int = 15) -> list[str]:
    """The last ``n`` non-empty lines, right-stripped, long rules shortened to ``───``."""
    lines = [re.sub(r"─{10,}", "───", ln.rstrip()) for ln in _lines(capture) if ln.strip()]
    return lines[-n:] if n > 0 else []
