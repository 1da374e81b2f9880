"""``prepare`` and the steps by hand on a prepared workdir (README "The steps, one by one"): what prepare makes (the
same workdir, task.md, trial-state.json and folder snapshot as ``run``), what it prints, and what collect, boot and
kill-session do with it. No tmux here: the steps on the real CLI are in tests/e2e/test_by_hand.py."""
from __future__ import annotations

import hashlib
import json
import os
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest

from live_trial.cli.main import main
from live_trial.errors import RefusedInput
from live_trial.jsonfile import read_json
from live_trial.trial import byhand, folder_steps
from live_trial.trial.facts import TrialRequest
from live_trial.trial.runner import Trial

ROOT = Path(__file__).resolve().parents[3]
PLUGINS = ROOT / "examples" / "plugins"
SCENARIO = ROOT / "examples" / "scenarios" / "greet-happy.yaml"


def prepared(tmp_path: Path, **kw) -> byhand.Prepared:
    req = TrialRequest(target="hello:greet", plugins_root=PLUGINS, eval_root=tmp_path / "eval", args="World",
                       rehearsal=SCENARIO, **kw)
    return byhand.prepare(req, owner_pid=os.getpid(), ttl_s=600)


def test_prepare_makes_what_run_makes_before_boot(tmp_path):
    p = prepared(tmp_path)
    wd = p.workdir
    state = read_json(wd / "trial-state.json", "trial-state.schema.json")
    assert (state["phase"], state["owner_pid"], state["lease_ttl_s"]) == ("prepared", os.getpid(), 600)
    assert state["session"] == f"lt-{wd.name}-greet" and state["cwd"] == str(wd / "cwd")
    assert state["folder"]["form"] == "fresh" and (wd / "cwd").is_dir() and not any((wd / "cwd").iterdir())
    assert json.loads((wd / "cwd-snapshot.json").read_text()) == {"version": 2, "files": {}}
    assert state["cwd_snapshot"] == str(wd / "cwd-snapshot.json")
    task = (wd / "task.md").read_text()
    assert 'Skill({skill: "hello:greet", args: "World"})' in task and f"Completion marker: {wd}/out/status.json" in task
    assert state["rehearsal"]["scenario"] == str(SCENARIO) and 1024 < state["rehearsal"]["port"] < 65536
    trusted = json.loads((wd / "claude-config" / ".claude.json").read_text())["projects"]
    assert trusted[str(wd / "cwd")]["hasTrustDialogAccepted"] is True
    assert state["closure"]["plugin_dirs"] == [str(PLUGINS / "hello")]


def test_refused_input_creates_nothing(tmp_path):
    with pytest.raises(RefusedInput):
        byhand.prepare(TrialRequest(target="hello:nope", plugins_root=PLUGINS, eval_root=tmp_path / "eval",
                                    rehearsal=SCENARIO), owner_pid=1, ttl_s=60)
    assert not (tmp_path / "eval").exists()


def test_the_next_commands_carry_the_real_arguments(tmp_path):
    p = prepared(tmp_path)
    s, wd = p.state, p.workdir
    lines = byhand.next_commands(p, socket="my-sock")
    words = [shlex.split(line) for line in lines if not line.startswith("#") and line != "kill %1"]
    assert [w[1] for w in words] == ["rehearsal", "boot", "send", "poll", "collect", "evaluate", "verdict", "backend",
                                     "reap"]
    serve, boot, send, poll, collect, evaluate, verdict, kill, reap = words
    port = str(s["rehearsal"]["port"])
    assert serve[-1] == "&" and serve[serve.index("--port") + 1] == port
    assert boot[2:4] == [s["session"], s["cwd"]] and boot[boot.index("--workdir") + 1] == str(wd)
    assert boot[boot.index("--session-id") + 1] == s["session_id"]
    assert boot[boot.index("--rehearsal-server") + 1] == f"http://127.0.0.1:{port}"
    assert poll[2:4] == [str(wd / "out" / "status.json"), s["session"]]
    assert poll[poll.index("--state-file") + 1] == str(wd / "poll-state.json")
    assert evaluate[evaluate.index("--rehearsal") + 1] == str(SCENARIO)
    assert verdict[verdict.index("--skill-dir") + 1] == str(PLUGINS / "hello" / "skills" / "greet")
    assert verdict[verdict.index("--args") + 1] == "World"
    assert kill[2:] == ["--socket", "my-sock", "kill-session", s["session"]] and reap[2:] == ["--socket", "my-sock"]
    assert lines[-1] == "kill %1"
    assert verdict[verdict.index("--rehearsal-scenario") + 1] == str(SCENARIO)      # recorded as a rehearsal
    assert byhand.shell_values(p) == {"WORKDIR": str(wd), "SESSION": s["session"], "SESSION_ID": s["session_id"],
                                      "CWD": s["cwd"], "CONFIG_DIR": str(wd / "claude-config"), "PORT": port}


