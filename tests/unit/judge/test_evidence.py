"""Evidence rules (seed 000 rule 1). Pure functions: no disk."""
from __future__ import annotations

import json

import pytest

from live_trial.errors import RefusedInput
from live_trial.judge.evidence import check_evidence, counted_observations, marker_mentions, proxy_phrases


@pytest.mark.parametrize("evidence", [None, "", "   "])
def test_pass_without_evidence_is_refused_with_evidence_required(evidence):
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", evidence, None)
    assert exc.value.code == "evidence_required"
    assert "counted" in exc.value.message  # says what would count


@pytest.mark.parametrize("evidence", [
    "launched", "the bot started", "finished", "exited 0", "process exited with code 0", "tests passed",
    "42 tests passed", "all tests passed (17/17)", "CI green", "CI is green, PR #12 merged", "merged",
    "deployed v2.1.0 at 12:00 on 2026-11-30", "the daemon is running", "up and running", "marker written",
    "status.json written", "progress 100%", "ok", "looks good", "works", "no errors",
    "起動しました", "テスト緑", "テストが全て通過", "CIが緑", "マージ済み", "デプロイしました", "稼働中", "正常終了",
    "完了しました", "マーカーを書いた", "問題なし",
])
def test_proxy_only_evidence_is_refused(evidence):
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", evidence, None)
    assert exc.value.code == "proxy_evidence"
    assert "name what happened, counted" in exc.value.message
    assert "1 file written with 3 keys" in exc.value.message


@pytest.mark.parametrize("evidence", [
    "1 file written with 3 keys", "2 messages sent", "3 replies found in the log", "two messages sent",
    "deployed, and 5 replies were sent to real users", "out/report.csv has 2 rows", "返信を3件送った",
    "起動後、返信を２件送った", "メールを三通送った", "sent 1 greeting to the user; the file holds 4 lines",
])
def test_counted_evidence_is_accepted(evidence):
    assert check_evidence("PASS", evidence, None) == "done"


@pytest.mark.parametrize("evidence", ["0 replies sent", "返信0件", "zero messages sent", "起動しました。返信0件"])
def test_only_zero_counts_is_refused(evidence):
    """The seed's real case: 0 replies and a "done" notification. The verb must have happened at least once."""
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", evidence, None)
    assert exc.value.code == "proxy_evidence"


def test_unverified_makes_pass_mostly_done_even_with_a_proxy():
    assert check_evidence("PASS", "deployed", "no human inquiry has arrived yet") == "mostly_done"
    assert check_evidence("PASS", None, "replies can only be seen tomorrow") == "mostly_done"


@pytest.mark.parametrize("goal", ["FAIL", "DEGRADED", "BLOCKED"])
def test_non_pass_needs_nothing(goal):
    assert check_evidence(goal, None, None) == "not_done"


def test_lowercase_pass_is_still_checked():
    with pytest.raises(RefusedInput):
        check_evidence("pass", "", None)


def test_identifiers_are_not_counts():
    text = "run 20261130T101010-abcd wrote commit abc1234def5678 at 10:11, version 1.2.3, pid 4242, #17"
    assert counted_observations(text) == []


def test_proxy_phrases_are_reported():
    assert proxy_phrases("CI green, merged") == ["CI green", "merged"]
    assert proxy_phrases("2 messages sent") == []


# ------------------------------------------------------------------ seed 000: proxies stripped first, then a real count
@pytest.mark.parametrize("evidence, code", [
    ("1", "evidence_required"),                    # a bare number
    ("12/12", "evidence_required"),
    ("tests passed: 12", "proxy_evidence"),        # the number belongs to the proxy
    ("CI green on 3 jobs", "proxy_evidence"),      # jobs is a proxy noun
    ("1 marker written", "proxy_evidence"),        # a marker is not the goal
    ("score: 9/10 (1 file)", "proxy_evidence"),    # a score anywhere is refused, even next to a real count
    ("2 messages sent (rated 4/5)", "proxy_evidence"),
    ("3 checks ok, exit code 0", "proxy_evidence"),
    ("ran for 5 minutes", "proxy_evidence"),
    ("ジョブ3件成功", "proxy_evidence"),
])
def test_seed_000_weak_evidence_is_refused(evidence, code):
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", evidence, None)
    assert exc.value.code == code
    assert "1 file written with 3 keys" in exc.value.message  # says what would count
    assert "\n" not in exc.value.message


