"""send and answer_gate on the real CLI against the rehearsal server (seed 001 "send")."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from live_trial.errors import DeliveryFailed
from live_trial.session import screen, send
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records, read_tail
from live_trial.transcript.records import human_prompts, normalise_text, prompt_text
from live_trial.transcript.status import IDLE_TURN_COMPLETE, classify

from .session_support import PLAIN_SCENARIO, TrackingBackend, boot_rehearsal
from .waiting import screen_of, wait_for

ROOT = Path(__file__).resolve().parents[2]
GATE_SCENARIO = {"name": "gate", "side_query_text": "Title", "rules": [
    {"id": "ask", "when": {"step": 0, "last_prompt": "ASK"}, "reply": {"content": [{"tool_use": {
        "name": "AskUserQuestion", "input": {"questions": [{"question": "Which colour?", "header": "Colour",
                                                            "multiSelect": False, "options": [
                                                                {"label": "Red", "description": "warm"},
                                                                {"label": "Green", "description": "calm"},
                                                                {"label": "Blue", "description": "cool"}]}]}}}]}},
    {"id": "after", "when": {"step": 1}, "reply": {"content": [{"text": "DONE: answered"}]}},
    {"id": "plain", "reply": {"content": [{"text": "ok noted"}]}}]}


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


def _prompts(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [prompt_text(r) for r in human_prompts(read_records(path).records)]


def _text(tag: str, n: int = 200, tab: str = "") -> str:
    return "".join(f"{tag} line {i}: (parens) [brackets] $HOME `tick` 'q' \"dq\" ; & | \\ {tab}end\n" for i in range(n))


@pytest.mark.budget(10)
def test_four_concurrent_pastes_arrive_intact_and_unmixed(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    booted = [boot_rehearsal(backend, tmp_path, f"par{i}", srv.url) for i in range(4)]
    files, results, errors = [], {}, []
    for i in range(4):
        f = tmp_path / f"task{i}.md"
        f.write_text(_text(f"TRIAL{i}"))
        files.append(f)

    def one(i):
        result, cwd, cfg = booted[i]
        try:
            results[i] = send.send_file(backend, result.session, files[i],
                                        transcript_path=locate(result.session_id, cwd, cfg))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append((i, exc))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors
    for i, (result, cwd, cfg) in enumerate(booted):
        prompts = _prompts(locate(result.session_id, cwd, cfg))
        assert normalise_text(prompts[0]) == normalise_text(files[i].read_text())
        assert f"TRIAL{(i + 1) % 4}" not in prompts[0]
        assert results[i].extra_enters == 0
    assert backend._run("list-buffers").stdout == []      # every named buffer was deleted


@pytest.mark.budget(6)
def test_trailing_blank_lines_submit_once(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "blank", srv.url)
    f = tmp_path / "task.md"
    f.write_text("first line\nsecond line\n\n")
    tpath = locate(result.session_id, cwd, cfg)
    send.send_file(backend, result.session, f, transcript_path=tpath)
    # the turn is over and nothing waits in the queue: a second (empty) submission would be a second prompt by now
    wait_for(lambda: classify(read_tail(tpath).records).state == IDLE_TURN_COMPLETE
             and screen.is_ready(backend.capture(result.session)), what="the turn's end with nothing queued",
             seen=screen_of(backend, result.session))
    assert "ok noted" in backend.capture(result.session)
    prompts = _prompts(tpath)
    assert len(prompts) == 1 and normalise_text(prompts[0]) == "first line\nsecond line"
    assert len(srv.main_requests()) == 1


class SwallowEnter:
    """Wraps the real backend and drops the first ``n`` Enter presses (a CLI that swallowed Enter)."""

    def __init__(self, backend, n):
        self.b, self.n = backend, n

    def __getattr__(self, name):
        return getattr(self.b, name)

    def send_keys(self, session, *keys):
        if keys == ("Enter",) and self.n > 0:
            self.n -= 1
            return
        self.b.send_keys(session, *keys)


@pytest.mark.budget(12)
def test_parked_text_gets_one_more_enter(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "parked", srv.url)
    f = tmp_path / "task.md"
    f.write_text(_text("PARK", 20))
    tpath = locate(result.session_id, cwd, cfg)
    d = send.send_file(SwallowEnter(backend, 1), result.session, f, transcript_path=tpath, timeout_s=5)
    assert d.extra_enters == 1
    assert normalise_text(_prompts(tpath)[0]) == normalise_text(f.read_text())


@pytest.mark.budget(20)
def test_still_parked_is_a_named_failure_with_the_chip_as_evidence(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "parked2", srv.url)
    f = tmp_path / "task.md"
    f.write_text(_text("PARK", 20))
    with pytest.raises(DeliveryFailed) as exc:
        send.send_file(SwallowEnter(backend, 9), result.session, f,
                       transcript_path=locate(result.session_id, cwd, cfg), timeout_s=4)
    assert exc.value.code == "parked" and exc.value.details["extra_enters"] == 1
    assert any("[Pasted text #" in line for line in exc.value.details["tail"])
    assert screen.parked_input(backend.capture(result.session)).startswith("[Pasted text #")


@pytest.mark.budget(6)
def test_mangled_and_cross_talk_are_named(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "mangle", srv.url)
    tpath = locate(result.session_id, cwd, cfg)
    flat = tmp_path / "flat.md"
    flat.write_text("AAABBBCCC\n")
    with pytest.raises(DeliveryFailed) as exc:
        send.send_file(backend, result.session, flat, transcript_path=tpath, expect_text="AAA\nBBB\nCCC\n")
    assert exc.value.code == "mangled" and exc.value.details["arrived_head"] == "AAABBBCCC"
    assert wait_for(lambda: screen.is_ready(backend.capture(result.session)), what="screen.is_ready(backend.capture(result.session))")
    other = tmp_path / "other.md"
    other.write_text("the task of another trial\n")
    with pytest.raises(DeliveryFailed) as exc:
        send.send_file(backend, result.session, other, transcript_path=tpath, expect_text="my own task\n")
    assert exc.value.code == "cross_talk" and "another trial" in exc.value.details["arrived_head"]


@pytest.mark.budget(6)
def test_answer_gate_by_label_and_free_text(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(GATE_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "gate", srv.url)
    tpath = locate(result.session_id, cwd, cfg)

    def answers() -> list[str]:
        return [rec["toolUseResult"]["answers"]["Which colour?"] for rec in read_records(tpath).records
                if isinstance(rec.get("toolUseResult"), dict) and "answers" in rec["toolUseResult"]]

    for n, response in enumerate(["Blue", "text:teal please"]):
        f = tmp_path / f"ask{n}.md"
        f.write_text(f"ASK round {n}\n")
        send.send_file(backend, result.session, f, transcript_path=tpath)
        box = wait_for(lambda: screen.dialog(backend.capture(result.session)), what="the question dialog",
                       seen=screen_of(backend, result.session))
        assert box and box.kind == "ask_user_question" and box.selected.label == "Red"
        send.answer_gate(backend, result.session, response)
        wait_for(lambda: len(answers()) == n + 1, what=f"answer {n + 1} in the transcript", seen=lambda: str(answers()))
        wait_for(lambda: classify(read_tail(tpath).records).state == IDLE_TURN_COMPLETE, what="the turn's end")
    assert "DONE: answered" in backend.capture(result.session)
    assert answers() == ["Blue", "teal please"]


@pytest.mark.budget(8)
def test_a_multi_line_paste_is_confirmed_as_the_text_inside_the_cli_wrapper(backend, tmp_path, rehearsal_server):
    """2.1.332 stores (and sends) a multi-line paste wrapped in ``<pasted_content id="…">``, a one-line paste bare;
    2.1.197 stores both bare. Either way the delivery is confirmed on the pasted text, the model's ``last_prompt``
    is that text, and another multi-line text is still cross-talk."""
    srv = rehearsal_server({"name": "paste", "rules": [
        {"id": "the-paste", "when": {"last_prompt": "^PASTE line 0:"}, "reply": {"content": [{"text": "got it"}]}},
        {"id": "plain", "reply": {"content": [{"text": "ok noted"}]}}]})
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "paste", srv.url)
    tpath = locate(result.session_id, cwd, cfg)
    f = tmp_path / "task.md"
    f.write_text(_text("PASTE", 12))
    d = send.send_file(backend, result.session, f, transcript_path=tpath)
    raw = human_prompts(read_records(tpath).records)[-1]["message"]["content"]
    wrapped = raw.startswith('\n\n<pasted_content id="')
    assert wrapped == any("<pasted_content>" in n for n in d.notes), (raw[:80], d.notes)
    assert normalise_text(_prompts(tpath)[-1]) == normalise_text(f.read_text())
    assert srv.wait_for(lambda r: r["rule"] == "the-paste", 30), srv.requests
    wait_for(lambda: screen.is_ready(backend.capture(result.session)), what="the prompt after the paste's turn")
    one = tmp_path / "one.md"
    one.write_text("one short line\n")
    d = send.send_file(backend, result.session, one, transcript_path=tpath)
    raw = human_prompts(read_records(tpath).records)[-1]["message"]["content"]
    assert not d.notes and normalise_text(raw) == "one short line", raw
    wait_for(lambda: screen.is_ready(backend.capture(result.session)), what="the prompt after the one-line turn")
    other = tmp_path / "other.md"
    other.write_text(_text("OTHER", 12))
    with pytest.raises(DeliveryFailed) as exc:
        send.send_file(backend, result.session, other, transcript_path=tpath, expect_text=f.read_text())
    assert exc.value.code == "cross_talk" and exc.value.details["arrived_head"].startswith("OTHER line 0:")


@pytest.mark.budget(6)
def test_tabs_arrive_as_four_spaces_and_still_count(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "tabs", srv.url)
    f = tmp_path / "task.md"
    f.write_text(_text("TAB", 5, tab="\t"))
    tpath = locate(result.session_id, cwd, cfg)
    d = send.send_file(backend, result.session, f, transcript_path=tpath)
    assert d.notes and "four spaces" in d.notes[0]
    assert "\t" not in _prompts(tpath)[0] and "\\ " + " " * 4 + "end" in _prompts(tpath)[0]


@pytest.mark.budget(6)
def test_cli_send_uses_boot_record(backend, tmp_path, rehearsal_server):
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "clisend", srv.url)
    f = tmp_path / "task.md"
    f.write_text("hello from the CLI\n")
    proc = subprocess.run([sys.executable, "-m", "live_trial", "send", result.session, str(f)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"DELIVERED: {result.session} task.md")
    assert _prompts(locate(result.session_id, cwd, cfg)) == ["hello from the CLI"]
