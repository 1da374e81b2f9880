r"""Deliver a task file to a READY session, confirmed by the transcript; answer a gate (seed 001 "send").

Delivery: the file goes file → named buffer → bracketed paste (``Backend.paste_file``), then one
Enter. It counts as delivered only when the newest human prompt of the transcript after the send
equals the file text under ``transcript.records.normalise_text`` (newlines normalised, trailing whitespace
stripped; the one comparison used everywhere). The prompt's text is ``records.prompt_text``: a multi-line paste
that the CLI (2.1.332) stored wrapped as ``<pasted_content id="…">…</pasted_content id="…">`` is compared without
that wrapper, and the delivery notes say so. Otherwise a named :class:`DeliveryFailed`:

- ``parked``: no new prompt, and the text (or a ``[Pasted text #N …]`` chip) still sits in the input box
  after one more Enter (counted in ``extra_enters``);
- ``mangled``: a new prompt arrived but differs only by lost newlines ("AAA\nBBB" → "AAABBB");
- ``cross_talk``: a new prompt arrived with other text (another trial's task);
- ``lost``: no new prompt, nothing parked, nothing on screen to press Enter for;
- ``transcript_moved``: the session moved to another transcript file while the text was sent (``follow`` names the
  file the session writes now: it changes on ``/clear``) and the prompt is not found in that file either.

A file ending in blank lines is pasted once and submitted with one Enter: bracketed paste keeps
its newlines inside the paste, so it never submits twice or submits an empty prompt.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NoReturn

from live_trial.errors import DeliveryFailed, RefusedInput
from live_trial.session import screen
from live_trial.session.backend import Backend
from live_trial.session.dialogs import Dialog, DialogOption
from live_trial.session.keys import ONE_PRESS, press_until
from live_trial.session.markers import MARKERS
from live_trial.stop_reasons import StopReason

SHOW_WAIT_S = 5.0        # wait for the paste to show in the input box before Enter
RECORD_WAIT_S = 20.0     # wait for the user record after Enter (it normally arrives within 0.35 s)
POLL_S = 0.15
#: The first looks for the paste on screen and for its record come sooner (they usually arrive within a few tens of
#: milliseconds), then every POLL_S: waits double from here up to POLL_S.
FIRST_POLL_S = 0.02
#: A look for the record reads only the transcript's new bytes (no tmux call): at most this long between two.
RECORD_POLL_S = 0.05
GATE_WAIT_S = 10.0
EVIDENCE_CHARS = 300
FREE_TEXT_PREFIX = "text:"
CLI_TAB = "    "         # the CLI stores a pasted tab as four spaces


@dataclass
class Delivery:
    """A confirmed delivery: ``extra_enters`` (0 or 1), the prompt record's uuid, seconds from paste to record."""

    delivered: bool
    extra_enters: int
    record_uuid: str | None
    elapsed_s: float
    buffer: str
    notes: list[str] = field(default_factory=list)


class _NewPrompts:
    """The human prompts written to a transcript after byte ``start`` (default: the end of its last whole line now),
    read incrementally: each look reads only the
    bytes written since the last one, so confirming a delivery costs the same on a 500 MB transcript as on an empty
    one (ARCHITECTURE invariant 9)."""

    def __init__(self, transcript_path: Path, start: int | None = None) -> None:
        from live_trial.transcript.reader import complete_end_offset

        self.path = Path(transcript_path)
        self.offset = complete_end_offset(self.path) if start is None else start
        self.found: list[dict[str, Any]] = []

    def look(self) -> list[dict[str, Any]]:
        """The new human prompts so far, in time order."""
        from live_trial.transcript.reader import read_from
        from live_trial.transcript.records import human_prompts, is_human_prompt

        if self.path.is_file():
            records, self.offset = read_from(self.path, self.offset)
            self.found += [r for r in records if is_human_prompt(r)]
        return human_prompts(self.found)


def _norm(text: str) -> str:
    from live_trial.transcript.records import normalise_text

    return normalise_text(text)


def _prompt_text(record: dict[str, Any]) -> str:
    from live_trial.transcript.records import prompt_text

    return prompt_text(record)


def _wrapped(record: dict[str, Any]) -> bool:
    from live_trial.transcript.records import is_wrapped_paste

    return is_wrapped_paste(record)


