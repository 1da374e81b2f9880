"""What the assistant's own text of a turn says at its end: a question to the person, or the task's ``DONE`` report.

These read the text the transcript holds (:attr:`live_trial.transcript.status.Status.last_assistant_text`, the newest
real-model text of the turn), not the screen: the screen's checks are
:func:`live_trial.session.screen.screen_ends_with_question` and :func:`~live_trial.session.screen.screen_reports_done`,
which read what the TUI draws above its input box. The STALL table (seed 001, "STALL 分岐表") takes either: row 4
nudges a turn that ended with a question, row 5 calls a done report without the completion marker a contract
violation. Pure; no I/O.
"""
from __future__ import annotations

import re

_QUESTION_RE = re.compile(
    r"[?？]|\b(shall i|should i|do you want|would you like|may i|can i|could you|let me know|please confirm|"
    r"please (?:tell|choose|pick|select|provide|specify|clarify|advise)|tell me (?:which|what|how|whether)|"
    r"confirm (?:that|whether|if)|which (?:one|option)|waiting for your|before i (?:continue|proceed))|"
    r"(ますか|でしょうか|ください|教えて|確認させて)", re.IGNORECASE)
_DONE_RE = re.compile(r"^\s*(?:●\s*)?DONE:\s*\S", re.MULTILINE)


def text_ends_with_question(text: str | None) -> bool:
    """True when the last three non-empty lines of the assistant's text ask a question, a confirmation or a choice
    (seed 001, STALL row 4 "質問・確認待ち文"): a question mark (``?``, ``？``) anywhere in them, or a request such as
    "shall I", "please tell me", "let me know", "which one", "…ますか", "…教えてください" (case ignored). False for
    None or blank text."""
    if not text:
        return False
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return False
    return any(_QUESTION_RE.search(ln) for ln in lines[-3:])


def text_reports_done(text: str | None) -> bool:
    """True when the assistant's text holds the task's one-line ``DONE: <status>`` report (references/task-template.md,
    its last step; seed 001, STALL row 5): ``DONE:`` at the start of a line (after blanks, or a ``●``) followed by a
    non-empty status. False for None."""
    return bool(text and _DONE_RE.search(text))
