"""The trial's container from boot to collect (trial/held.py): the session is ended and its container found empty
BEFORE collect reads the workdir, the verdict's notes name the containment, and a process that will not die is the
environment's failure (BLOCKED ``processes_left``), never the skill's (README "Nothing left running"). Fakes only: no tmux, no claude.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

from live_trial.session import containment, proctree
from live_trial.stop_reasons import StopReason
from live_trial.trial import held
from live_trial.trial.facts import Facts
from live_trial.trial.journal import Journal
from tests.unit.fakes import trial_state


class _Backend:
    def __init__(self, order):
        self.order = order

    def has_session(self, name):
        return True

    def capture(self, name, scrollback=False):
        self.order.append("capture")
        return "the pane"

    def kill_session(self, name):
        self.order.append("kill_session")
        return True

    def reap(self):
        return []


def _trial(tmp_path, order, box):
    journal = Journal()
    journal.state = trial_state(containment=box.to_json())
    journal.facts = Facts()
    return SimpleNamespace(wd=SimpleNamespace(root=tmp_path), state=journal.state, journal=journal,
                           facts=journal.facts, backend=_Backend(order), env={},
                           note_alternate_screen=lambda session: None, transcript_path=lambda: None)


def _fake_steps(monkeypatch, order, left):
    def collect(root, **kw):
        order.append("collect")
        return SimpleNamespace(complete=True, missing=[], out_files=[], side_effects=[])

    def end(box, **kw):
        order.append(f"end {box.kind}")
        return list(left)

    monkeypatch.setattr(held, "collect", collect)
    monkeypatch.setattr(held, "folder_changes", lambda trial: {})
    monkeypatch.setattr(held, "side_effects_recorded", lambda trial: None)
    monkeypatch.setattr(held, "collect_moved", lambda trial: [])
    monkeypatch.setattr(held.containment, "end", end)
    monkeypatch.setattr(held.containment, "end_named", lambda name: [])
    monkeypatch.setattr(held.proctree, "end", lambda procs, find_more=None, grace_s=None: [])


def test_the_session_and_its_container_are_ended_before_collect_reads_the_workdir(tmp_path, monkeypatch):
    order: list[str] = []
    box = containment.Container(containment.CGROUP_V2, "lt-20261130T101500-abcd-greet", "/cg/live-trial/x")
    trial = _trial(tmp_path, order, box)
    _fake_steps(monkeypatch, order, [])
    held.finish_session(trial)
    assert order == ["capture", "kill_session", "end cgroup-v2", "collect"]
    assert trial.facts.notes == [box.note()] and trial.facts.stop_reason is None and not trial.facts.blocked
    assert trial.state.collected is True


def test_a_process_that_will_not_die_blocks_the_trial_naming_it(tmp_path, monkeypatch):
    order: list[str] = []
    box = containment.Container(containment.SUBREAPER, "lt-20261130T101500-abcd-greet")
    trial = _trial(tmp_path, order, box)
    me = proctree.proc(os.getpid())
    _fake_steps(monkeypatch, order, [me])
    held.finish_session(trial)
    assert (trial.facts.blocked, trial.facts.stop_reason) == (True, StopReason.PROCESSES_LEFT)
    assert StopReason.PROCESSES_LEFT.whose == "environment"
    cause = [n for n in trial.facts.notes if n.startswith(StopReason.PROCESSES_LEFT.why)]
    assert len(cause) == 1 and f"{os.getpid()} (" in cause[0]
    assert trial.facts.notes[0].startswith("containment: subreaper: ")


def test_a_state_without_a_container_record_is_ended_by_its_tag(tmp_path, monkeypatch):
    order: list[str] = []
    trial = _trial(tmp_path, order, containment.Container(containment.TAG_ONLY, "x"))
    trial.state.containment = None                  # a trial started before containment, resumed now
    _fake_steps(monkeypatch, order, [])
    held.end_processes(trial, trial.state.session)
    assert order == ["kill_session", "end tag-only"]
    assert trial.facts.notes[0].startswith("containment: tag-only: ")


class _PaneBackend(_Backend):
    def pane(self, name):
        return SimpleNamespace(pane_pid=os.getpid(), dead=False)      # the pane's tree: this test and its children


def test_tag_only_says_what_it_cannot_see_and_names_the_tagged_daemons_it_ended(tmp_path, monkeypatch):
    """README "Nothing left running": tag-only containment cannot see a process that cleared its environment; the
    note says so plainly and lists the tagged processes outside the pane's tree that it ended."""
    import subprocess

    order: list[str] = []
    box = containment.Container(containment.TAG_ONLY, "lt-20261130T101500-abcd-greet")
    trial = _trial(tmp_path, order, box)
    trial.backend = _PaneBackend(order)
    _fake_steps(monkeypatch, order, [])
    daemon = subprocess.Popen(["setsid", "sleep", "3074"], env={**os.environ, proctree.TAG_ENV: box.name})
    cmdline = Path(f"/proc/{daemon.pid}/cmdline")
    for _ in range(200):        # setsid execs sleep in the same pid: wait until it has, so its command line is sleep's
        if cmdline.read_bytes().startswith(b"sleep\0"):
            break
        time.sleep(0.01)
    try:
        for _ in range(200):        # until setsid has become sleep: a command read mid-exec is empty
            if Path(f"/proc/{daemon.pid}/cmdline").read_bytes().startswith(b"sleep\0"):
                break
            time.sleep(0.01)
        outside_tree = proctree.proc(daemon.pid)
        monkeypatch.setattr(held.proctree, "descendants", lambda pid: [])      # the daemon left the pane's tree
        ended: list = []
        monkeypatch.setattr(held.proctree, "end", lambda procs, **kw: ended.extend(procs) or [])
        held.finish_session(trial)
    finally:
        daemon.kill()
        daemon.wait()
    [note] = [n for n in trial.facts.notes if n.startswith(containment.NOTE_PREFIX)]
    assert "cleared its environment" in note and "cannot be seen by tag-only containment" in note, note
    assert f"{daemon.pid} (sleep 3074)" in note, note
    assert outside_tree in ended and not trial.facts.blocked


