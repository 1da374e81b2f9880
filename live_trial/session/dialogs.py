"""Open dialogs on a pane capture: the options of a dialog drawn with numbers (2.1.197, every gate) or without them
(2.1.332's bypass and trust dialogs), its kind, its question, and the bypass dialog's four exact markers (seed 001
"boot"). Pure, no tmux; :func:`dialog` is also :mod:`live_trial.session.screen`'s, for the Screen protocol."""
from __future__ import annotations

from dataclasses import dataclass, field

from live_trial.session.markers import MARKERS, NBSP, PROMPT_GLYPH, _input_index, _lines, _norm_label


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
        """The option the cursor (❯) is on, or None when the screen shows no cursor."""
        return next((o for o in self.options if o.selected), None)

    def cursor_on(self, label: str) -> bool:
        """True when the cursor (❯) is on the option labelled ``label`` (compared as :meth:`option` does)."""
        sel = self.selected
        return sel is not None and _norm_label(sel.label) == _norm_label(label)

    def option(self, label: str) -> DialogOption | None:
        """The option whose label equals ``label`` (NBSP as space, case and trailing ✔ ignored)."""
        want = _norm_label(label)
        return next((o for o in self.options if _norm_label(o.label) == want), None)


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
    assert cur is not None                  # it matched a moment ago
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
    for kind, marker in (("trust", MARKERS["trust"]), ("api_key", MARKERS["api_key"]),
                         ("onboarding", MARKERS["onboarding"]), ("ask_user_question", MARKERS["ask_user_question"]),
                         ("exit_plan_mode", MARKERS["exit_plan_mode"]), ("permission", MARKERS["permission"])):
        if marker.search(text):
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