@pytest.mark.parametrize("evidence", [
    "1 file written with 3 keys", "2 messages sent", "greeting.txt holds 1 line 'Hello, World!'", "返信を3件送信した",
    "3 rows updated in the users table", "rows updated: 3",
    "1 file, 1 line, 13 characters; rating of the lines not given",  # the word alone, with no value, is no score
])
def test_seed_000_real_counts_are_accepted(evidence):
    assert check_evidence("PASS", evidence, None) == "done"


def test_counts_are_tied_to_what_they_count():
    assert counted_observations("1 file written with 3 keys") == ["1 file written", "3 keys"]
    assert counted_observations("CI green on 3 jobs") == []
    assert counted_observations("tests passed: 12") == []
    assert counted_observations("1 marker written") == []
    assert counted_observations("1") == []


# ------------------------------------------------------------------ a number attached to a proxy counts the proxy
@pytest.mark.parametrize("evidence", [
    "out/status.json written with 2 keys", "marker written: 1 file", "wrote the completion marker with 2 keys",
    "deployed 2 services", "launched 3 workers", "the bot is running with 4 threads",
    "3 workers were launched", "2 services have been deployed", "started 5 containers", "spawned 2 workers",
    "merged 3 branches", "the daemon is up with 2 replicas", "out/status.json has 2 keys",
    "1 marker file with 2 keys, status ok", "the completion marker holds 2 keys", "`out/status.json` has 2 keys",
    "2つのサービスをデプロイした", "ワーカーを3つ起動した", "ボットが4本のスレッドで稼働中", "デプロイしたサービス2つ",
    "完了マーカーに2項目を書いた", "out/status.json に2キーを書き込んだ",
])
def test_a_count_governed_by_a_proxy_or_of_the_marker_is_refused(evidence):
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", evidence, None)
    assert exc.value.code == "proxy_evidence" and "\n" not in exc.value.message
    assert "a number attached to a proxy counts the proxy" in exc.value.message
    assert "1 file written with 3 keys" in exc.value.message  # says what would count
    assert counted_observations(evidence) == []


@pytest.mark.parametrize("evidence", [
    '1 file written in the working folder, with 1 line "Hello, World!"', "3 rows in out/report.csv",
    "1 Skill call to hello:greet in the transcript",
    '1 file written with 1 line "Deployment finished"',           # a proxy word quoted from what was seen
    "2 issues labelled 'merged' listed in out/issues.json", "3 rows in out/started.csv",  # ... or in a file name
    "the bot started and 2 replies were sent to real users",      # the count has its own, real verb
    "launched, then sent 2 replies", "the skill finished after writing 1 file with 3 lines",
    "1 file written with 1 line, and out/status.json has 2 keys",  # the marker part counts nothing; the rest does
    "1 AskUserQuestion call asking 'Which greeting style?' with 2 options",
    "起動後に返信を2件送った", "ログに「デプロイ完了」の行が3行ある", "稼働中のボットが返信を3件送った",
])
def test_real_counts_next_to_proxy_words_are_accepted(evidence):
    assert check_evidence("PASS", evidence, None) == "done"


def test_the_refusal_names_the_marker_or_the_proxy():
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", "out/status.json has 2 keys", None)
    assert "('out/status.json')" in exc.value.message and exc.value.details["markers"] == ["out/status.json"]
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", "deployed 2 services", None)
    assert "('deployed')" in exc.value.message


def test_marker_mentions():
    assert marker_mentions("/tmp/wd/out/status.json and ./out/status.json") == ["/tmp/wd/out/status.json",
                                                                                  "./out/status.json"]
    assert marker_mentions("the completion marker; マーカー") == ["the completion marker", "マーカー"]
    assert marker_mentions("out/api/status.json, side-effects/files/out/status.json, trialkit:mark") == []


def test_a_score_is_refused_even_when_unverified():
    with pytest.raises(RefusedInput) as exc:
        check_evidence("PASS", "score: 9/10", "replies arrive tomorrow")
    assert exc.value.code == "proxy_evidence"


# ------------------------------------------------------------------ evidence items [{claim, source, observed}]
from live_trial.judge.sources import check_evidence_items, parse_evidence_items  # noqa: E402

ITEM = {"claim": "greeting written", "source": "out/greeting.txt", "observed": "1 file with 1 line"}


def test_items_parse_and_pass():
    items = parse_evidence_items(' [{"claim": "c", "source": "out/a.txt", "observed": "2 messages sent"}]')
    assert items == [{"claim": "c", "source": "out/a.txt", "observed": "2 messages sent"}]
    assert parse_evidence_items("2 messages sent") is None
    assert check_evidence_items("PASS", items, None, lambda s: True) == "done"


