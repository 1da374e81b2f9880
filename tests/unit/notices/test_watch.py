"""Watch ledger (seed 000 rules 2-4 and its "テスト（最低限）" list)."""
from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from live_trial.clock import iso_z
from live_trial.errors import RefusedInput, SchemaInvalid
from live_trial.jsonfile import schema_errors
from live_trial.notices import watch as wt
from live_trial.notices.notify import forbidden_tokens, notify, read_notifications
from live_trial.notices.resend import notification_id


class Clock:
    """The watch ledger's ``now``: an aware UTC datetime that the test moves on by hand (``advance(hours=1)``).
    Unlike :class:`tests.unit.fakes.Clock` (seconds, moved by the code's own ``sleep``), nothing here waits."""

    def __init__(self, start="2026-11-30T09:00:00"):
        self.now = datetime.fromisoformat(start).replace(tzinfo=timezone.utc)

    def __call__(self):
        return self.now

    def advance(self, **kw):
        self.now += timedelta(**kw)


class Starter:
    """Counts check-only evaluator launches; answers with queued results."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.launched: list[str] = []

    def __call__(self, watch, eval_root):
        self.launched.append(watch["id"])
        return self.answers.pop(0) if self.answers else None


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        h.update(dirpath.encode())
        for name in sorted(filenames):
            h.update(name.encode())
            h.update((Path(dirpath) / name).read_bytes())
    return h.hexdigest()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def root(tmp_path):
    return tmp_path / "eval-log"


def _register(root, clock, **kw):
    args = dict(objective="問い合わせに自動で返信する", unverified="人間の問い合わせへの返信はまだ見ていない",
                evidence="bot を起動した", target="hello:greet")
    args.update(kw)
    return wt.record_goal(root, "PASS", args.pop("evidence"), args.pop("unverified"), clock=clock, **args)["watch"]


def _ledger(root):
    return json.loads((root / "watches.json").read_text(encoding="utf-8"))


def _notes(root):
    return read_notifications(root)


# seed 000 テスト 1: 証拠なしの100% → 拒否され、状態ファイルが1バイトも変わらない
@pytest.mark.parametrize("evidence,code", [(None, "evidence_required"), ("", "evidence_required"),
                                           ("deployed, tests passed, CI green", "proxy_evidence"),
                                           ("返信0件", "proxy_evidence")])
def test_pass_without_real_evidence_is_refused_and_nothing_changes(root, clock, evidence, code):
    _register(root, clock)  # a ledger with content already exists
    before = tree_digest(root)
    with pytest.raises(RefusedInput) as exc:
        wt.record_goal(root, "PASS", evidence, None, objective="x", clock=clock)
    assert exc.value.code == code
    assert tree_digest(root) == before


def test_refused_pass_on_an_empty_root_creates_nothing(tmp_path, clock):
    with pytest.raises(RefusedInput):
        wt.record_goal(tmp_path / "eval-log", "PASS", "", None, objective="x", clock=clock)
    assert not (tmp_path / "eval-log").exists()


# seed 000 テスト 2: --unverified 付きの100% → done になり、見張りが1件登録される
def test_pass_with_unverified_registers_exactly_one_watch(root, clock):
    out = wt.record_goal(root, "PASS", "deployed", "replies to humans not seen yet", objective="reply to inquiries",
                         target="bot:reply", workdir="/w/1", clock=clock)
    assert out["kind"] == "mostly_done"
    ledger = _ledger(root)
    assert schema_errors(ledger, "watch-ledger.schema.json") == []
    assert len(ledger["watches"]) == 1
    w = ledger["watches"][0]
    assert {k: w[k] for k in ("objective", "unverified", "evidence", "lastCheckAt", "lastListedAt", "checks", "ng")} == {
        "objective": "reply to inquiries", "unverified": "replies to humans not seen yet", "evidence": "deployed",
        "lastCheckAt": None, "lastListedAt": None, "checks": 0, "ng": 0}
    assert w["since"] == "2026-11-30T09:00:00.000Z" and w["status"] == "open" and w["id"].startswith("w-")
    assert [o["id"] for o in wt.open_watches(root, "bot:reply")] == [w["id"]]
    assert wt.open_watches(root, "other:skill") == []


def test_pass_with_counted_evidence_registers_no_watch(root, clock):
    out = wt.record_goal(root, "PASS", "2 replies sent", None, objective="x", clock=clock)
    assert out == {"kind": "done", "watch": None}
    assert not (root / "watches.json").exists()


# seed 000 テスト 3: ok → 見張りが外れ、通知が1回
def test_ok_closes_the_watch_and_notifies_once(root, clock):
    w = _register(root, clock)
    after = wt.record_result(root, w["id"], "ok", "人間の問い合わせ2件に返信していた", clock=clock, env={})
    assert after["status"] == "confirmed" and after["checks"] == 1
    assert wt.open_watches(root) == []
    notes = _notes(root)
    assert [n["kind"] for n in notes] == ["confirmed"]
    assert notes[0]["text"].startswith("✅ 確かめられました: 問い合わせに自動で返信する")
    with pytest.raises(RefusedInput) as exc:
        wt.record_result(root, w["id"], "ok", "again 1 reply", clock=clock, env={})
    assert exc.value.code == "watch_closed"
    assert len(_notes(root)) == 1


# seed 000 テスト 4: ng を3回 → failed_check と通知1回; 履歴の最後が failed_check
def test_three_ng_record_failed_check_last_and_notify_once(root, clock):
    w = _register(root, clock)
    for i in range(2):
        after = wt.record_result(root, w["id"], "ng", f"返信0件 (check {i + 1})", clock=clock, env={})
        assert after["status"] == "open" and after["ng"] == i + 1
        assert _notes(root) == []
        clock.advance(days=1)
    after = wt.record_result(root, w["id"], "ng", "返信0件。検索の上限25件を他のbotが埋めていた", clock=clock, env={})
    assert after["status"] == "failed" and after["ng"] == 3 and after["checks"] == 3
    assert after["history"][-1]["event"] == "failed_check"
    notes = _notes(root)
    assert [n["kind"] for n in notes] == ["watch_failed"]
    assert notes[0]["text"].startswith("⚠️ うまくいっていません")
    # a later success record must not overwrite failed_check
    with pytest.raises(RefusedInput):
        wt.record_result(root, w["id"], "ok", "1 reply found", clock=clock, env={})
    wt.record_goal(root, "PASS", "3 replies sent", None, objective="問い合わせに自動で返信する", clock=clock)
    _register(root, clock)  # a new watch for the same objective is a new entry
    old = [x for x in _ledger(root)["watches"] if x["id"] == w["id"]][0]
    assert old["history"][-1]["event"] == "failed_check" and old["status"] == "failed"
    assert len(_notes(root)) == 1


def test_a_fourth_ng_is_refused(root, clock):
    w = _register(root, clock)
    for _ in range(3):
        wt.record_result(root, w["id"], "ng", "0 replies", clock=clock, env={})
    before = tree_digest(root)
    with pytest.raises(RefusedInput):
        wt.record_result(root, w["id"], "ng", "0 replies", clock=clock, env={})
    assert tree_digest(root) == before


@pytest.mark.parametrize("result,note", [("maybe", "x"), ("ok", ""), ("ng", "  ")])
def test_bad_results_are_refused_and_change_nothing(root, clock, result, note):
    w = _register(root, clock)
    before = tree_digest(root)
    with pytest.raises(RefusedInput):
        wt.record_result(root, w["id"], result, note, clock=clock, env={})
    assert tree_digest(root) == before


def test_unknown_id_is_refused(root, clock):
    _register(root, clock)
    with pytest.raises(RefusedInput) as exc:
        wt.record_result(root, "w-00000000", "ok", "1 reply", clock=clock, env={})
    assert exc.value.code == "unknown_watch"


# due: lastCheckAt and lastListedAt both >= 24 h old; listing stamps lastListedAt
def test_due_lists_once_a_day_and_stamps_listed_at(root, clock):
    w = _register(root, clock)
    assert [d["id"] for d in wt.due_watches(root, clock=clock)] == [w["id"]]
    assert _ledger(root)["watches"][0]["lastListedAt"] == "2026-11-30T09:00:00.000Z"
    clock.advance(hours=23, minutes=59)
    assert wt.due_watches(root, clock=clock) == []
    clock.advance(minutes=1)
    assert [d["id"] for d in wt.due_watches(root, clock=clock)] == [w["id"]]


def test_a_recent_check_makes_a_watch_not_due(root, clock):
    w = _register(root, clock)
    wt.record_result(root, w["id"], "ng", "0 replies yet", clock=clock, env={})
    clock.advance(hours=12)
    assert wt.due_watches(root, clock=clock) == []


def test_due_without_ledger_creates_nothing(tmp_path, clock):
    assert wt.due_watches(tmp_path / "none", clock=clock) == []
    assert not (tmp_path / "none").exists()


# seed 000 テスト 5: done 状態で確認日の来た見張り → 1回だけ起動; 同じ日の2回目は起動しない
def test_due_watch_starts_one_check_and_not_twice_the_same_day(root, clock):
    w = _register(root, clock)
    starter = Starter({"result": "ng", "note": "返信0件"})
    out = wt.check_due(root, starter, clock=clock, env={})
    assert starter.launched == [w["id"]]
    assert out[0]["result"] == "ng"
    clock.advance(hours=3)
    assert wt.check_due(root, starter, clock=clock, env={}) == []
    assert starter.launched == [w["id"]]
    clock.advance(hours=21)  # 24 h after the check: due again
    wt.check_due(root, starter, clock=clock, env={})
    assert starter.launched == [w["id"], w["id"]]


def test_daily_maintenance_runs_at_most_once_a_day(root, clock):
    w = _register(root, clock)
    starter = Starter({"result": "ok", "note": "返信を2件確認した"})
    first = wt.daily_maintenance(root, starter, clock=clock, env={})
    assert first["ran"] and starter.launched == [w["id"]]
    assert first["checked"][0]["status"] == "confirmed"
    assert _ledger(root)["lastMaintenanceDate"] == "2026-11-30"
    second = wt.daily_maintenance(root, starter, clock=clock, env={})
    assert not second["ran"] and second["reason"] == "already done today"
    assert starter.launched == [w["id"]]
    assert [n["kind"] for n in _notes(root)] == ["confirmed"]


def test_daily_maintenance_same_day_with_a_new_watch_starts_nothing(root, clock):
    _register(root, clock)
    starter = Starter({"result": "ng", "note": "0 replies"})
    wt.daily_maintenance(root, starter, clock=clock, env={})
    _register(root, clock)
    clock.advance(hours=2)
    assert not wt.daily_maintenance(root, starter, clock=clock, env={})["ran"]
    assert len(starter.launched) == 1


def test_daily_maintenance_without_ledger_creates_nothing(tmp_path, clock):
    out = wt.daily_maintenance(tmp_path / "eval-log", Starter(), clock=clock, env={})
    assert out["ran"] is False and not (tmp_path / "eval-log").exists()


def test_a_check_without_a_result_is_recorded_and_not_restarted_today(root, clock):
    w = _register(root, clock)
    starter = Starter(None)
    out = wt.check_due(root, starter, clock=clock, env={})
    assert out[0]["result"] is None
    hist = _ledger(root)["watches"][0]["history"]
    assert hist[-1]["event"] == "check_no_result" and _ledger(root)["watches"][0]["checks"] == 0
    wt.check_due(root, starter, clock=clock, env={})
    assert starter.launched == [w["id"]]


def test_a_crashing_starter_does_not_stop_the_other_checks(root, clock):
    a = _register(root, clock)
    b = _register(root, clock, objective="毎朝まとめる")
    calls = []

    def starter(watch, eval_root):
        calls.append(watch["id"])
        if watch["id"] == a["id"]:
            raise RuntimeError("boom")
        return {"result": "ok", "note": "1 summary written"}

    out = wt.check_due(root, starter, clock=clock, env={})
    assert calls == [a["id"], b["id"]]
    assert {o["id"]: o["result"] for o in out} == {a["id"]: None, b["id"]: "ok"}


# seed 000 テスト 6: 7日たった未確認の見張り → pre で閉じられ、通知が1回; 再度 pre を回しても再通知しない
def test_sweep_closes_after_seven_days_and_notifies_once(root, clock):
    w = _register(root, clock)
    clock.advance(days=6, hours=23)
    assert wt.sweep(root, clock=clock, env={}) == []
    clock.advance(hours=1)
    closed = wt.sweep(root, clock=clock, env={})
    assert [c["id"] for c in closed] == [w["id"]]
    entry = _ledger(root)["watches"][0]
    assert entry["status"] == "expired" and entry["history"][-1]["event"] == "failed_check"
    notes = _notes(root)
    assert [n["kind"] for n in notes] == ["watch_expired"]
    assert notes[0]["text"].startswith("⚠️ 7日間、確かめられませんでした: 問い合わせに自動で返信する")
    assert "まだ確かめられていないこと: 人間の問い合わせへの返信はまだ見ていない" in notes[0]["text"]
    clock.advance(days=1)
    assert wt.sweep(root, clock=clock, env={}) == []
    assert len(_notes(root)) == 1


def test_maintenance_sweeps_before_checking(root, clock):
    w = _register(root, clock)
    clock.advance(days=7)
    starter = Starter({"result": "ok", "note": "1 reply"})
    out = wt.daily_maintenance(root, starter, clock=clock, env={})
    assert out["swept"] == [w["id"]] and starter.launched == []
    clock.advance(days=1)
    assert wt.daily_maintenance(root, starter, clock=clock, env={})["swept"] == []
    assert [n["kind"] for n in _notes(root)] == ["watch_expired"]


def test_confirmed_watch_is_not_swept(root, clock):
    w = _register(root, clock)
    wt.record_result(root, w["id"], "ok", "2 replies", clock=clock, env={})
    clock.advance(days=8)
    assert wt.sweep(root, clock=clock, env={}) == []


# seed 000 テスト 7: すべての通知文に、内部コード・コマンド・ID が含まれない
def test_watch_notifications_carry_no_codes_commands_or_ids(root, clock):
    a = _register(root, clock, objective="hello:greet を run する (lt-20261130T090000-abcd-greet)")
    b = _register(root, clock)
    c = _register(root, clock, unverified="watches.json の lastCheckAt を見る")
    wt.record_result(root, a["id"], "ok", f"id {a['id']} で 2 件 --note を確認", clock=clock, env={})
    for _ in range(3):
        wt.record_result(root, b["id"], "ng", "proxy_evidence のまま 0 件 [P1]", clock=clock, env={})
    clock.advance(days=7)
    wt.sweep(root, clock=clock, env={})
    notes = _notes(root)
    assert [n["kind"] for n in notes] == ["confirmed", "watch_failed", "watch_expired"]
    for n in notes:
        assert forbidden_tokens(n["text"], n["lang"]) == [], n["text"]
        for wid in (a["id"], b["id"], c["id"]):
            assert wid not in n["text"]


def test_ledger_is_schema_valid_after_every_step(root, clock):
    w = _register(root, clock)
    wt.due_watches(root, clock=clock)
    wt.record_result(root, w["id"], "ng", "0 replies", clock=clock, env={})
    assert schema_errors(_ledger(root), "watch-ledger.schema.json") == []
    assert [h["event"] for h in _ledger(root)["watches"][0]["history"]] == ["registered", "listed", "ng"]


def test_a_hand_broken_ledger_is_refused(root, clock):
    _register(root, clock)
    (root / "watches.json").write_text('{"version": 1}', encoding="utf-8")
    with pytest.raises(SchemaInvalid) as exc:
        wt.load_ledger(root)
    assert exc.value.exit_code == 2


def test_english_watch_notifications(root, clock):
    w = _register(root, clock, objective="reply to inquiries")
    wt.record_result(root, w["id"], "ok", "2 replies found", clock=clock, lang="en", env={})
    assert _notes(root)[0]["text"] == "✅ Confirmed: reply to inquiries\nWhat was checked: 2 replies found"


# --- failed notices are sent again by the maintenance (seed 000: a person is always told the outcome) ----

HOOK = {"LIVE_TRIAL_WEBHOOK_URL": "https://hook.invalid/x"}


class Post:
    """A webhook answering with ``code``; keeps every text it was given."""

    def __init__(self, code=204):
        self.code = code
        self.texts: list[str] = []

    def __call__(self, url, body, timeout_s):
        self.texts.append(json.loads(body)["content"])
        return self.code


def _failed_notice(root, clock):
    return notify(root, "not_working", "あいさつする", "何も書かれていない", "ja", env=HOOK, post=Post(500),
                  sleep=lambda s: None, clock=lambda: iso_z(clock()))


def test_daily_maintenance_without_ledger_still_resends_and_creates_no_ledger(root, clock):
    original = _failed_notice(root, clock)
    clock.advance(minutes=59)
    post = Post()
    out = wt.daily_maintenance(root, Starter(), clock=clock, env=HOOK, post=post)
    assert out["resent"] == [] and post.texts == []
    clock.advance(minutes=1)
    out = wt.daily_maintenance(root, Starter(), clock=clock, env=HOOK, post=post)
    assert out["ran"] is False and out["reason"] == "no watches"
    assert out["resent"] == [notification_id(original)] and post.texts == [original["text"]]
    assert not (root / "watches.json").exists() and not (root / wt.LOCK_FILE).exists()
    assert sorted(p.name for p in root.iterdir()) == ["notifications.jsonl"]
    assert len(_notes(root)) == 2


def test_daily_maintenance_resends_on_every_call_not_once_a_day(root, clock):
    _register(root, clock)
    starter = Starter({"result": "ng", "note": "0 replies"})
    assert wt.daily_maintenance(root, starter, clock=clock, env={})["ran"]
    original = _failed_notice(root, clock)
    clock.advance(hours=1)
    post = Post()
    out = wt.daily_maintenance(root, starter, clock=clock, env=HOOK, post=post)
    assert out["ran"] is False and out["reason"] == "already done today"
    assert out["resent"] == [notification_id(original)] and len(post.texts) == 1
    assert wt.daily_maintenance(root, starter, clock=clock, env=HOOK, post=post)["resent"] == []
    assert len(starter.launched) == 1


def test_daily_maintenance_without_webhook_writes_no_notification(root, clock):
    _failed_notice(root, clock)
    before = tree_digest(root)
    clock.advance(days=1)
    out = wt.daily_maintenance(root, Starter(), clock=clock, env={})
    assert out["resent"] == [] and tree_digest(root) == before


def test_a_failing_resend_never_stops_the_maintenance(root, clock, monkeypatch):
    w = _register(root, clock)
    clock.advance(days=7)

    def broken(*a, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(wt, "resend_failed", broken)
    out = wt.daily_maintenance(root, Starter(), clock=clock, env={})
    assert out["ran"] and out["swept"] == [w["id"]] and out["resent"] == []


def test_a_superseded_watch_is_closed_quietly(tmp_path):
    """plan closes a watch whose skill changed since it was opened: no notice, no result can be recorded after."""
    root = tmp_path / "eval-log"
    w = wt.register_watch(root, objective="o", unverified="u", target="p:s", closure="sha256:" + "a" * 64)
    assert wt.load_ledger(root)["watches"][0]["closure"] == "sha256:" + "a" * 64
    assert wt.supersede(root, [w["id"], "w-00000000"]) == [w["id"]]
    assert wt.supersede(root, [w["id"]]) == []                     # once
    got = wt.load_ledger(root)["watches"][0]
    assert (got["status"], got["history"][-1]["event"], got["notified"]) == ("superseded", "superseded", [])
    assert read_notifications(root) == [] and wt.open_watches(root) == []
    with pytest.raises(RefusedInput):
        wt.record_result(root, w["id"], "ok", "2 replies")
    assert wt.supersede(tmp_path / "none", ["w-1"]) == [] and not (tmp_path / "none").exists()