def classify_arrival(expected: str, got: str) -> str:
    """``ok`` / ``ok_tabs`` / ``mangled`` / ``cross_talk`` for an arrived prompt against the expected text.

    ``ok_tabs``: equal once each tab of the file is read as four spaces — the 2.1.197 CLI turns every
    pasted tab into four spaces (seen on the real CLI, references/transcript-jsonl.md), so that is a delivery, with a
    note.
    """
    want, have = _norm(expected), _norm(got)
    if want == have:
        return "ok"
    if "\t" in want and _norm(expected.replace("\t", CLI_TAB)) == have:
        return "ok_tabs"
    if "".join(want.split()) == "".join(have.split()):
        return "mangled"
    return "cross_talk"


def send_file(backend: Backend, session: str, path: str | os.PathLike[str], *, transcript_path: str | os.PathLike[str],
              expect_text: str | None = None, clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep, timeout_s: float = RECORD_WAIT_S,
              follow: Callable[[], os.PathLike[str]] | None = None) -> Delivery:
    """Paste ``path`` into ``session``, press Enter, and confirm the transcript got exactly its text.

    ``transcript_path``: the trial's main transcript (may not exist yet: the CLI creates it at the first
    prompt). ``expect_text``: what must arrive (default: the file's text). ``follow()``: the transcript the session
    writes now, asked again while waiting (a session moved by ``/clear`` writes a new file; delivery is confirmed
    there). Returns :class:`Delivery`. Raises RefusedInput (missing / empty / non-UTF-8 file, session gone) or
    DeliveryFailed (code parked, mangled, cross_talk, lost, transcript_moved; ``details`` hold the evidence: expected
    and arrived heads, screen tail).
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise RefusedInput("task file does not exist", where=str(path), fix="write it first", code="missing_file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RefusedInput("task file is not UTF-8 text", where=str(path), fix="save it as UTF-8",
                           code="bad_file") from None
    expected = expect_text if expect_text is not None else text
    if not _norm(expected):
        raise RefusedInput("task file is empty", where=str(path), fix="write the task text", code="empty_file")
    watch = _Watch(Path(transcript_path), follow)
    started = clock()
    buf = backend.paste_file(session, path)
    _wait_shown(backend, session, clock=clock, sleep=sleep)
    backend.send_keys(session, "Enter")
    extra = 0
    record = _wait_record(watch, timeout_s, clock=clock, sleep=sleep)
    if record is None:
        capture = backend.capture(session)
        parked = screen.parked_input(capture)
        if parked is None:
            _fail(StopReason.TRANSCRIPT_MOVED if watch.moved else "lost", session, path, expected, None, capture, extra)
        backend.send_keys(session, "Enter")
        extra = 1
        record = _wait_record(watch, timeout_s, clock=clock, sleep=sleep)
        if record is None:
            _fail("parked", session, path, expected, None, backend.capture(session), extra)
    verdict = classify_arrival(expected, _prompt_text(record))
    if verdict not in ("ok", "ok_tabs"):
        _fail(verdict, session, path, expected, _prompt_text(record), backend.capture(session), extra)
    notes = ["tabs arrived as four spaces (the CLI's paste handling)"] if verdict == "ok_tabs" else []
    if _wrapped(record):
        notes.append("the CLI stored the paste wrapped in <pasted_content>; the text inside it was compared")
    if watch.moved:
        notes.append("the session moved to another transcript while the text was sent; "
                     f"it arrived in {watch.path.name}")
    return Delivery(delivered=True, extra_enters=extra, record_uuid=record.get("uuid"),
                    elapsed_s=clock() - started, buffer=buf, notes=notes)


def _wait_shown(backend: Backend, session: str, *, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
    """Wait (at most 5 s) until the input box shows the pasted text, so Enter is not taken before the paste."""
    deadline = clock() + SHOW_WAIT_S
    wait = FIRST_POLL_S
    while clock() < deadline:
        if screen.parked_input(backend.capture(session)) is not None:
            return
        sleep(wait)
        wait = min(POLL_S, wait * 2)


class _Watch:
    """The transcript a delivery is confirmed in and the human prompts written to it since the paste; switches to
    the file ``follow()`` names when the session moves (that file's prompts all count as new)."""

    def __init__(self, path: Path, follow: Callable[[], os.PathLike[str]] | None) -> None:
        self.prompts, self.follow, self.moved = _NewPrompts(path), follow, False

    @property
    def path(self) -> Path:
        return self.prompts.path

    def look(self) -> list[dict[str, Any]]:
        """The new human prompts so far, in time order, in the file the session writes now."""
        if self.follow is not None:
            now = Path(self.follow())
            if now != self.prompts.path:
                self.prompts, self.moved = _NewPrompts(now, start=0), True
        return self.prompts.look()


def _wait_record(watch: _Watch, timeout_s: float, *, clock: Callable[[], float],
                 sleep: Callable[[float], None]) -> dict[str, Any] | None:
    """The first new human prompt once one exists (after a short settle), or None at timeout."""
    deadline = clock() + timeout_s
    wait = FIRST_POLL_S
    while True:
        if watch.look():
            sleep(POLL_S)  # let a second (empty) submission show up if there is one
            # More than one new prompt: judge the first; a second (e.g. empty) submission is a bug to surface.
            return watch.look()[0]
        if clock() > deadline:
            return None
        sleep(wait)
        wait = min(RECORD_POLL_S, wait * 2)


def _fail(code: str, session: str, path: Path, expected: str, got: str | None, capture: str,
          extra: int) -> NoReturn:
    what = {"parked": "the text stayed in the input box after Enter (and one more Enter)",
            "mangled": "the text arrived without its newlines",
            "cross_talk": "a different text arrived (another trial's task?)",
            "lost": "no prompt arrived and nothing is waiting in the input box",
            "transcript_moved": "the session moved to another transcript and the text was not found there"}[code]
    fix = {"parked": "look at the screen tail; a dialog or a slow CLI can swallow Enter; send again",
           "mangled": "check that the harness tmux server runs without a user tmux.conf (-f /dev/null)",
           "cross_talk": "check that no other process pastes into this session; each trial needs its own session",
           "lost": "the CLI may have exited or shown a dialog; read the screen tail",
           "transcript_moved": "read the screen tail; the CLI's sessions/<pid>.json names the transcript it writes "
                               "now"}[code]
    raise DeliveryFailed(f"delivery failed ({code}): {what}", where=f"{session} {path.name}", fix=fix, code=code,
                         details={"expected_head": _norm(expected)[:EVIDENCE_CHARS],
                                  "arrived_head": None if got is None else _norm(got)[:EVIDENCE_CHARS],
                                  "extra_enters": extra, "tail": screen.tail(capture)})


# ---------------------------------------------------------------- gates

#: The code of the refusal of an answer that is none of the open dialog's options (its ``details["options"]``: the
#: labels the dialog shows).
NO_OPTION = "no_option"


@dataclass
class GateAnswer:
    """What :func:`answer_gate` did: the dialog kind, the option chosen, the keys pressed."""

    kind: str
    label: str
    keys: list[str]


def answer_gate(backend: Backend, session: str, response: str, *, clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> GateAnswer:
    """Answer the open dialog (seed 001 GATE step).

    ``response`` is an option label (or its number; digits do not move the cursor in the TUI, so the
    number is only used to find the label), or ``text:<rest>`` to pick the free-text option ("Type
    something.") and type ``<rest>``. The cursor is moved with Down/Up, each pressed once and confirmed by
    re-capture (the options wrap), then Enter; an Enter the dialog did not take (the screen unchanged a moment later)
    is pressed again, at most three times (:mod:`live_trial.session.keys`: 2.1.332 dialogs drop the Enter pressed in
    their first ~0.3 s). Raises RefusedInput when no dialog is open or the option does not exist (code
    :data:`NO_OPTION`, the labels shown in its ``details``; nothing pressed),
    DeliveryFailed (code gate_cursor) when the cursor does not reach the option.
    """
    capture = backend.capture(session)
    box = screen.dialog(capture)
    if box is None or not box.options:
        raise RefusedInput("no dialog is open to answer", where=session, fix="poll again; answer only on GATE",
                           code="no_dialog")
    free_text = response.startswith(FREE_TEXT_PREFIX)
    wanted = MARKERS["free_text_option"] if free_text else response.strip()
    option = box.option(wanted)
    if option is None and wanted.isdigit():
        option = next((o for o in box.options if o.number == int(wanted)), None)
    if option is None:
        labels = ", ".join(repr(o.label) for o in box.options)
        raise RefusedInput(f"the dialog has no option {wanted!r}", where=session, fix=f"options: {labels}",
                           code=NO_OPTION, details={"options": [o.label for o in box.options]})
    rest = response[len(FREE_TEXT_PREFIX):] if free_text else ""
    if free_text and not rest.strip():
        raise RefusedInput("text: needs the words to type", where=session, fix="e.g. text:use the blue one")
    keys = _move_to(backend, session, option, box, clock=clock, sleep=sleep)
    if free_text:
        _type_answer(backend, session, rest, option.number, clock=clock, sleep=sleep)
        keys.append("<text>")
    keys += _confirm(backend, session, clock=clock, sleep=sleep)
    return GateAnswer(kind=box.kind, label=option.label, keys=keys)


def _shape(capture: str) -> tuple[str, str, int | None, str | None] | None:
    """What identifies an open dialog and its cursor: (kind, question, selected number, selected label), or None."""
    box = screen.dialog(capture)
    if box is None:
        return None
    sel = box.selected
    return box.kind, box.question, sel.number if sel else None, " ".join(sel.label.split()) if sel else None


def _confirm(backend: Backend, session: str, *, clock: Callable[[], float],
             sleep: Callable[[float], None]) -> list[str]:
    """Press Enter on the dialog, and again (bounded) while it still shows the same question with the cursor where it
    was: a 2.1.332 dialog drops the Enter pressed in its first ~0.3 s (:mod:`live_trial.session.keys`). Returns the
    keys pressed."""
    before = _shape(backend.capture(session))
    keys: list[str] = []

    def press() -> None:
        backend.send_keys(session, "Enter")
        keys.append("Enter")

    press_until(press, lambda: backend.capture(session), lambda now: _shape(now) != before,
                lambda now: _shape(now) == before, clock=clock, sleep=sleep, poll_s=POLL_S, wait_s=POLL_S * 2)
    return keys


def _type_answer(backend: Backend, session: str, text: str, number: int, *, clock: Callable[[], float],
                 sleep: Callable[[float], None]) -> None:
    """Type the free-text answer into option ``number`` and wait until the dialog shows it there, so Enter never
    submits an empty answer. Seen on 2.1.197 under load: text typed the moment the cursor reached "Type something."
    was lost and Enter answered ``__other__``. The text is typed once more when nothing of it arrived; raises
    DeliveryFailed (code gate_text, nothing submitted) when it still is not shown after GATE_WAIT_S."""
    want = " ".join(text.split())
    deadline = clock() + GATE_WAIT_S
    typed_again = False
    backend.type_text(session, text)
    while True:
        sleep(POLL_S)
        box = screen.dialog(backend.capture(session))
        shown = " ".join(box.selected.label.split()) if box and box.selected and box.selected.number == number else ""
        if shown == want or (len(want) > 60 and len(shown) >= 40 and want.startswith(shown)):
            return
        if not typed_again and shown == MARKERS["free_text_option"] and clock() > deadline - GATE_WAIT_S / 2:
            backend.type_text(session, text)
            typed_again = True
        if clock() > deadline:
            raise DeliveryFailed("the free-text answer did not show in the dialog", where=session,
                                 fix="answer the dialog by hand (tmux attach) or poll again", code="gate_text",
                                 details={"shown": shown, "expected": want[:EVIDENCE_CHARS]})


def _move_to(backend: Backend, session: str, option: DialogOption, box: Dialog, *,
             clock: Callable[[], float], sleep: Callable[[float], None]) -> list[str]:
    keys: list[str] = []
    current = box.selected.number if box.selected else 1
    deadline = clock() + GATE_WAIT_S

    def on(number: int) -> Callable[[str], bool]:
        def check(capture: str) -> bool:
            now = screen.dialog(capture)
            return bool(now and now.selected and now.selected.number == number)
        return check

    while current != option.number:
        key = "Down" if option.number > current else "Up"
        target = current + (1 if key == "Down" else -1)

        def press(key: str = key) -> None:
            backend.send_keys(session, key)
            keys.append(key)

        # pressed once and waited on: the options wrap, so a second press after a move drawn late would carry the
        # cursor past the option chosen (live_trial.session.keys)
        press_until(press, lambda: backend.capture(session), on(target), on(current), clock=clock, sleep=sleep,
                    poll_s=POLL_S, wait_s=max(0.0, deadline - clock()), presses=ONE_PRESS)
        if not on(target)(backend.capture(session)):
            raise DeliveryFailed(f"the dialog cursor did not reach {option.label!r}", where=session,
                                 fix="answer the dialog by hand (tmux attach) or poll again", code="gate_cursor",
                                 details={"keys": keys})
        current = target
    return keys