@pytest.mark.parametrize("text", ["[not json", "[]", "[1]", '[{"claim": "c", "source": "", "observed": "1 file"}]'])
def test_malformed_items_are_refused(text):
    with pytest.raises(RefusedInput) as exc:
        parse_evidence_items(text)
    assert exc.value.code == "bad_evidence"


def test_item_with_a_missing_source_is_refused_naming_it():
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", [ITEM, {**ITEM, "source": "out/nope.txt"}], None, lambda s: s == ITEM["source"])
    assert exc.value.code == "evidence_source_missing" and "out/nope.txt" in exc.value.message
    with pytest.raises(RefusedInput):  # also for a FAIL: a cited source must exist
        check_evidence_items("FAIL", [{**ITEM, "source": "out/nope.txt"}], None, lambda s: False)


@pytest.mark.parametrize("observed", ["tests passed: 12", "CI green on 3 jobs", "1 marker written", "1",
                                      "score: 9/10 (1 file)"])
def test_each_item_is_held_to_the_proxy_rule(observed):
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", [ITEM, {**ITEM, "observed": observed}], None, lambda s: True)
    assert exc.value.code in ("proxy_evidence", "evidence_required") and "evidence item 1" in exc.value.message


# ------------------------------------------------------------------ the completion marker is never the only source
@pytest.mark.parametrize("source", ["out/status.json", "./out/status.json", "out/status.json:1"])
def test_a_pass_citing_only_the_marker_is_refused(source):
    items = [{"claim": "the skill wrote its result", "source": source, "observed": "1 file written with 2 lines"}]
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", items, None, lambda s: True)
    assert exc.value.code == "marker_evidence" and "\n" not in exc.value.message
    assert "not the completion marker" in exc.value.message
    assert "cite an artifact the skill produced, or the transcript record that shows the outcome" in exc.value.message


def test_the_marker_next_to_a_real_source_or_with_unverified_or_for_a_fail_is_fine():
    marker = {"claim": "marker", "source": "out/status.json", "observed": "1 file written with 2 lines"}
    assert check_evidence_items("PASS", [marker, ITEM], None, lambda s: True) == "done"
    assert check_evidence_items("PASS", [marker], "replies arrive tomorrow", lambda s: True) == "mostly_done"
    assert check_evidence_items("FAIL", [marker], None, lambda s: True) == "not_done"
    with pytest.raises(RefusedInput):  # the check is injectable: absolute paths and uuids need the workdir
        check_evidence_items("PASS", [ITEM], None, lambda s: True, harness_files=lambda s: ["out/status.json"])


# ------------------------------------------------------------------ the marker under another spelling (bug: bypass)
from live_trial.judge.sources import HARNESS_FILES, harness_files_named, is_harness_path, is_score_key, source_path

WD = "/evals/p/s/live-trial/20261130T101500-abcd"


@pytest.mark.parametrize("source", ["out/status.json", "./out/status.json", "./out//status.json",
                                    "out/../out/status.json", "out/./status.json", "out/status.json/",
                                    "out/status.json:1", "out/status.json#L1-L2", "out\\status.json",
                                    f"{WD}/out/status.json", f"{WD}//out/./status.json", f"{WD}/x/../out/status.json:3"])
def test_every_spelling_of_the_marker_is_the_marker(source):
    assert source_path(source, WD) == "out/status.json"
    assert harness_files_named(source, WD) == ["out/status.json"]
    items = [{"claim": "done", "source": source, "observed": "1 file with status ok"}]
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", items, None, lambda s: True, lambda s: harness_files_named(s, WD))
    assert exc.value.code == "marker_evidence" and "\n" not in exc.value.message
    assert "every item cites: out/status.json" in exc.value.message


@pytest.mark.parametrize("source", ["out/status.json.bak", "out/api/status.json", "status.json", "out/status.jsonl",
                                    "side-effects/files/out/status.json", "../out/status.json",
                                    "/elsewhere/out/status.json", f"{WD}-2/out/status.json", f"{WD}/out/greeting.txt"])
def test_other_paths_are_not_the_marker(source):
    assert source_path(source, WD) != "out/status.json"


def test_an_absolute_path_needs_the_workdir_and_outside_paths_have_no_workdir_path():
    assert source_path(f"{WD}/out/status.json") is None and harness_files_named(f"{WD}/out/status.json") == []
    assert source_path("../x", WD) is None and source_path("/etc/passwd", WD) is None and source_path("", WD) is None
    assert source_path(".", WD) is None and source_path(f"{WD}/out/a.txt", WD) == "out/a.txt"


