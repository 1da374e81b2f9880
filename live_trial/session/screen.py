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
- API-key approval (key not in ``customApiKeyResponses.approved``):
  ``  Detected a custom API key in your environment`` / ``  ANTHROPIC_API_KEY: sk-ant-...…AA`` /
  ``  Do you want to use this API key?`` / ``    1. Yes`` / ``  ❯ 2. No (recommended)``.
- Onboarding (no ``hasCompletedOnboarding``): ``Welcome to Claude Code v2.1.197`` / `` Let's get started.`` /
  `` Choose the text style that looks best with your terminal`` / ``   1. Auto (match terminal)`` /
  `` ❯ 2. Dark mode ✔`` …
- Not logged in (no key, no login): the ready prompt with the footer ``Not logged in · Run /login``.
- Unreachable API (ANTHROPIC_BASE_URL on a closed port) while busy:
  ``✻ Unable to connect to API (ConnectionRefused) · Retrying in 7s · attempt 5/10`` in place of the spinner line.
- An API error the CLI retries (a 529, 5xx, 429 or 401 from the service; references/transcript-jsonl.md "API
  errors"): ``✻ API error · Retrying in 1s · attempt 1/2`` then ``✻ 529 <message> · Retrying in 2s · attempt 2/2``
  (2.1.197; 2.1.332 writes ``retrying``), then, when it gives up, ``● API Error: 529 <message>. This is a server-side
  issue, usually temporary …`` above the ready prompt.
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
  right above the footer with one ``❯`` line, every label at one column (``Dialog.numbered`` False, numbers =
  positions). The four bypass markers and the trust marker are unchanged, so recognition stays on the same exact text.
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

from live_trial.session.dialogs import bypass_dialog, dialog
from live_trial.session.markers import MARKERS, NBSP, _input_index, _input_text, _lines

#: The functions of :class:`live_trial.session.protocols.Screen`, which this module is: ``dialog`` comes from
#: :mod:`live_trial.session.dialogs` (a type checker reads a module with ``__all__`` as exporting only these).
__all__ = ["dialog", "api_retry", "background_work", "is_busy", "mask_volatile"]

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


def background_work(capture: str) -> dict[str, int]:
    """``{"shells": n, "agents": m}``: background work the screen shows running now.

    Shells from the footer under the input box (``· 1 shell ·``); agents from the turn's status line right above
    the input box (``✻ Waiting for 1 background agent to finish``). Lines higher up are history: the
    ``✻ Cooked for 0s · 1 shell still running`` line and an older ``Waiting for …`` line stay on screen after the
    work ended, so they are not read. A right-aligned hint between the status line and the box (the fullscreen
    renderer of 2.1.332 draws ``◐ medium · /effort`` or the tmux focus-events notice there) is skipped. The footer is
    masked from poll's progress hash (``MARKERS["footer"]``): it is read here for the state only."""
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


def api_retry(capture: str) -> str | None:
    """The CLI's API-retry line when it is on screen (``529 overloaded · retrying in 39s · attempt 10/10``, without
    its glyph), else None: the CLI is waiting to send a failed request again (references/transcript-jsonl.md "API
    errors"). Only the line right above the input box counts (an older one is history)."""
    lines = _lines(capture)
    idx = _input_index(lines)
    for line in reversed(lines[:idx] if idx is not None else lines):
        if not line.strip() or MARKERS["rule"].match(line) or MARKERS["right_hint"].match(line) \
                or line.lstrip().startswith("⎿"):
            continue
        m = MARKERS["api_retry"].match(line)
        return line[2:].strip() if m else None
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
    (re.compile(r"\b([Rr])etrying in \d+s\b"), r"\1etrying in #s"),
    (re.compile(r"\battempt \d+/\d+\b"), "attempt #/#"),
    (re.compile(r"\bfor \d+m? ?\d*s\b"), "for #s"),
    (re.compile(r"Running… \(\d+s\)"), "Running… (#)"),
]


def mask_volatile(capture: str) -> str:
    """The capture with what changes on an idle-but-alive screen masked, for poll's "screen changed =
    progress" hash (seed 001 STALL). Returns the masked text (lines right-stripped, same line count).

    Masked: the footer line under the input box (its mode, its hints and its passing notices: ``MARKERS["footer"]``,
    a turn's end is seen in the transcript, not there); the spinner line's glyph, verb and ``(Ns · ↓ N tokens)``;
    ``Running… (Ns)`` and any other ``(<N>s|m|h …)`` timer; ``✻ <Verb> for Ns``; ``Retrying in Ns`` / ``attempt N/M``;
    token counts outside the subagent panel; the blinking ``●`` at column 0 of a running tool; the clock at the end of a
    running tool's row in the fullscreen renderer (2.1.332: ``● Waiting a while · 1m 1s``, its ``⎿  $ cmd (1m 0s)`` is a
    ``(…)`` timer); and the elapsed time of a
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


def screen_ends_with_question(capture: str) -> bool:
    """True when the screen (``capture``, a pane capture) shows the assistant's last words ending with a question:
    the last non-empty line after the last echoed prompt and above the input box (spinner and turn-done lines
    skipped) ends with ``?`` or ``？``, or with ``…ますか`` / ``…でしょうか`` / ``…ください`` (these three also before
    a ``。`` or ``.``). The STALL table row 4 "質問・確認待ち文" (seed 001), read from the TUI; the transcript's
    text has :func:`live_trial.transcript.reply.text_ends_with_question`."""
    region = [ln for ln in _assistant_region(_lines(capture))
              if ln.strip() and not MARKERS["spinner"].match(ln) and not MARKERS["turn_done"].match(ln)]
    if not region:
        return False
    return bool(MARKERS["question_end"].search(region[-1].replace(NBSP, " ").rstrip()))


def screen_reports_done(capture: str) -> bool:
    """True when the screen (``capture``) shows the assistant's ``DONE: <status>`` report after the last echoed prompt
    and above the input box: a line starting ``● DONE:`` or, continuing the assistant's block, ``  DONE:``, with a
    non-empty status (references/task-template.md, its last step; seed 001, STALL row 5). The transcript's text has
    :func:`live_trial.transcript.reply.text_reports_done`."""
    return any(MARKERS["done_report"].match(ln) for ln in _assistant_region(_lines(capture)))


def tail(capture: str, n: int = 15) -> list[str]:
    """The last ``n`` non-empty lines, right-stripped, long rules shortened to ``───``."""
    lines = [re.sub(r"─{10,}", "───", ln.rstrip()) for ln in _lines(capture) if ln.strip()]
    return lines[-n:] if n > 0 else []
