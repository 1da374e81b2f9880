"""``watch`` and ``evaluate`` command lines: verbs, exit codes, nothing changed on refusal."""
from __future__ import annotations

import json

import pytest

from live_trial.cli import evaluate_cmd
from live_trial.cli.main import build_parser, main
from live_trial.notices import notify as nt
from live_trial.notices import watch as wt
from live_trial.notices import webhook
from tests.unit.notices.test_watch import tree_digest


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.delenv("LIVE_TRIAL_WEBHOOK_URL", raising=False)
    monkeypatch.delenv("LIVE_TRIAL_LANG", raising=False)
    r = tmp_path / "eval-log"
    wt.register_watch(r, objective="問い合わせに返信する", unverified="返信はまだ見ていない", evidence="起動した")
    return r


def _id(root):
    return wt.load_ledger(root)["watches"][0]["id"]


def test_record_ng_then_ok(root, capsys):
    wid = _id(root)
    assert main(["watch", "--eval-root", str(root), "--id", wid, "--result", "ng", "--note", "返信0件"]) == 0
    assert capsys.readouterr().out.startswith(f"RECORDED: {wid} ng -> open (checks 1, ng 1)")
    assert main(["watch", "--eval-root", str(root), "--id", wid, "--result", "ok", "--note", "返信2件",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "RECORDED" and out["watch"]["status"] == "confirmed"
    assert [n["kind"] for n in nt.read_notifications(root)] == ["confirmed"]


@pytest.mark.parametrize("argv", [
    ["--id", "w-00000000", "--result", "ok", "--note", "1 reply"],
    ["--result", "ok", "--note", "1 reply"],
    ["--id", "ID", "--result", "ok"],
    ["--id", "ID", "--result", "ok", "--note", "  "],
])
def test_refused_records_exit_2_and_change_nothing(root, capsys, argv):
    argv = [a.replace("ID", _id(root)) for a in argv]
    before = tree_digest(root)
    assert main(["watch", "--eval-root", str(root), *argv]) == 2
    assert capsys.readouterr().err.startswith("REFUSED: ")
    assert tree_digest(root) == before


def test_record_without_any_ledger_creates_nothing(tmp_path, capsys):
    assert main(["watch", "--eval-root", str(tmp_path / "none"), "--id", "w-12345678", "--result", "ok",
                 "--note", "1 reply"]) == 2
    assert not (tmp_path / "none").exists()


def test_bad_result_is_a_usage_error(root):
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--eval-root", str(root), "--id", "w-1", "--result", "maybe", "--note", "x"])
    assert exc.value.code == 64


def test_due_lists_then_lists_nothing_the_same_day(root, capsys):
    assert main(["watch", "due", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("DUE: 1 watch(es) due")
    assert main(["watch", "due", "--eval-root", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["due"] == []


def test_check_starts_one_evaluator_per_due_watch_and_none_the_second_time(root, capsys, monkeypatch):
    launched = []

    def fake_starter(args):
        def start(watch, eval_root):
            launched.append(watch["id"])
            return {"result": "ng", "note": "返信0件"}
        return start

    monkeypatch.setattr(evaluate_cmd, "watch_starter", fake_starter)
    assert main(["watch", "check", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("CHECKED: 1 check(s) started")
    assert main(["watch", "check", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("CHECKED: 0 check(s) started")
    assert launched == [_id(root)]


def test_daily_runs_once(root, capsys, monkeypatch):
    launched = []
    monkeypatch.setattr(evaluate_cmd, "watch_starter",
                        lambda args: lambda w, r: launched.append(w["id"]) or {"result": "ok", "note": "2 replies"})
    assert main(["watch", "daily", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("DAILY: 0 swept, 1 checked")
    assert main(["watch", "daily", "--eval-root", str(root)]) == 0
    assert "nothing to do (already done today)" in capsys.readouterr().out
    assert len(launched) == 1


def test_check_and_daily_without_a_ledger_need_no_claude(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LIVE_TRIAL_CLAUDE_BIN", str(tmp_path / "no-claude"))
    assert main(["watch", "check", "--eval-root", str(tmp_path / "none")]) == 0
    assert main(["watch", "daily", "--eval-root", str(tmp_path / "none")]) == 0
    assert main(["watch", "sweep", "--eval-root", str(tmp_path / "none")]) == 0
    assert not (tmp_path / "none").exists()


def test_sweep_and_list(root, capsys):
    assert main(["watch", "sweep", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("SWEPT: 0 watch(es)")
    assert main(["watch", "list", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("WATCHES: 1 open, 1 in all")


def test_evaluate_refuses_a_missing_workdir(tmp_path, capsys):
    assert main(["evaluate", "--workdir", str(tmp_path / "nope")]) == 2
    assert not (tmp_path / "nope").exists()


def test_evaluate_needs_a_target(tmp_path, capsys):
    (tmp_path / "trial-state.json").write_text("{}")       # a trial folder whose state names no target
    assert main(["evaluate", "--workdir", str(tmp_path)]) == 2
    assert "--target" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["trial-state.json"]


def test_notify_subcommand_list_matches_the_parser():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    missing = set(sub.choices) - set(nt.SUBCOMMANDS)
    assert not missing, f"add these subcommands to notify.SUBCOMMANDS: {sorted(missing)}"


def test_daily_says_how_many_failed_notices_were_sent_again(tmp_path, capsys, monkeypatch):
    root = tmp_path / "eval-log"
    monkeypatch.setenv("LIVE_TRIAL_WEBHOOK_URL", "https://hook.invalid/x")
    posted = []
    monkeypatch.setattr(webhook, "http_post", lambda url, body, timeout_s: posted.append(body) or 500)
    nt.notify(root, "done", "あいさつする", "あいさつを1件書いた", "ja", sleep=lambda s: None,
              clock=lambda: "2026-01-01T00:00:00.000Z")
    monkeypatch.setattr(webhook, "http_post", lambda url, body, timeout_s: posted.append(body) or 204)
    assert main(["watch", "daily", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("DAILY: 1 failed notice(s) sent again; no watch work (no watches)")
    assert len(posted) == 3 and not (root / "watches.json").exists()
    assert main(["watch", "daily", "--eval-root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("DAILY: nothing to do (no watches)")
    assert len(posted) == 3
