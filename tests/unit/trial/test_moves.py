"""What collect copies into ``moved-from/`` (README "What a trial leaves behind"): only the transcripts poll-state.json
names that lie in the CLI's projects folder of the session's config; poll-state.json is in the workdir the session can
write, and a path it names elsewhere (the author's files, another trial's transcript) is never copied and sealed as
the session's record."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from live_trial.trial.facts import Facts
from live_trial.trial.moves import collect_moved, moved_source
from live_trial.workdir_files import Workdir
from tests.unit.fakes import write_poll_state

OLD = "11111111-2222-4333-8444-555555555555"
NEW = "66666666-7777-4888-9999-000000000000"


def _config(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "config"
    folder = config / "projects" / "-tmp-cwd"
    folder.mkdir(parents=True)
    (folder / f"{OLD}.jsonl").write_text('{"type": "user"}\n')
    return config, folder


def _move(path: Path, sid: str | None = OLD) -> dict:
    return {"from_session_id": sid, "to_session_id": NEW, "from_path": str(path), "to_path": "/x",
            "at": "2026-11-30T10:15:00.000Z"}


def test_a_transcript_of_this_sessions_config_is_its_source(tmp_path):
    config, folder = _config(tmp_path)
    assert moved_source(_move(folder / f"{OLD}.jsonl"), config) == (folder / f"{OLD}.jsonl").resolve()
    assert moved_source(_move(folder / f"{OLD}.jsonl", sid=None), config) == (folder / f"{OLD}.jsonl").resolve()


def test_a_path_elsewhere_is_never_a_source(tmp_path):
    config, folder = _config(tmp_path)
    author = tmp_path / "author" / f"{OLD}.jsonl"                   # a file named like one, outside projects/
    author.parent.mkdir()
    author.write_text("secret\n")
    link = folder / f"{NEW}.jsonl"                                   # a link in projects/ that leads out
    link.symlink_to(author)
    other = config / "projects" / "-tmp-other"
    other.mkdir()
    (other / "notes.txt").write_text("x\n")
    assert moved_source(_move(author), config) is None
    assert moved_source(_move(link, sid=NEW), config) is None
    assert moved_source(_move(other / "notes.txt", sid=None), config) is None              # not a session's file
    assert moved_source(_move(folder / f"{OLD}.jsonl", sid="../../x"), config) is None    # no session id
    assert moved_source(_move(folder / f"{OLD}.jsonl", sid=NEW), config) is None          # not the session named
    assert moved_source(_move(config / "projects" / f"{OLD}.jsonl"), config) is None      # not in a project folder


def test_collect_copies_only_the_sessions_own_transcripts_and_says_what_it_left_out(tmp_path):
    config, folder = _config(tmp_path)
    wd = Workdir.of(tmp_path / "wd")
    wd.root.mkdir()
    author = tmp_path / "author.jsonl"
    author.write_text("the author's file\n")
    write_poll_state(wd.root, "DONE")
    doc = json.loads(wd.poll_state.read_text())
    doc["moves"] = [_move(folder / f"{OLD}.jsonl"), _move(author, sid=NEW)]
    wd.poll_state.write_text(json.dumps(doc))
    logged: list = []
    trial = SimpleNamespace(wd=wd, facts=Facts(), config_dir=lambda: config,
                            journal=SimpleNamespace(log=lambda *a, **k: logged.append((a, k))))
    assert collect_moved(trial) == [f"{OLD}.jsonl"]
    assert sorted(p.name for p in wd.moved_from.iterdir()) == [f"{OLD}.jsonl"]
    assert any("not one of this session's CLI" in n and str(author) in n for n in trial.facts.notes)
    assert logged and logged[0][0] == ("collect", "moved_from_refused")
