"""send without tmux: delivery confirmed by the transcript (seed 001 "send") and gate answers."""
from __future__ import annotations

from pathlib import Path

import pytest

from live_trial.errors import DeliveryFailed, RefusedInput
from live_trial.session import send
from tests.unit.fakes import Clock, FakeCLI, screen_with_input

SCREENS = Path(__file__).parents[1] / "screens"
S = "lt-20261130T101500-abcd-send"


def go(cli, path, **kw):
    clock = Clock()
    return send.send_file(cli, S, path, transcript_path=cli.transcript, clock=clock, sleep=clock.sleep, **kw)


@pytest.fixture
def files(tmp_path):
    t = tmp_path / "projects" / "x" / "s.jsonl"
    t.parent.mkdir(parents=True)
    task = tmp_path / "task.md"
    task.write_text("AAA\nBBB\nCCC\n")
    return t, task


def test_delivered_first_time(files):
    t, task = files
    cli = FakeCLI(t)
    d = go(cli, task)
    assert d.delivered and d.extra_enters == 0 and cli.keys == ["Enter"]


def test_trailing_blank_lines_submit_once(files, tmp_path):
    t, _ = files
    task = tmp_path / "blank.md"
    task.write_text("do it\nnow\n\n\n")
    cli = FakeCLI(t)
    d = go(cli, task)
    assert d.delivered and cli.keys == ["Enter"] and len(cli.pasted) == 1
    assert len(t.read_text().splitlines()) == 1


def test_parked_gets_one_more_enter_counted(files):
    t, task = files
    cli = FakeCLI(t, swallow=1)
    d = go(cli, task)
    assert d.extra_enters == 1 and cli.keys == ["Enter", "Enter"]


def test_still_parked_fails_named_with_evidence(files):
    t, task = files
    cli = FakeCLI(t, swallow=5)
    with pytest.raises(DeliveryFailed) as exc:
        go(cli, task)
    assert exc.value.code == "parked" and exc.value.details["extra_enters"] == 1
    assert "AAA" in exc.value.details["expected_head"] and exc.value.details["tail"]
    assert cli.keys == ["Enter", "Enter"]


def test_mangled_newlines(files):
    t, task = files
    cli = FakeCLI(t, transform=lambda s: s.replace("\n", ""))
    with pytest.raises(DeliveryFailed) as exc:
        go(cli, task)
    assert exc.value.code == "mangled" and exc.value.details["arrived_head"] == "AAABBBCCC"


def test_cross_talk(files):
    t, task = files
    cli = FakeCLI(t, transform=lambda s: "another trial's task")
    with pytest.raises(DeliveryFailed) as exc:
        go(cli, task)
    assert exc.value.code == "cross_talk" and "another trial" in exc.value.details["arrived_head"]


def _wrapped(text: str, opening: str = "4d20", closing: str = "4d20") -> str:
    """A multi-line paste as 2.1.332 stores it (references/transcript-jsonl.md "Records on 2.1.332")."""
    return f'\n\n<pasted_content id="{opening}">\n{text}\n</pasted_content id="{closing}">\n'


def test_a_paste_the_cli_wrapped_is_delivered_with_a_note(files):
    t, task = files
    d = go(FakeCLI(t, transform=_wrapped), task)
    assert d.delivered and d.extra_enters == 0
    assert any("<pasted_content>" in n for n in d.notes), d.notes


@pytest.mark.parametrize("transform", [
    lambda s: _wrapped("another trial's task"),                   # someone else's text, wrapped
    lambda s: _wrapped(s, closing="4d21"),                        # the ids differ: not the CLI's wrapper
    lambda s: "typed words" + _wrapped(s),                        # words around the paste
])
def test_a_wrapped_prompt_that_is_not_the_task_is_cross_talk(files, transform):
    t, task = files
    with pytest.raises(DeliveryFailed) as exc:
        go(FakeCLI(t, transform=transform), task)
    assert exc.value.code == "cross_talk"


def test_lost_when_nothing_parked(files):
    t, task = files
    cli = FakeCLI(t, swallow=5)
    cli.capture = lambda session, scrollback=False: screen_with_input("")
    with pytest.raises(DeliveryFailed) as exc:
        go(cli, task)
    assert exc.value.code == "lost"


