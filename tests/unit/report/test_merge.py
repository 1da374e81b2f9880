"""``live-trial merge`` (README "Sharding a plan over CI machines"): the shards' eval-logs become one without losing
or duplicating a trial, a watch or a notification; merging again changes nothing; a conflict is one line, exit 2,
and nothing is written."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from live_trial.errors import RefusedInput
from live_trial.notices.watch import load_ledger, record_result, register_watch
from live_trial.report.merge import merge_eval_logs


def _clock(minute: int):
    return lambda: datetime(2026, 12, 1, 10, minute, tzinfo=timezone.utc)


def _shard(root: Path, skill: str, run_id: str, minute: int, *, watch: bool = False) -> Path:
    wd = root / "p" / skill / "live-trial" / run_id
    (wd / "cwd").mkdir(parents=True)
    (wd / "task.md").write_text(f"task of {skill}\n")
    (wd / "verdict.json").write_text(json.dumps({"target": f"p:{skill}", "overall": {"verdict": "PASS"}}))
    (wd / "side-effects" / "files").mkdir(parents=True)
    (wd / "side-effects" / "files" / "out.txt").write_text(skill)
    note = {"at": f"2026-12-01T10:{minute:02d}:00.000Z", "kind": "done", "text": f"{skill} done"}
    with open(root / "notifications.jsonl", "a") as fh:
        fh.write(json.dumps(note) + "\n")
    if watch:
        register_watch(root, objective=f"{skill} mails", unverified="the mail arrives", target=f"p:{skill}",
                       workdir=str(wd), clock=_clock(minute))
    return wd


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(root.rglob("*")) if p.name != ".watches.lock"}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "live_trial", "merge", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def test_shards_merge_without_loss_or_duplicates(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _shard(a, "one", "20261201T100100-aaaa", 1, watch=True)
    _shard(b, "two", "20261201T100200-bbbb", 2)
    _shard(b, "three", "20261201T100300-cccc", 3, watch=True)
    c.mkdir()                                                 # a shard that ran nothing
    into = tmp_path / "merged"
    proc = _cli(str(a), str(b), str(c), "--into", str(into), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert (out["trials"], out["watches"], out["notifications"]) == (3, 2, 3)
    tree = _tree(into)
    for shard in (a, b):
        for rel, digest in _tree(shard).items():
            if rel not in ("notifications.jsonl", "watches.json"):
                assert tree[rel] == digest, rel
    assert (into / "p" / "one" / "live-trial" / "20261201T100100-aaaa" / "cwd").is_dir()   # empty folder kept
    lines = (into / "notifications.jsonl").read_text().splitlines()
    assert [json.loads(ln)["text"] for ln in lines] == ["one done", "two done", "three done"]
    assert sorted(w["target"] for w in load_ledger(into)["watches"]) == ["p:one", "p:three"]
    # again, with the merged eval-log as an input too: nothing changes, nothing doubles
    before = _tree(into)
    again = _cli(str(a), str(b), str(into), "--into", str(into), "--json", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["copied"] == 0
    assert _tree(into) == before


def test_a_watch_checked_later_in_one_shard_keeps_its_later_state(tmp_path: Path) -> None:
    base = tmp_path / "restored"
    _shard(base, "one", "20261201T100100-aaaa", 1, watch=True)
    shard = tmp_path / "shard"
    shutil.copytree(base, shard)
    wid = load_ledger(shard)["watches"][0]["id"]
    record_result(shard, wid, "ok", "1 mail found in the inbox", clock=_clock(9), env={})
    merge_eval_logs([shard], base)
    (w,) = load_ledger(base)["watches"]
    assert w["status"] == "confirmed" and [e["event"] for e in w["history"]] == ["registered", "ok"]


def test_diverging_watches_are_a_conflict(tmp_path: Path) -> None:
    base = tmp_path / "base"
    _shard(base, "one", "20261201T100100-aaaa", 1, watch=True)
    x, y = tmp_path / "x", tmp_path / "y"
    shutil.copytree(base, x)
    shutil.copytree(base, y)
    wid = load_ledger(x)["watches"][0]["id"]
    record_result(x, wid, "ok", "1 mail found", clock=_clock(9), env={})
    record_result(y, wid, "ng", "0 mails found", clock=_clock(9), env={})
    with pytest.raises(RefusedInput, match=f"watch {wid} differs"):
        merge_eval_logs([x, y], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_conflicting_trial_file_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    wd = _shard(a, "one", "20261201T100100-aaaa", 1)
    shutil.copytree(a, b)
    (b / wd.relative_to(a) / "verdict.json").write_text('{"overall": {"verdict": "FAIL"}}')
    _shard(b, "two", "20261201T100200-bbbb", 2)
    into = tmp_path / "merged"
    _shard(into, "old", "20261130T090000-dddd", 0)            # the restored eval-log of the last run
    before = _tree(into)
    proc = _cli(str(a), str(b), "--into", str(into), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("REFUSED: the eval-logs disagree: p/one/live-trial/")
    assert "verdict.json differs in" in lines[0] and "nothing was merged" in lines[0]
    assert _tree(into) == before
    fresh = tmp_path / "fresh"
    assert _cli(str(a), str(b), "--into", str(fresh), cwd=tmp_path).returncode == 2
    assert not fresh.exists()


def test_an_input_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    proc = _cli(str(tmp_path / "file"), "--into", str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 2 and "is not a folder" in proc.stderr
    assert not (tmp_path / "m").exists()


def test_the_shards_queues_merge_per_case_keeping_the_longer_wait(tmp_path: Path) -> None:
    """queue.json (the plan's defer queue, README "Planning many skills") is never a conflict: per case the entry that
    waited more plans stays."""
    from live_trial.acceptance.queue import Waiting, load_queue, save_queue, to_doc

    one, two = tmp_path / "one", tmp_path / "two"
    _shard(one, "a", "20261201T100000-0001", 1)
    _shard(two, "b", "20261201T100000-0002", 2)
    save_queue(one, to_doc({("p:c", "default"): Waiting("p:c", "default", "2026-12-01", 1, "2026-12-01", None)},
                           "2026-12-01"))
    save_queue(two, to_doc({("p:c", "default"): Waiting("p:c", "default", "2026-11-30", 2, "2026-12-01", None),
                            ("p:d", "x"): Waiting("p:d", "x", "2026-12-01", 1, "2026-12-01", "r")}, "2026-12-02"))
    merge_eval_logs([one, two], tmp_path / "into")
    merged = load_queue(tmp_path / "into")
    assert {k: w.plans_waited for k, w in merged.items()} == {("p:c", "default"): 2, ("p:d", "x"): 1}