def test_tag_only_with_no_tagged_daemon_still_says_what_it_cannot_see(tmp_path, monkeypatch):
    order: list[str] = []
    box = containment.Container(containment.TAG_ONLY, "lt-20261130T101500-abcd-none")
    trial = _trial(tmp_path, order, box)
    trial.backend = _PaneBackend(order)
    _fake_steps(monkeypatch, order, [])
    held.finish_session(trial)
    [note] = trial.facts.notes
    assert "cannot be seen by tag-only containment" in note and note.endswith("ended at the end: none"), note


def test_a_process_that_left_the_cgroup_blocks_the_trial_and_no_note_says_the_cgroup_held_it(tmp_path, monkeypatch):
    """README "Nothing left running": a process of a cgroup-v2 session found outside its cgroup before the end is
    ended and named (BLOCKED processes_left); the note says the cgroup did not hold it."""
    order: list[str] = []
    box = containment.Container(containment.CGROUP_V2, "lt-20261130T101500-abcd-greet", "/cg/live-trial/x")
    trial = _trial(tmp_path, order, box)
    _fake_steps(monkeypatch, order, [])
    me = proctree.proc(os.getpid())
    monkeypatch.setattr(held.containment, "escaped", lambda c: [me] if c == box else [])
    held.finish_session(trial)
    assert trial.facts.blocked and trial.facts.stop_reason == StopReason.PROCESSES_LEFT
    assert not any("were held by" in n for n in trial.facts.notes), trial.facts.notes
    assert any(n.startswith("containment: cgroup-v2: ") and "did not hold" in n and str(me.pid) in n
               for n in trial.facts.notes), trial.facts.notes
