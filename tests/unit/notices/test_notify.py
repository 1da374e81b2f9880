"""Notifications: catalogues, forbidden tokens, sinks (seed 000 "通知文の書き方")."""
from __future__ import annotations

import hashlib
import json
import re
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from live_trial.clock import iso_z
from live_trial.errors import ExitCode, LiveTrialError, RefusedInput
from live_trial.jsonfile import schema_errors
from live_trial.notices import notify as nt
from live_trial.notices import resend as nr
from live_trial.notices.catalogue import exit_code_sentence, reason_sentence
from live_trial.notices.webhook import WEBHOOK_RETRY_WAIT_S
from tests.unit.fakes import Clock

COMMANDS_EXIT = {"run": [0, 1, 2, 3, 6], "boot": [0, 1, 2, 3], "poll": [0, 1, 2, 3, 4, 5], "verdict": [0, 2],
                 "evaluate": [0, 2, 3], "watch": [0, 2], "any": [64, 130]}
SAMPLES = ["毎朝のニュースを3件まとめて送る", "send a greeting to the user", "返信を2件送った", ""]


def _import_all():
    import importlib
    import pkgutil

    import live_trial
    for mod in pkgutil.walk_packages(live_trial.__path__, "live_trial."):
        if mod.name.endswith("__main__"):
            continue
        importlib.import_module(mod.name)


_CODE_LITERAL = re.compile(r"""\b(?:code|stop_reason)\s*=\s*["']([a-z][a-z_]+)["']|\bstatus\s*=\s*["']([A-Z][A-Z_]+)["']""")
_WIRE_VALUES = {"tool_use", "end_turn", "stop_sequence", "max_tokens"}  # Anthropic API stop reasons, not ours


def _codes_in_source() -> set[str]:
    root = Path(nt.__file__).resolve().parent
    found = set()
    for path in root.rglob("*.py"):
        for m in _CODE_LITERAL.finditer(path.read_text(encoding="utf-8")):
            found.add(m.group(1) or m.group(2))
    return found - _WIRE_VALUES


def _all_error_classes():
    _import_all()
    out, stack = [], [LiveTrialError]
    while stack:
        cls = stack.pop()
        out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


@pytest.mark.parametrize("lang", nt.LANGS)
def test_every_template_passes_the_forbidden_token_check(lang):
    cat = nt.catalogue(lang)
    assert set(cat["templates"]) == set(nt.KINDS)
    for kind, tmpl in cat["templates"].items():
        for text in (tmpl["text"].format(objective="", detail="", next=""), tmpl["generic"]):
            assert nt.forbidden_tokens(text, lang) == [], (lang, kind, text)
        for obj in SAMPLES:
            for det in SAMPLES:
                r = nt.render(kind, obj, det, lang)
                assert not r["sanitised"] and nt.forbidden_tokens(r["text"], lang) == []


@pytest.mark.parametrize("lang", nt.LANGS)
def test_every_reason_and_exit_code_sentence_passes_the_check(lang):
    cat = nt.catalogue(lang)
    for code, sentence in list(cat["reasons"].items()) + list(cat["families"].items()):
        assert sentence.strip() and nt.forbidden_tokens(sentence, lang) == [], (code, sentence)
    for command, codes in COMMANDS_EXIT.items():
        for code in codes:
            sentence = exit_code_sentence(command, code, lang)
            assert sentence != cat["reasons"]["unknown"], (command, code)
            assert nt.forbidden_tokens(sentence, lang) == [], (command, code, sentence)


@pytest.mark.parametrize("lang", nt.LANGS)
def test_every_exit_code_and_error_of_the_harness_has_a_sentence(lang):
    cat = nt.catalogue(lang)
    for member in ExitCode:
        assert any(str(int(member)) in table for table in cat["exit_codes"].values()), member
    unknown = cat["reasons"]["unknown"]
    for cls in _all_error_classes():
        assert reason_sentence(cls.status, lang) != unknown, (cls, cls.status)
        assert reason_sentence(cls.code, lang) != unknown, (cls, cls.code)
    for code in sorted(_codes_in_source()):
        assert reason_sentence(code, lang) != unknown, f"add a sentence for {code!r} to notifications.{lang}.json"
    for word in ("DONE", "STALL", "GATE", "HARD_CAP", "TICK_BUDGET", "BOOT_FAIL", "READY", "PASS", "FAIL",
                 "DEGRADED", "BLOCKED", "TIMEOUT", "evidence_required", "proxy_evidence", "session_gone",
                 "parked", "mangled", "cross_talk", "lost"):       # delivery failures (send._fail codes)
        assert word in cat["reasons"]


