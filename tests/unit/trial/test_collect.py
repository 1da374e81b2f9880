from __future__ import annotations

import json
import subprocess

from live_trial.trial.changes import snapshot_cwd
from live_trial.trial.collect import collect


def test_snapshot_diff_records_and_copies_side_effects(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "keep.txt").write_text("same")
    (cwd / "edit.txt").write_text("v1")
    (cwd / "gone.txt").write_text("x")
    wd = tmp_path / "wd"
    (wd / "out").mkdir(parents=True)
    before = snapshot_cwd(cwd, exclude=[wd])
    (cwd / "edit.txt").write_text("version 2")
    (cwd / "gone.txt").unlink()
    (cwd / "new").mkdir()
    (cwd / "new" / "made.txt").write_text("hello")
    (wd / "out" / "status.json").write_text("{}")
    got = collect(wd, pane_text="screen", transcript_src=None, subagents_src=None, cwd=cwd, before=before,
                  exclude=[wd])
    files = json.loads((wd / "side-effects" / "files.json").read_text())
    assert files == {"added": ["new/made.txt"], "changed": ["edit.txt"], "removed": ["gone.txt"],
                     "copied": ["new/made.txt", "edit.txt"]}
    assert (wd / "side-effects/files/new/made.txt").read_text() == "hello"
    assert (wd / "pane.txt").read_text() == "screen"
    assert got.out_files == ["status.json"]
    assert got.missing == ["transcript.jsonl"] and not got.complete


def test_git_work_tree_side_effects(tmp_path):
    cwd = tmp_path / "repo"
    cwd.mkdir()
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    (cwd / "a.txt").write_text("1\n")
    subprocess.run(["git", "-C", str(cwd), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(cwd), "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a"], check=True)
    (cwd / "a.txt").write_text("2\n")
    wd = tmp_path / "wd"
    (wd / "out").mkdir(parents=True)
    got = collect(wd, pane_text=None, transcript_src=None, subagents_src=None, cwd=cwd, before=None, exclude=[wd])
    assert got.side_effects["git"] is True
    assert (wd / "side-effects/git-status.txt").read_text().strip() == "M a.txt"
    assert "+2" in (wd / "side-effects/git-diff.patch").read_text()
    assert "pane.txt" in got.missing


def test_a_second_collect_keeps_what_the_first_took(tmp_path):
    wd = tmp_path / "wd"
    (wd / "out").mkdir(parents=True)
    (wd / "pane.txt").write_text("last screen")
    (wd / "transcript.jsonl").write_text("{}\n")
    got = collect(wd, pane_text=None, transcript_src=tmp_path / "gone.jsonl", subagents_src=None, cwd=tmp_path,
                  before=None, exclude=[wd])
    assert got.complete and (wd / "pane.txt").read_text() == "last screen"


def test_a_cwd_inside_an_excluded_folder_is_still_snapshotted_whole(tmp_path):
    """A run --plan trial works in <workdir>/cwd while the workdir is excluded: its nested files must count."""
    wd = tmp_path / "eval" / "p" / "s" / "live-trial" / "r1"
    cwd = wd / "cwd"
    (cwd / "sub" / "deeper").mkdir(parents=True)
    (cwd / "top.txt").write_text("1")
    (cwd / "sub" / "deeper" / "nested.txt").write_text("2")
    (wd / "task.md").write_text("not in the cwd")
    snap = snapshot_cwd(cwd, exclude=[tmp_path / "eval", wd])
    assert sorted(snap) == ["sub/deeper/nested.txt", "top.txt"]
    inner = cwd / "sub"
    assert sorted(snapshot_cwd(cwd, exclude=[wd, inner])) == ["top.txt"]     # an exclude inside the cwd still works