#: The flags ``verdict`` reads from the workdir's records: a printed step that passes one claims what nobody checked
#: (README "The steps, one by one": a verdict by hand earns what it claims).
CLAIMED = ("--launch", "--completion", "--poll-exit", "--goal-result", "--override", "--stop-reason")


def _claims_in(text: str) -> list[str]:
    words = [w for line in text.splitlines() if not line.lstrip().startswith("#") for w in shlex.split(line,
                                                                                                  comments=True)]
    return [w for w in words if w.split("=", 1)[0] in CLAIMED]


@pytest.mark.parametrize("where", ["prepare", "prepare --proof --model", "README by-hand block", "SKILL.md steps"])
def test_no_printed_or_documented_step_passes_a_claim_the_records_decide(tmp_path, where):
    if where.startswith("prepare"):
        p = prepared(tmp_path)
        if "--proof" in where:          # a live proof trial's state (a rehearsal is never a proof)
            p = byhand.Prepared(p.workdir, {**p.state, "proof": True, "model": "claude-opus-4-8", "rehearsal": None},
                                p.skill_dir)
        text = "\n".join(byhand.next_commands(p))
        assert "live-trial verdict " in text
    elif where.startswith("README"):
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        text = readme.split("<!-- by-hand:start -->", 1)[1].split("<!-- by-hand:end -->", 1)[0]
        text = text.split("```bash\n", 1)[1].rsplit("```", 1)[0]
        assert "live-trial verdict " in text
    else:
        skill = ROOT / "claude-plugin" / "live-trial" / "skills" / "run-skill-live-trial" / "SKILL.md"
        text = skill.read_text(encoding="utf-8").split("<!-- steps:start -->", 1)[1].split("<!-- steps:end -->")[0]
        text = text.split("```bash\n", 1)[1].rsplit("```", 1)[0].replace("[", " ").replace("]", " ")
        assert "live-trial verdict " in text
    assert _claims_in(text.replace("\\\n", " ")) == [], where