def test_a_session_that_moved_is_confirmed_in_the_file_it_writes_now(files):
    """/clear between the send's start and Enter: the prompt lands in the new transcript, which ``follow`` names."""
    t, task = files
    t.write_text("")
    moved = t.with_name("new.jsonl")
    cli = FakeCLI(moved)
    clock = Clock()
    d = send.send_file(cli, S, task, transcript_path=t, follow=lambda: moved, clock=clock, sleep=clock.sleep)
    assert d.delivered and any("moved to another transcript" in n for n in d.notes)


def test_a_move_whose_new_file_never_gets_the_prompt_is_transcript_moved_not_lost(files):
    t, task = files
    cli = FakeCLI(t.with_name("elsewhere.jsonl"))
    clock = Clock()
    with pytest.raises(DeliveryFailed) as err:
        send.send_file(cli, S, task, transcript_path=t, follow=lambda: t.with_name("new.jsonl"), clock=clock,
                       sleep=clock.sleep, timeout_s=1)
    assert err.value.code == "transcript_moved"


def test_earlier_prompts_do_not_count(files):
    t, task = files
    cli = FakeCLI(t, swallow=5)
    cli.write("AAA\nBBB\nCCC")           # the same text from an earlier turn
    with pytest.raises(DeliveryFailed):
        go(cli, task)


def test_refusals(tmp_path, files):
    t, _ = files
    cli = FakeCLI(t)
    with pytest.raises(RefusedInput):
        go(cli, tmp_path / "missing.md")
    empty = tmp_path / "empty.md"
    empty.write_text("  \n\n")
    with pytest.raises(RefusedInput) as exc:
        go(cli, empty)
    assert exc.value.code == "empty_file" and cli.pasted == []


def test_classify_arrival_normalises():
    assert send.classify_arrival("a\r\nb  \n\n", "a\nb") == "ok"
    assert send.classify_arrival("a\nb", "ab") == "mangled"
    assert send.classify_arrival("a\nb", "c") == "cross_talk"


# ---------------------------------------------------------------- gates

class GateCLI:
    """An AskUserQuestion dialog whose cursor moves with Down/Up; digits do nothing (as in the real TUI). Its methods
    have the real tmux backend's parameters (tests/unit/package/test_fakes.py checks them)."""

    def __init__(self, stuck=False, lose_typing=0):
        self.base = (SCREENS / "ask_user_question.txt").read_text()
        self.cursor = 1
        self.keys: list[str] = []
        self.typed: list[str] = []
        self.shown_text = ""
        self.stuck = stuck
        self.lose_typing = lose_typing       # how many typings the CLI drops (seen under load)
        self.answered = False

    def capture(self, name, scrollback=False):
        if self.answered:                    # Enter answered it: the dialog is gone
            return self.base.split("☐")[0]
        out = []
        for line in self.base.split("\n"):
            stripped = line.lstrip("❯ ")
            if stripped[:2] in {f"{n}." for n in range(1, 6)}:
                n = int(stripped[0])
                if self.shown_text and stripped.endswith("Type something."):
                    stripped = stripped.replace("Type something.", self.shown_text)
                line = ("❯ " if n == self.cursor else "  ") + stripped
            out.append(line)
        return "\n".join(out)

    def send_keys(self, name, *keys):
        for k in keys:
            self.keys.append(k)
            if not self.stuck:
                self.cursor += {"Down": 1, "Up": -1}.get(k, 0)
                self.answered = self.answered or k == "Enter"

    def type_text(self, name, text):
        self.typed.append(text)
        if self.lose_typing:
            self.lose_typing -= 1
        else:
            self.shown_text = text


class Late(GateCLI):
    """The dialog on a busy machine: each cursor move is drawn 2 s (on ``clock``) after its key."""

    def __init__(self, clock):
        super().__init__()
        self.clock, self.moves = clock, []

    def send_keys(self, name, *keys):
        for k in keys:
            self.keys.append(k)
            if k == "Enter":
                self.answered = True
            else:
                self.moves.append((self.clock() + 2.0, {"Down": 1, "Up": -1}.get(k, 0)))

    def capture(self, name, scrollback=False):
        self.cursor = 1 + sum(step for at, step in self.moves if at <= self.clock())
        return super().capture(name)


