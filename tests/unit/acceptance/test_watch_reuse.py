"""A mostly-done PASS is reused only while its watch is open and within its deadline (seed 000 rules
2-4): after a failed (3 × ng) or expired watch the skill runs again and its plan row says why."""
from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from live_trial.acceptance.plan import plan
from live_trial.acceptance.verdict import write_trial_verdict
from live_trial.acceptance.watch_reuse import WATCH_DEADLINE, watch_standing
from live_trial.clock import iso_z
from live_trial.closure.target import resolve_target
from live_trial.notices import watch
from live_trial.transcript.builder import TranscriptBuilder

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"
NOW = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
MOSTLY = {"goal_ledger": "mostly_done", "watch_id": "w-1"}


def a_watch(status: str = "open", since: datetime = NOW - timedelta(days=1), **kw) -> dict:
    return {"id": "w-1", "status": status, "since": iso_z(since), "unverified": "the mail arrives", "ng": 0, **kw}


def test_a_pass_that_is_done_needs_no_watch() -> None:
    assert watch_standing({"goal_ledger": "done"}, [], NOW) == (True, "")


def test_an_open_watch_within_its_deadline_keeps_the_pass_reusable() -> None:
    ok, why = watch_standing(MOSTLY, [a_watch()], NOW)
    assert ok and "open until 2026-12-08" in why


def test_a_confirmed_watch_keeps_the_pass_reusable() -> None:
    assert watch_standing(MOSTLY, [a_watch("confirmed")], NOW)[0]


@pytest.mark.parametrize("watches, words", [
    ([a_watch("failed", ng=3)], "failed (3 × ng)"),
    ([a_watch("expired")], "expired unchecked"),
    ([a_watch(since=NOW - WATCH_DEADLINE - timedelta(minutes=1))], "expired unchecked"),   # not swept yet
    ([a_watch("superseded")], "superseded"),
    ([], "not in the ledger"),
])
def test_a_failed_expired_or_unknown_watch_runs_the_skill_again(watches: list, words: str) -> None:
    ok, why = watch_standing(MOSTLY, watches, NOW)
    assert not ok and words in why


def test_a_mostly_done_pass_without_a_watch_runs_again() -> None:
    ok, why = watch_standing({"goal_ledger": "mostly_done", "watch_id": None}, [], NOW)
    assert not ok and "registered no watch" in why


@pytest.fixture()
def mostly_done(tmp_path: Path) -> dict:
    """A live mostly-done PASS of union-target:work whose watch is in the eval root's ledger."""
    plugins = tmp_path / "plugins"
    shutil.copytree(FIXTURE, plugins)
    eval_root = tmp_path / "eval-log"
    wd = eval_root / "union-target" / "work" / "live-trial" / "20261201T090000-aaaa"
    wd.mkdir(parents=True)
    b = TranscriptBuilder(model="claude-opus-4-8")
    b.turn("run", "DONE: ok")
    b.write(wd / "transcript.jsonl")
    w = watch.register_watch(eval_root, objective="o", unverified="the mail arrives", target="union-target:work",
                             workdir=str(wd), clock=lambda: NOW - timedelta(days=1))
    write_trial_verdict(workdir=wd, target=resolve_target("union-target:work", plugins), plugins_root=plugins,
                        session_id="s", requested_model=None, launch="PASS", completion="PASS", goal_result="PASS",
                        poll_exit="DONE", claude_version="2.1.197", tmux_version="3.3a", watch_id=w["id"],
                        unverified="the mail arrives", goal_ledger="mostly_done",
                        evidence=({"claim": "c", "source": "transcript.jsonl", "observed": "1 file"},))
    return {"plugins": plugins, "eval": eval_root, "watch": w}


def row(env: dict, *, now: datetime = NOW) -> dict:
    ledger = watch.load_ledger(env["eval"])["watches"]
    doc = plan([env["plugins"] / "union-target"], env["eval"], watches=[], ledger=ledger, now=now)
    return next(s for s in doc["skills"] if s["target"] == "union-target:work")


def test_plan_reuses_the_pass_while_its_watch_is_open(mostly_done: dict) -> None:
    r = row(mostly_done)
    assert r["action"] == "reuse" and f"its watch {mostly_done['watch']['id']} is open until" in r["reason"]


def test_plan_runs_the_skill_again_after_its_watch_failed(mostly_done: dict) -> None:
    for _ in range(watch.NG_LIMIT):
        watch.record_result(mostly_done["eval"], mostly_done["watch"]["id"], "ng", "0 mails arrived",
                            clock=lambda: NOW)
    r = row(mostly_done)
    assert r["action"] == "run" and "failed (3 × ng)" in r["reason"] and "the mail arrives" in r["reason"]


def test_plan_runs_the_skill_again_after_its_watch_expired(mostly_done: dict) -> None:
    later = NOW + WATCH_DEADLINE
    r = row(mostly_done, now=later)          # past the deadline, before any sweep closed it
    assert r["action"] == "run" and "expired unchecked" in r["reason"]
    watch.sweep(mostly_done["eval"], clock=lambda: later, post=lambda *a, **k: None)
    assert "expired unchecked" in row(mostly_done, now=later)["reason"]


def test_an_open_watch_past_its_deadline_is_no_longer_watching(mostly_done: dict) -> None:
    open_now = watch.open_watches(mostly_done["eval"])
    doc = plan([mostly_done["plugins"] / "union-target"], mostly_done["eval"], watches=open_now,
               ledger=open_now, now=NOW)
    assert next(s for s in doc["skills"] if s["target"] == "union-target:work")["action"] == "watching"
    doc = plan([mostly_done["plugins"] / "union-target"], mostly_done["eval"], watches=open_now,
               ledger=open_now, now=NOW + WATCH_DEADLINE)
    r = next(s for s in doc["skills"] if s["target"] == "union-target:work")
    assert r["action"] == "run" and "expired unchecked" in r["reason"]