def test_both_catalogues_have_the_same_keys():
    ja, en = nt.catalogue("ja"), nt.catalogue("en")
    assert set(ja["reasons"]) == set(en["reasons"]) and set(ja["families"]) == set(en["families"])
    assert {k: set(v) for k, v in ja["exit_codes"].items()} == {k: set(v) for k, v in en["exit_codes"].items()}


def _key_paths(doc, prefix=()) -> set[tuple]:
    out = set()
    for key, value in doc.items():
        out.add(prefix + (key,))
        if isinstance(value, dict):
            out |= _key_paths(value, prefix + (key,))
    return out


def test_the_languages_are_the_catalogues_present_and_each_has_every_key():
    from live_trial.resources import load_schema, reference_names

    files = reference_names("notifications.*.json")
    assert sorted(f"notifications.{lang}.json" for lang in nt.LANGS) == files
    assert nt.LANGS[0] == nt.DEFAULT_LANG
    pattern = load_schema("notification.schema.json")["properties"]["lang"]["pattern"]
    assert all(re.fullmatch(pattern, lang) for lang in nt.LANGS), "a catalogue's language the records cannot name"
    default = _key_paths(nt.catalogue(nt.DEFAULT_LANG)) - {("lang",)}
    for lang in nt.LANGS:
        cat = nt.catalogue(lang)
        assert cat["lang"] == lang
        assert _key_paths(cat) - {("lang",)} == default, lang


@pytest.mark.parametrize("lang", nt.LANGS)
@pytest.mark.parametrize("token", [
    "evidence_required", "proxy_evidence", "HARD_CAP", "TICK_BUDGET", "BOOT_FAIL", "STALL", "GATE", "DONE", "READY",
    "BLOCKED", "DEGRADED", "daily_iter_cap", "runner_error", "noop", "failed_check", "lastCheckAt",
    "0b0c7a4e-1111-2222-3333-444455556666", "20261130T101010-abcd", "lt-20261130T101010-abcd-greet",
    "eval-log/hello/greet", "C:\\logs\\x", "status.json", "transcript.jsonl", "[P1]", "【P2】", "--evidence", "-h",
    "`anything`", "live-trial", "python -m", "hello:greet", "w-1a2b3c4d", "sha256:abcdef", "watch --id",
    "some_new_code", "NEW_STATUS",
])
def test_forbidden_tokens_are_found(token, lang):
    text = ("終わりました " if lang == "ja" else "It ended ") + token + (" です" if lang == "ja" else " here")
    assert nt.forbidden_tokens(text, lang), token


def test_subcommand_names_are_forbidden_in_japanese_prose_and_as_commands_in_english():
    assert nt.forbidden_tokens("結果は verdict に書きました", "ja") == ["verdict"]
    assert nt.forbidden_tokens("send a greeting to the user", "ja") == []
    assert nt.forbidden_tokens("run --proof", "en")
    assert nt.forbidden_tokens("It will be checked every day and we watch it", "en") == []


def test_a_text_with_forbidden_tokens_is_sanitised_and_recorded(tmp_path):
    rec = nt.notify(tmp_path, "done", "greet the user (hello:greet)",
                    "out/status.json has 2 keys; session lt-20261130T101010-abcd-greet; PASS [P1]", "en", env={})
    assert rec["check"]["sanitised"] is True and rec["check"]["fallback"] is False
    assert set(rec["check"]["removed"]) >= {"hello:greet", "out/status.json", "PASS", "[P1]"}
    assert nt.forbidden_tokens(rec["text"], "en") == []
    assert "(internal reference)" in rec["text"] and "2 keys" in rec["text"]