def test_prepare_prints_pasteable_values_and_commands(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["prepare", "hello:greet", "--plugins-root", str(PLUGINS), "--rehearsal", str(SCENARIO),
                 "--owner-pid", str(os.getpid()), "--ttl", "90"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0].startswith("PREPARED: hello:greet in ")
    values = dict(line.split("=", 1) for line in out if line[:1].isupper() and "=" in line.split(" ")[0])
    wd = Path(shlex.split(values["WORKDIR"])[0])
    assert wd.parent == tmp_path / "eval-log" / "hello" / "greet" / "live-trial"
    assert f"while pid {os.getpid()} " in "\n".join(out) and "for 90 s after its last step" in "\n".join(out)
    assert any(line.startswith("live-trial boot ") for line in out)


def test_boot_refuses_a_workdir_of_another_session_folder_or_target(tmp_path):
    p = prepared(tmp_path)
    s = p.state
    assert byhand.prepared_state(p.workdir, s["session"], cwd=Path(s["cwd"]), target="hello:greet") == s
    for kw, code in ((dict(session="lt-20261130T101500-abcd-greet"), "session_mismatch"),
                     (dict(session=s["session"], cwd=tmp_path), "cwd_mismatch"),
                     (dict(session=s["session"], target="hello:other"), "target_mismatch")):
        session = kw.pop("session")
        with pytest.raises(RefusedInput) as exc:
            byhand.prepared_state(p.workdir, session, **kw)
        assert exc.value.code == code
    with pytest.raises(RefusedInput) as exc:
        byhand.prepared_state(tmp_path, s["session"])
    assert exc.value.code == "not_prepared"


def test_collect_measures_the_side_effects_against_the_snapshot_each_time(tmp_path):
    p = prepared(tmp_path)
    cwd = Path(p.state["cwd"])
    (cwd / "greeting.txt").write_text("Hello, World!\n")
    state = byhand.read_state(p.workdir)
    got, notes = byhand.collect_by_hand(p.workdir, state, pane_text="screen", transcript=None, cwd=cwd)
    assert notes == [] and got.missing == ["transcript.jsonl"]
    assert (p.workdir / "side-effects" / "files" / "greeting.txt").read_text() == "Hello, World!\n"
    assert byhand.read_state(p.workdir)["folder"]["recorded"] is True
    (cwd / "more.txt").write_text("x\n")                      # the session still runs: a second collect sees it
    got, _ = byhand.collect_by_hand(p.workdir, byhand.read_state(p.workdir), pane_text=None, transcript=None, cwd=cwd)
    assert got.side_effects["added"] == 2


def _author_files_made_to_look_new(p: byhand.Prepared) -> None:
    """What a session could do to the snapshot at start (it can write the workdir): drop a file that was there, so the
    author's file would look like one the session made."""
    snap = p.workdir / "cwd-snapshot.json"
    doc = json.loads(snap.read_text())
    doc["files"].pop("notes.txt")
    snap.write_text(json.dumps(doc))


def _prepared_with_an_authors_file(tmp_path: Path) -> byhand.Prepared:
    source = tmp_path / "src"
    source.mkdir()
    (source / "notes.txt").write_text("the author's notes\n")
    return prepared(tmp_path, folder="copy", source=source)


def test_the_snapshot_at_start_is_recorded_with_its_digest(tmp_path):
    p = _prepared_with_an_authors_file(tmp_path)
    digest = byhand.read_state(p.workdir)["cwd_snapshot_sha256"]
    assert digest == "sha256:" + hashlib.sha256((p.workdir / "cwd-snapshot.json").read_bytes()).hexdigest()


def test_collect_never_measures_against_a_snapshot_changed_since_it_was_written(tmp_path):
    p = _prepared_with_an_authors_file(tmp_path)
    _author_files_made_to_look_new(p)
    state = byhand.read_state(p.workdir)
    cwd = Path(state["folder"]["path"])
    assert (cwd / "notes.txt").is_file()
    got, notes = byhand.collect_by_hand(p.workdir, state, pane_text="screen", transcript=None, cwd=cwd)
    assert not got.complete and "cwd-snapshot.json" in got.missing
    assert len(notes) == 1 and "cwd-snapshot.json (the trial folder at start) is not the file written then" in notes[0]
    assert not (p.workdir / "side-effects" / "files" / "notes.txt").exists()     # never the session's side effect


def test_run_stops_as_records_tampered_when_the_snapshot_changed(tmp_path):
    """``run``'s collect (trial/held.py) checks the digest it keeps in memory: records_tampered, the skill's doing."""
    from live_trial.trial import held
    from live_trial.trial.facts import Facts
    from live_trial.trial.state import TrialState

    p = _prepared_with_an_authors_file(tmp_path)
    state = TrialState.load(p.workdir / "trial-state.json")
    logged: list = []
    trial = SimpleNamespace(state=state, facts=Facts(completion="PASS"),
                            journal=SimpleNamespace(log=lambda *a, **k: logged.append((a, k))))
    held.snapshot_changed(trial)
    assert (trial.facts.completion, trial.facts.stop_reason, logged) == ("PASS", None, [])     # it holds
    _author_files_made_to_look_new(p)
    held.snapshot_changed(trial)
    assert (trial.facts.completion, trial.facts.stop_reason) == ("FAIL", "records_tampered")
    assert "cwd-snapshot.json" in trial.facts.notes[0]
    assert logged[0][0] == ("records", "records_tampered") and logged[0][1]["when"] == "at_collect"
    kw = folder_steps.changes_since_start(state.to_doc(), p.workdir, tmp_path / "eval", Path(p.state["cwd"]))
    assert (kw["before"], kw["cwd"]) == (None, None)                                    # nothing measured


def test_collect_without_a_snapshot_is_partial_and_says_why(tmp_path):
    wd = tmp_path / "wd"
    (wd / "out").mkdir(parents=True)
    (wd / "task.md").write_text("task\n")
    (tmp_path / "folder").mkdir()
    got, notes = byhand.collect_by_hand(wd, None, pane_text="screen", transcript=None, cwd=tmp_path / "folder")
    assert not got.complete and "cwd-snapshot.json" in got.missing
    assert notes == [byhand.NO_SNAPSHOT] and "side effects cannot be known" in notes[0]
    assert not (wd / "side-effects" / "files.json").exists()


def test_kill_session_removes_a_copy_only_once_its_side_effects_are_collected(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("a\n")
    p = prepared(tmp_path, folder="copy", source=source)
    copy = p.workdir / "cwd"
    assert (copy / "a.txt").read_text() == "a\n" and any("backend kill-session" in n for n in p.notes)
    removed, kept = byhand.release_copy(p.workdir)
    assert removed is None and "not collected yet" in kept and copy.is_dir()
    byhand.collect_by_hand(p.workdir, byhand.read_state(p.workdir), pane_text=None, transcript=None, cwd=copy)
    removed, kept = byhand.release_copy(p.workdir)
    assert removed == copy and kept is None and not copy.exists()
    assert byhand.read_state(p.workdir)["folder"]["removed"] is True and (source / "a.txt").is_file()


def test_run_resume_refuses_a_prepared_workdir(tmp_path):
    p = prepared(tmp_path)
    with pytest.raises(RefusedInput) as exc:
        Trial(TrialRequest(target="")).resume(p.workdir)
    assert exc.value.code == "driven_by_hand"