ASK_332 = (SCREENS / "ask_user_question_332.txt").read_text(encoding="utf-8")


class Dropping:
    """2.1.332's AskUserQuestion dialog that drops the first ``drops`` Enters pressed in it; the next one answers."""

    def __init__(self, drops=1):
        self.keys, self.screen, self.drops = [], ASK_332, drops

    def capture(self, name, scrollback=False):
        return self.screen

    def send_keys(self, name, *keys):
        self.keys += keys
        if self.keys.count("Enter") > self.drops:
            self.screen = ASK_332.split("❯ ASK")[0] + "❯ ASK\n● DONE: ok\n"


def gate(cli, response):
    clock = Clock()
    return send.answer_gate(cli, S, response, clock=clock, sleep=clock.sleep)


def test_gate_label_moves_with_arrows_then_enter():
    cli = GateCLI()
    done = gate(cli, "Blue")
    assert cli.keys == ["Down", "Down", "Enter"] and done.label == "Blue" and done.kind == "ask_user_question"


def test_an_arrow_drawn_late_is_not_pressed_again_so_the_answer_is_the_chosen_one():
    """A busy machine draws each move 2 s after the key: pressing Down again meanwhile would carry the cursor past
    "Blue" (and the options wrap), and Enter would answer an option nobody chose."""
    clock = Clock()
    cli = Late(clock)
    done = send.answer_gate(cli, S, "Blue", clock=clock, sleep=clock.sleep)
    assert cli.keys == ["Down", "Down", "Enter"] and done.label == "Blue" and cli.cursor == 3


def test_gate_number_is_mapped_to_its_label():
    cli = GateCLI()
    assert gate(cli, "2").label == "Green" and cli.keys == ["Down", "Enter"]


def test_gate_free_text():
    cli = GateCLI()
    done = gate(cli, "text:medium please")
    assert done.label == "Type something." and cli.keys == ["Down", "Down", "Down", "Enter"]
    assert cli.typed == ["medium please"]


def test_gate_free_text_lost_once_is_typed_again_before_enter():
    """Seen on 2.1.197 under load: the typed answer was lost and Enter submitted "__other__". Enter waits until the
    dialog shows the text; nothing of it arrived, so it is typed once more."""
    cli = GateCLI(lose_typing=1)
    gate(cli, "text:medium please")
    assert cli.typed == ["medium please", "medium please"] and cli.keys[-1] == "Enter"


def test_gate_free_text_never_shown_submits_nothing():
    cli = GateCLI(lose_typing=5)
    with pytest.raises(DeliveryFailed) as exc:
        gate(cli, "text:medium please")
    assert exc.value.code == "gate_text" and "Enter" not in cli.keys


def test_gate_refusals_press_nothing():
    cli = GateCLI()
    with pytest.raises(RefusedInput) as exc:
        gate(cli, "Purple")
    assert exc.value.code == "no_option" and "'Red'" in exc.value.message and cli.keys == []
    ready = FakeCLI(Path("/nonexistent"))
    with pytest.raises(RefusedInput) as exc:
        send.answer_gate(ready, S, "Blue")
    assert exc.value.code == "no_dialog"


def test_gate_cursor_stuck_fails():
    cli = GateCLI(stuck=True)
    with pytest.raises(DeliveryFailed) as exc:
        gate(cli, "Blue")
    assert exc.value.code == "gate_cursor" and "Enter" not in cli.keys


def test_an_enter_the_gate_dialog_dropped_is_pressed_again():
    """2.1.332 drops the Enter pressed in an AskUserQuestion dialog's first ~0.3 s (capture of 2.1.332)."""
    clock = Clock()
    fb = Dropping()
    got = send.answer_gate(fb, "lt-x", "Red", clock=clock, sleep=clock.sleep)
    assert got.keys == ["Enter", "Enter"] and fb.keys == ["Enter", "Enter"] and got.kind == "ask_user_question"

    clock, fb = Clock(), Dropping(drops=99)      # a dialog that never takes it: bounded presses
    assert send.answer_gate(fb, "lt-x", "Red", clock=clock, sleep=clock.sleep).keys == ["Enter"] * 3