# ------------------------------------------------------------------ files the harness writes are no evidence
@pytest.mark.parametrize("rel", ["out/status.json", "task.md", "nudge-1.md", "nudge-12.md", "trial-state.json",
                                 "trial-log.jsonl", "poll-state.json", "cwd-snapshot.json", ".trial.lock",
                                 "evaluation.json", "verdict.json", "claude-config/settings.json",
                                 "claude-config/.claude.json", "claude-config/projects/x/s.jsonl"])
def test_harness_files_are_harness_owned(rel):
    assert is_harness_path(rel)
    items = [{"claim": "c", "source": rel, "observed": "1 file with 2 keys"}]
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", items, None, lambda s: True)
    assert exc.value.code == ("marker_evidence" if rel == "out/status.json" else "harness_evidence")
    assert "not the completion marker or another file the harness itself writes" in exc.value.message \
        or rel == "out/status.json"
    assert f"every item cites: {rel}" in exc.value.message and "\n" not in exc.value.message


@pytest.mark.parametrize("rel", ["pane.txt", "transcript.jsonl", "side-effects/files.json",
                                 "side-effects/files/greeting.txt", "side-effects/files/task.md",
                                 "subagents/agent-1.jsonl", "out/greeting.txt", "out/task.md", "out/verdict.json",
                                 "out/claude-config/x", "nudge.md", "nudge-1.txt", "claude-config-2/x", "notes/task.md"])
def test_skill_files_stay_evidence(rel):
    assert not is_harness_path(rel)
    items = [{"claim": "c", "source": rel, "observed": "1 file with 2 keys"}]
    assert check_evidence_items("PASS", items, None, lambda s: True) == "done"


def test_harness_files_are_one_constant():
    assert "out/status.json" in HARNESS_FILES and "claude-config/**" in HARNESS_FILES
    assert not any(p.startswith(("side-effects", "pane", "transcript", "subagents")) for p in HARNESS_FILES)


def test_a_harness_file_next_to_real_evidence_is_fine_but_does_not_count_for_it():
    harness = {"claim": "state", "source": "trial-state.json", "observed": "1 file written with 2 keys"}
    assert check_evidence_items("PASS", [harness, ITEM], None, lambda s: True) == "done"
    assert check_evidence_items("PASS", [harness], "replies arrive tomorrow", lambda s: True) == "mostly_done"
    assert check_evidence_items("FAIL", [harness], None, lambda s: True) == "not_done"
    mixed = [{**harness, "source": "out/status.json"}, harness]
    with pytest.raises(RefusedInput) as exc:
        check_evidence_items("PASS", mixed, None, lambda s: True)
    assert exc.value.code == "harness_evidence" and "out/status.json, trial-state.json" in exc.value.message


# ------------------------------------------------------------------ a score key in an evidence item (bug: dropped)
@pytest.mark.parametrize("extra", [{"score": 9}, {"Score": 9}, {"RATING": "A"}, {"grade": "B+"}, {"confidence": 0.9},
                                   {"quality_score": 3}, {"qualityScore": 3}, {"quality-rating": 4},
                                   {"overallGrade": "A"}, {"qualityscore": 3}, {"Confidence_Level": "high"},
                                   {"meta": {"score": 1}}, {"meta": [{"review": {"selfConfidence": 1}}]},
                                   {"points": 8}])
def test_an_item_with_a_score_key_is_refused(extra):
    text = json.dumps([{**ITEM, **extra}])
    with pytest.raises(RefusedInput) as exc:
        parse_evidence_items(text)
    assert exc.value.code == "score_field" and "evidence item 0" in exc.value.message
    assert "\n" not in exc.value.message and exc.value.details["fields"]


@pytest.mark.parametrize("extra", [{}, {"note": "x"}, {"checkpoints": 2}, {"remarks": "fine"}, {"kind": "file"}])
def test_items_without_a_score_key_still_parse(extra):
    assert parse_evidence_items(json.dumps([{**ITEM, **extra}])) == [ITEM]


def test_score_key_words():
    for key in ["score", "overall_score", "qualityScore", "Rating", "grade", "GRADES", "confidence", "conf.score",
                "Overall-Confidence", "selfconfidence", "points", "stars", "percentage"]:
        assert is_score_key(key), key
    for key in ["claim", "source", "observed", "checkpoints", "remarks", "evidence", "blockers", "verdict", "id"]:
        assert not is_score_key(key), key