def test_a_bad_template_falls_back_to_the_generic_sentence(monkeypatch, tmp_path):
    cat = json.loads(json.dumps(nt.catalogue("en")))
    cat["templates"]["done"]["text"] = "DONE: {objective} ({detail})"
    monkeypatch.setattr(nt, "catalogue", lambda lang: cat)
    rec = nt.notify(tmp_path, "done", "greet", "2 keys", "en", env={})
    assert rec["check"]["fallback"] is True and rec["text"] == cat["templates"]["done"]["generic"]
    assert "DONE" in rec["check"]["removed"]


def test_language_choice(monkeypatch):
    assert nt.resolve_lang(None, {}) == "ja"
    assert nt.resolve_lang(None, {"LIVE_TRIAL_LANG": "en"}) == "en"
    assert nt.resolve_lang("ja", {"LIVE_TRIAL_LANG": "en"}) == "ja"
    with pytest.raises(RefusedInput):
        nt.resolve_lang("fr", {})


def test_unknown_kind_is_refused_and_nothing_written(tmp_path):
    with pytest.raises(RefusedInput):
        nt.notify(tmp_path, "celebrate", "x", "y", "ja", env={})
    assert list(tmp_path.iterdir()) == []


def test_file_sink_always_written_and_schema_valid(tmp_path):
    rec = nt.notify(tmp_path, "mostly_done", "毎朝のまとめ", "相手に届いたかはまだ", "ja", env={},
                    refs={"watch_id": "w-1a2b3c4d"})
    lines = (tmp_path / "notifications.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == rec
    assert schema_errors(rec, "notification.schema.json") == []
    assert rec["webhook"]["status"] == "not_configured"
    assert rec["text"].startswith("🟡 だいたい終わりました: 毎朝のまとめ")
    assert "w-1a2b3c4d" not in rec["text"]


def test_code_families():
    assert reason_sentence("bad_whatever", "ja") == nt.catalogue("ja")["families"]["bad_"]


def test_unknown_reason_gets_the_unknown_sentence():
    assert reason_sentence("zzz_code", "en") == nt.catalogue("en")["reasons"]["unknown"]


# --- webhook against a local http.server --------------------------------------------------------------

class _Hook:
    def __init__(self, fail_first: int):
        self.fail_first = fail_first
        self.bodies: list[dict] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hook.bodies.append(body)
                code = 500 if len(hook.bodies) <= hook.fail_first else 204
                self.send_response(code)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.server.shutdown()
        self.server.server_close()


def test_webhook_posts_discord_style_content(tmp_path):
    with _Hook(fail_first=0) as hook:
        rec = nt.notify(tmp_path, "done", "あいさつする", "あいさつを1件書いた", "ja",
                        env={"LIVE_TRIAL_WEBHOOK_URL": hook.url}, sleep=lambda s: None)
    assert hook.bodies == [{"content": rec["text"]}]
    assert rec["webhook"] == {"status": "sent", "attempts": 1, "http_status": 204, "error": None}


def test_webhook_that_fails_once_is_retried_once(tmp_path):
    waits = []
    with _Hook(fail_first=1) as hook:
        rec = nt.notify(tmp_path, "not_working", "あいさつする", "何も書かれていない", "ja",
                        env={"LIVE_TRIAL_WEBHOOK_URL": hook.url}, sleep=waits.append)
    assert len(hook.bodies) == 2 and waits == [WEBHOOK_RETRY_WAIT_S]
    assert rec["webhook"]["status"] == "sent" and rec["webhook"]["attempts"] == 2


def test_webhook_that_keeps_failing_is_recorded_not_lost(tmp_path):
    with _Hook(fail_first=5) as hook:
        rec = nt.notify(tmp_path, "done", "x", "1 file", "en", env={"LIVE_TRIAL_WEBHOOK_URL": hook.url},
                        sleep=lambda s: None)
    assert len(hook.bodies) == 2
    assert rec["webhook"]["status"] == "failed" and rec["webhook"]["http_status"] == 500
    assert nt.read_notifications(tmp_path)[-1]["text"] == rec["text"]


def test_webhook_unreachable_is_recorded(tmp_path):
    with _Hook(fail_first=0) as hook:
        url = hook.url
    rec = nt.notify(tmp_path, "done", "x", "1 file", "en", env={"LIVE_TRIAL_WEBHOOK_URL": url},
                    sleep=lambda s: None, timeout_s=2)
    assert rec["webhook"]["status"] == "failed" and rec["webhook"]["attempts"] == 2
    assert rec["webhook"]["error"]
    assert len(nt.read_notifications(tmp_path)) == 1


def test_notify_trial_from_a_verdict_dict(tmp_path):
    wd = tmp_path / "eval-log" / "hello" / "greet" / "live-trial" / "20261130T101010-abcd"
    wd.mkdir(parents=True)
    (wd / "evaluation.json").write_text(json.dumps({"description": "あいさつのファイルを書く"}), encoding="utf-8")
    doc = {"run_id": "20261130T101010-abcd", "target_skill": "hello:greet", "workdir": str(wd),
           "overall": {"verdict": "DEGRADED"}, "goal": {"result": "FAIL", "blockers": ["out/greeting.txt is empty"]},
           "poll_exit": "DONE", "stop_reason": None}
    text = nt.notify_trial(tmp_path / "eval-log", doc, "ja", env={})
    assert text.startswith("⚠️ うまくいっていません: greet（hello のスキル）: あいさつのファイルを書く")
    assert "最後まで動きましたが、目的の結果は出ていませんでした" in text
    assert "greeting.txt is empty" in text and "out/" not in text     # the folders are the harness's, the file not
    assert nt.forbidden_tokens(text, "ja", {"greeting.txt", "greet", "hello"}) == []
    rec = nt.read_notifications(tmp_path / "eval-log")[-1]
    assert rec["refs"]["run_id"] == "20261130T101010-abcd" and rec["refs"]["overall"] == "DEGRADED"


def test_notify_trial_pass_uses_the_observed_evidence(tmp_path):
    doc = {"overall": "PASS", "target": "hello:greet",
           "evidence": [{"claim": "c", "source": "out/greeting.txt", "observed": "1 file with 1 line"}]}
    text = nt.notify_trial(tmp_path, doc, "en", env={})
    assert text == "✅ Finished: greet (a skill of hello)\nWhat was checked: 1 file with 1 line"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_pass_whose_session_said_it_failed_tells_the_person_so(tmp_path, lang):
    """The session wrote ``{"status": "failed"}`` (and "DONE: failed"), the evaluator's evidence made it a PASS: the
    message says what the session reported and that its word does not count, so nobody is surprised later."""
    root = tmp_path / "eval-log"
    wd = root / "hello" / "greet" / "live-trial" / "20261130T101010-abcd"
    (wd / "out").mkdir(parents=True)
    (wd / "out" / "status.json").write_text('{"status": "failed", "summary": "it did not work"}\n')
    doc = {"overall": "PASS", "target": "hello:greet", "plugin": "hello", "skill": "greet",
           "run_id": "20261130T101010-abcd",
           "evidence": [{"claim": "c", "source": "side-effects/files/greeting.txt", "observed": "1 file with 1 line"}]}
    text = nt.notify_trial(root, doc, lang, env={})
    assert nt.catalogue(lang)["notes"]["session_status"].format(status="failed") in text, text
    assert nt.forbidden_tokens(text, lang) == []
    (wd / "out" / "status.json").write_text('{"status": "ok", "summary": "done"}\n')
    assert "failed" not in nt.notify_trial(root, doc, lang, env={})


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_notify_trial_of_a_rehearsal_says_the_model_was_scripted(tmp_path, lang):
    """A person told "finished" after `make demo` would think the skill works; a rehearsal proves the harness only."""
    doc = {"overall": "PASS", "target": "hello:greet", "scenario_origin": "rehearsal",
           "evidence": [{"claim": "c", "source": "out/greeting.txt", "observed": "1 file with 1 line"}]}
    text = nt.notify_trial(tmp_path, doc, lang, env={})
    note = nt.catalogue(lang)["notes"]["rehearsal"]
    joined = "1 file with 1 line" + (". " if lang == "en" else "。") + note       # two sentences, not run together
    assert text.endswith(joined) and nt.forbidden_tokens(text, lang) == []
    real = nt.notify_trial(tmp_path, dict(doc, scenario_origin="live"), lang, env={})
    assert note not in real


def test_notify_trial_with_a_verdict_shaped_like_verdict_py(tmp_path):
    root = tmp_path / "eval-log"
    wd = root / "hello" / "greet" / "live-trial" / "20261130T101010-abcd"
    wd.mkdir(parents=True)
    (wd / "evaluation.json").write_text(json.dumps({"description": "Writes a greeting file"}), encoding="utf-8")
    doc = {"target": "hello:greet", "plugin": "hello", "skill": "greet", "run_id": "20261130T101010-abcd",
           "goal_result": "PASS", "goal_blockers": [], "evidence": [], "nudge_count": 1, "gate_response_count": 0,
           "gate_kind": "rescue", "poll_exit": "DONE", "stop_reason": None, "failure_reason": None,
           "overall": {"verdict": "DEGRADED", "reasons": ["nudge_count 1 > 0"]}}
    text = nt.notify_trial(root, doc, "en", env={})
    assert text.startswith("⚠️ Not working: greet (a skill of hello): Writes a greeting file\nWhat we found: ")
    assert "the result it was meant to produce is there" in text and "it was told 1 time(s) to go on" in text
    assert reason_sentence("DONE", "en") not in text and "Reply" not in text
    assert text.splitlines()[-1].startswith("What to do next: ")
    assert nt.forbidden_tokens(text, "en") == []


@pytest.mark.parametrize("lang,by,expected", [
    ("en", ["test", "test"], "2 of its criteria are checked by tests, not by this trial."),
    ("en", ["test", "script"], "2 of its criteria are checked in other ways, not by this trial."),
    ("ja", ["script"], "確かめる項目のうち1件はスクリプトで確かめるもので、今回の試しでは確かめていません。"),
])
def test_a_pass_says_which_criteria_this_trial_did_not_check(tmp_path, lang, by, expected):
    """README "Evidence, watches and messages to a person": one line per criterion, and a PASS says plainly that
    criteria verified by tests or scripts were not checked by the trial."""
    rows = [{"id": f"IN{i}", "text": "t", "verify_by": b, "result": "not_checked_here", "evidence": "e"}
            for i, b in enumerate(by)] + [{"id": "OUT1", "text": "t", "verify_by": None, "result": "pass",
                                           "evidence": "2 rows"}]
    doc = {"overall": {"verdict": "PASS"}, "target": "hello:greet", "criteria": rows,
           "evidence": [{"claim": "c", "source": "s", "observed": "1 file with 1 line"}]}
    text = nt.notify_trial(tmp_path, doc, lang, env={})
    assert text.endswith(expected) and nt.forbidden_tokens(text, lang) == []
    failed = nt.notify_trial(tmp_path, {**doc, "overall": {"verdict": "DEGRADED"}}, lang, env={})
    assert expected not in failed


def test_notify_trial_mostly_done(tmp_path):
    doc = {"target": "bot:reply", "overall": {"verdict": "PASS"}, "goal_result": "PASS",
           "unverified": "replies to real people are not seen yet", "evidence_text": "deployed"}
    text = nt.notify_trial(tmp_path, doc, "ja", env={})
    assert text.startswith("🟡 だいたい終わりました: reply（bot のスキル）\n"
                           "まだ確かめられていないこと: replies to real people are not seen yet")


# --- failed notices are sent again (seed 000: a person is always told the outcome) ---------------

HOOK = {"LIVE_TRIAL_WEBHOOK_URL": "https://hook.invalid/x"}
START = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


class _Post:
    """A webhook that answers with queued HTTP codes (then ``default``); keeps every text it was given."""

    def __init__(self, *codes, default=204):
        self.codes = list(codes)
        self.default = default
        self.texts: list[str] = []

    def __call__(self, url, body, timeout_s):
        self.texts.append(json.loads(body)["content"])
        return self.codes.pop(0) if self.codes else self.default


def _now(clock: Clock) -> datetime:
    """The manual clock of tests/unit/fakes.py (seconds) as an aware datetime from START."""
    return START + timedelta(seconds=clock())


def _failed_notice(root, clock, kind="not_working", objective="あいさつする", detail="何も書かれていない", **kw):
    return nt.notify(root, kind, objective, detail, "ja", env=HOOK, post=_Post(500, 500),
                     sleep=lambda s: None, clock=lambda: iso_z(_now(clock)), **kw)


def _resend(root, clock, post, **kw):
    kw.setdefault("env", HOOK)
    return nr.resend_failed(root, clock=lambda: _now(clock), post=post, sleep=lambda s: None, **kw)


def test_notification_id_is_computed_from_at_kind_and_text_and_not_stored(tmp_path):
    rec = nt.notify(tmp_path, "done", "x", "1 file", "en", env={}, clock=lambda: "2026-11-30T09:00:00.000Z")
    expected = "n-" + hashlib.sha256(f"{rec['at']}\ndone\n{rec['text']}".encode()).hexdigest()[:12]
    assert nr.notification_id(rec) == expected
    assert nr.notification_id(dict(rec, refs={"x": "y"}, detail="other")) == expected
    assert nr.notification_id(dict(rec, at="2026-11-30T09:00:00.001Z")) != expected
    assert "id" not in nt.read_notifications(tmp_path)[0]


def test_a_failed_notice_is_resent_after_an_hour_and_not_before(tmp_path):
    clock = Clock()
    original = _failed_notice(tmp_path, clock, refs={"run_id": "r1"})
    assert original["webhook"]["status"] == "failed"
    before = (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes()
    post = _Post()
    clock.sleep(3599)
    assert nr.pending_resends(tmp_path, _now(clock)) == []
    assert _resend(tmp_path, clock, post) == [] and post.texts == []
    assert (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes() == before
    clock.sleep(1)
    assert nr.pending_resends(tmp_path, iso_z(_now(clock))) == [original]
    [resent] = _resend(tmp_path, clock, post)
    assert post.texts == [original["text"]]
    assert resent["at"] == "2026-11-30T10:00:00.000Z"
    assert resent["refs"] == {"run_id": "r1", "resend_of": nr.notification_id(original)}
    assert resent["webhook"] == {"status": "sent", "attempts": 1, "http_status": 204, "error": None}
    for key in ("kind", "lang", "text", "objective", "detail", "check"):
        assert resent[key] == original[key], key
    assert nt.read_notifications(tmp_path) == [original, resent]
    clock.sleep(86400)
    assert nr.pending_resends(tmp_path, _now(clock)) == []
    assert _resend(tmp_path, clock, post) == [] and len(post.texts) == 1


def test_the_resend_record_fits_the_schema(tmp_path):
    clock = Clock()
    _failed_notice(tmp_path, clock, kind="watch_expired", refs={"watch_id": "w-1a2b3c4d"})
    clock.sleep(3600)
    [resent] = _resend(tmp_path, clock, _Post())
    assert schema_errors(resent, "notification.schema.json") == []
    nt.validate(nt.read_notifications(tmp_path)[-1], "notification.schema.json")


def test_sent_and_not_configured_notices_are_never_resent(tmp_path):
    clock = Clock()
    nt.notify(tmp_path, "done", "x", "1 file", "en", env={}, clock=lambda: iso_z(_now(clock)))
    nt.notify(tmp_path, "done", "y", "2 files", "en", env=HOOK, post=_Post(), clock=lambda: iso_z(_now(clock)))
    before = (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes()
    clock.sleep(7 * 86400)
    post = _Post()
    assert nr.pending_resends(tmp_path, _now(clock)) == []
    assert _resend(tmp_path, clock, post) == [] and post.texts == []
    assert (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes() == before


def test_a_resend_that_fails_is_retried_later_and_the_original_is_resent_once(tmp_path):
    clock = Clock()
    original = _failed_notice(tmp_path, clock)
    clock.sleep(3600)
    down = _Post(default=503)
    [first] = _resend(tmp_path, clock, down)
    assert first["webhook"]["status"] == "failed" and first["webhook"]["attempts"] == 2
    assert first["refs"]["resend_of"] == nr.notification_id(original)
    assert _resend(tmp_path, clock, down) == []  # the failed resend is less than an hour old
    clock.sleep(1800)
    assert _resend(tmp_path, clock, down) == []
    clock.sleep(1800)
    up = _Post()
    [second] = _resend(tmp_path, clock, up)
    assert second["refs"]["resend_of"] == nr.notification_id(first)
    assert second["webhook"]["status"] == "sent" and up.texts == [original["text"]]
    clock.sleep(86400)
    assert _resend(tmp_path, clock, up) == []
    records = nt.read_notifications(tmp_path)
    assert len(records) == 3
    assert [r["refs"].get("resend_of") for r in records].count(nr.notification_id(original)) == 1


def test_without_a_webhook_nothing_is_resent_or_written(tmp_path):
    clock = Clock()
    _failed_notice(tmp_path, clock)
    before = (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes()
    clock.sleep(86400)
    post = _Post()
    assert _resend(tmp_path, clock, post, env={}) == []
    assert _resend(tmp_path, clock, post, env={"LIVE_TRIAL_WEBHOOK_URL": "  "}) == []
    assert post.texts == []
    assert (tmp_path / nt.NOTIFICATIONS_FILE).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [nt.NOTIFICATIONS_FILE]


def test_without_any_notifications_nothing_is_created(tmp_path):
    assert _resend(tmp_path / "none", Clock(), _Post()) == []
    assert not (tmp_path / "none").exists()


def test_two_calls_resend_once(tmp_path):
    clock = Clock()
    _failed_notice(tmp_path, clock)
    clock.sleep(3600)
    post = _Post()
    assert len(_resend(tmp_path, clock, post)) == 1
    assert _resend(tmp_path, clock, post) == []
    assert len(post.texts) == 1 and len(nt.read_notifications(tmp_path)) == 2


def test_two_processes_at_once_resend_once(tmp_path):
    """The first caller claims the notice and sends it without holding the lock; the second one, meanwhile, finds it
    claimed and returns at once; the notice is sent once."""
    clock = Clock()
    _failed_notice(tmp_path, clock)
    clock.sleep(3600)
    in_post, release = threading.Event(), threading.Event()
    texts: list[str] = []

    def slow_post(url, body, timeout_s):
        texts.append(json.loads(body)["content"])
        in_post.set()
        assert release.wait(10)
        return 204

    results: dict[str, list] = {}
    first = threading.Thread(target=lambda: results.setdefault("a", _resend(tmp_path, clock, slow_post)))
    first.start()
    assert in_post.wait(10)
    assert _resend(tmp_path, clock, slow_post) == []      # not blocked on the lock, and not sending it again
    assert first.is_alive()                               # the first one is still waiting for the webhook
    release.set()
    first.join(10)
    assert len(results["a"]) == 1 and len(texts) == 1
    assert len(nt.read_notifications(tmp_path)) == 2
    assert not (tmp_path / nr.CLAIMS_FILE).exists()


def test_malformed_lines_are_skipped(tmp_path):
    clock = Clock()
    path = tmp_path / nt.NOTIFICATIONS_FILE
    path.write_text('not json\n[1, 2]\n{"at": "yesterday", "webhook": {"status": "failed"}}\n\n',
                    encoding="utf-8")
    original = _failed_notice(tmp_path, clock)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"truncated": \n')
    clock.sleep(3600)
    assert nr.pending_resends(tmp_path, _now(clock)) == [original]
    [resent] = _resend(tmp_path, clock, _Post())
    assert resent["refs"]["resend_of"] == nr.notification_id(original)
    assert path.read_text(encoding="utf-8").startswith("not json\n[1, 2]\n")


def test_a_webhook_still_down_stops_the_round_at_the_first_failure(tmp_path):
    clock = Clock()
    a = _failed_notice(tmp_path, clock, objective="一つ目")
    b = _failed_notice(tmp_path, clock, objective="二つ目")
    clock.sleep(3600)
    down = _Post(default=500)
    assert [r["refs"]["resend_of"] for r in _resend(tmp_path, clock, down)] == [nr.notification_id(a)]
    assert len(down.texts) == 2  # one send, one retry
    clock.sleep(3600)  # the other one goes first now
    assert [r["refs"]["resend_of"] for r in _resend(tmp_path, clock, down)] == [nr.notification_id(b)]
    clock.sleep(3600)
    both = _resend(tmp_path, clock, _Post())
    assert [r["text"] for r in both] == [a["text"], b["text"]]
    assert all(r["webhook"]["status"] == "sent" for r in both)
    clock.sleep(3600)
    assert _resend(tmp_path, clock, _Post()) == []


def test_every_pending_notice_is_tried_when_asked(tmp_path):
    clock = Clock()
    _failed_notice(tmp_path, clock, objective="一つ目")
    _failed_notice(tmp_path, clock, objective="二つ目")
    clock.sleep(3600)
    out = _resend(tmp_path, clock, _Post(default=500), stop_after_failure=False)
    assert len(out) == 2 and all(r["webhook"]["status"] == "failed" for r in out)


@pytest.mark.parametrize("lang", nt.LANGS)
def test_every_stop_reason_the_verdict_schema_names_has_a_sentence(lang):
    """The verdict schema lists the stop reasons a trial writes (plugin_not_loaded, transcript_moved among them); each
    has a plain sentence, so a person never reads a code."""
    from live_trial.resources import load_schema

    named = load_schema("live-trial-verdict.schema.json")["properties"]["stop_reason"]["examples"]
    assert {"plugin_not_loaded", "transcript_moved"} <= set(named)
    unknown = nt.catalogue(lang)["reasons"]["unknown"]
    assert [c for c in named if reason_sentence(c, lang) == unknown] == []


def test_the_users_own_names_stay_and_the_harness_codes_paths_and_files_still_go():
    """Hiding greeting.txt or hello:greet as "internal symbol" hid what a person needs; codes, paths, ids and the
    harness's own files stay out (seed 000 "通知文の書き方")."""
    allowed = {"hello", "greet", "hello:greet", "greeting.txt"}
    text = "1 Skill call to hello:greet wrote greeting.txt."
    assert nt.forbidden_tokens(text, "en", allowed) == [] and nt.forbidden_tokens(text, "en")
    assert nt.sanitise("It wrote out/greeting.txt and /tmp/x/status.json", "en", allowed) == (
        "It wrote greeting.txt and (internal reference)", ["out/greeting.txt", "/tmp/x/status.json"])
    for bad in ("cwd/greeting.txt", "status.json", "hello:greet2", "greeting.txt.bak", "--gate-response",
                "gate_unanswered", "20261130T101010-abcd", "lt-20261130T101010-abcd-greet"):
        assert nt.forbidden_tokens(f"It wrote {bad} here", "en", allowed), bad


def test_a_trial_message_names_the_skill_its_plugin_and_the_promised_file(tmp_path):
    root = tmp_path / "eval-log"
    wd = root / "hello" / "greet" / "live-trial" / "20261130T101010-abcd"
    wd.mkdir(parents=True)
    (wd / "evaluation.json").write_text(json.dumps({"description": "Writes a greeting file greeting.txt in the "
                                                                   "working folder; then the marker status.json"}))
    doc = {"target": "hello:greet", "plugin": "hello", "skill": "greet", "run_id": "20261130T101010-abcd",
           "overall": {"verdict": "PASS", "reasons": []}, "goal_result": "PASS", "poll_exit": "DONE",
           "evidence": [{"claim": "c", "source": "x", "observed": "1 Skill call to hello:greet; greeting.txt holds 1 "
                                                                    "line"}]}
    for lang, head in (("ja", "✅ 終わりました: greet（hello のスキル）: Writes a greeting file greeting.txt in the "
                              "working folder; then the marker （内部の記号）"),
                       ("en", "✅ Finished: greet (a skill of hello): Writes a greeting file greeting.txt in the "
                              "working folder; then the marker (internal reference)")):
        text = nt.notify_trial(root, doc, lang, env={})
        assert text.startswith(head) and text.endswith("1 Skill call to hello:greet; greeting.txt holds 1 line")
