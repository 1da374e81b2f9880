"""Hook commands are read as the shell reads them (seed 001 skill_dir_tree_sha): quotes, ${CLAUDE_PLUGIN_ROOT} inside them,
interpreters followed by a script and arguments; a command it cannot read is a note, never a refusal; a named script
that is missing is still refused."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from live_trial.closure.hook_commands import hook_commands, read_hook_command
from live_trial.closure.manifest import ClosureError
from live_trial.closure.pinning import closure_files, pin
from live_trial.closure.target import resolve_target

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "plugins" / "union"


@pytest.mark.parametrize("command, script, arguments", [
    ('sh "${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh"', "hooks/stop-once.sh", ()),
    ("sh '${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh'", "hooks/stop-once.sh", ()),
    ('bash "$CLAUDE_PLUGIN_ROOT/hooks/a b.sh" --quiet', "hooks/a b.sh", ()),
    ("${CLAUDE_PLUGIN_ROOT}/hooks/run.sh arg", "hooks/run.sh", ()),
    ('node "${CLAUDE_PLUGIN_ROOT}/hooks/x.js" "${CLAUDE_PLUGIN_ROOT}/conf/x.json"', "hooks/x.js", ("conf/x.json",)),
    ('python3 -u "${CLAUDE_PLUGIN_ROOT}/tools/check.py" --out=${CLAUDE_PLUGIN_ROOT}/out.txt', "tools/check.py",
     ("out.txt",)),
    ("python ${CLAUDE_PLUGIN_ROOT}/tools/check.py", "tools/check.py", ()),
    ("/usr/bin/python3 ${CLAUDE_PLUGIN_ROOT}/tools/check.py", "tools/check.py", ()),
    ("MODE=strict sh ${CLAUDE_PLUGIN_ROOT}/hooks/s.sh", "hooks/s.sh", ()),
    ("echo done", None, ()),
])
def test_a_command_names_its_script_and_arguments(command: str, script: str | None, arguments: tuple) -> None:
    read = read_hook_command(command)
    assert (read.script, read.arguments, read.unsure) == (script, arguments, None)


@pytest.mark.parametrize("command, why", [
    ("cat x | sh ${CLAUDE_PLUGIN_ROOT}/hooks/h.sh", "pipe"),
    ("sh ${CLAUDE_PLUGIN_ROOT}/hooks/a.sh && sh ${CLAUDE_PLUGIN_ROOT}/hooks/b.sh", "pipe"),
    ('sh "$(dirname $0)/x.sh"', "substitution"),
    ("sh `pwd`/x.sh", "substitution"),
    ("sh $HOME/hooks/x.sh", "variable"),
    ('bash -c "sh ${CLAUDE_PLUGIN_ROOT}/hooks/x.sh"', "inline"),
    ('sh "${CLAUDE_PLUGIN_ROOT}/hooks/x.sh', "split"),
])
def test_a_command_it_cannot_read_says_why(command: str, why: str) -> None:
    read = read_hook_command(command)
    assert read.script is None and read.unsure is not None and why in read.unsure


def test_an_unsure_command_keeps_the_paths_it_mentions() -> None:
    read = read_hook_command('cat x | sh "${CLAUDE_PLUGIN_ROOT}/hooks/h.sh"')
    assert read.mentioned == ("hooks/h.sh",)


def test_hook_commands_finds_every_command_of_a_hooks_document() -> None:
    doc = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}, {"type": "command", "command": "b"}]}],
                     "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "c"}]}]}}
    assert list(hook_commands(doc)) == ["a", "b", "c"]


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    dst = tmp_path / "plugins"
    shutil.copytree(FIXTURE, dst)
    return dst


def hooks_json(root: Path, *commands: str) -> None:
    doc = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": c} for c in commands]}]}}
    (root / "union-target" / "hooks" / "hooks.json").write_text(json.dumps(doc), encoding="utf-8")


def rels(files) -> set[str]:
    return {f"{label}/{rel}" for label, rel, _ in files}


def test_a_quoted_hook_command_is_pinned_not_refused(root: Path) -> None:
    (root / "union-target" / "hooks" / "stop-once.sh").write_text("exit 0\n")
    (root / "union-target" / "tools" / "lib.sh").write_text("true\n")
    hooks_json(root, 'sh "${CLAUDE_PLUGIN_ROOT}/tools/lib.sh"', 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/stop-once.sh"')
    pinned = pin(resolve_target("union-target:work", root), root)
    assert {"union-target/tools/lib.sh", "union-target/hooks/stop-once.sh"} <= rels(pinned.files)
    assert pinned.notes == ()


def test_a_quoted_script_that_is_missing_is_still_refused(root: Path) -> None:
    hooks_json(root, 'sh "${CLAUDE_PLUGIN_ROOT}/tools/gone.sh"')
    with pytest.raises(ClosureError) as exc:
        closure_files(resolve_target("union-target:work", root), root)
    assert "missing file named by a hook command" in exc.value.message
    assert exc.value.where.endswith("tools/gone.sh")


def test_a_command_it_cannot_read_is_a_note_never_a_refusal(root: Path) -> None:
    (root / "union-target" / "tools" / "lib.sh").write_text("true\n")
    hooks_json(root, 'cat /dev/null | sh "${CLAUDE_PLUGIN_ROOT}/tools/lib.sh" "${CLAUDE_PLUGIN_ROOT}/tools/gone.txt"')
    pinned = pin(resolve_target("union-target:work", root), root)
    assert "union-target/tools/lib.sh" in rels(pinned.files)
    assert len(pinned.notes) == 1 and "whole hooks/ folder" in pinned.notes[0] and "pipe" in pinned.notes[0]


def test_a_missing_argument_file_is_not_refused(root: Path) -> None:
    (root / "union-target" / "hooks" / "log.sh").write_text("true\n")
    hooks_json(root, 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/log.sh" "${CLAUDE_PLUGIN_ROOT}/state/written-later.log"')
    assert "union-target/hooks/log.sh" in rels(closure_files(resolve_target("union-target:work", root), root))


def test_the_verdict_says_when_a_hook_command_could_not_be_read(root: Path, tmp_path: Path) -> None:
    from live_trial.acceptance.verdict import build_verdict

    hooks_json(root, 'cat /dev/null | sh "${CLAUDE_PLUGIN_ROOT}/tools/stop_check.py"')
    wd = tmp_path / "eval-log" / "union-target" / "work" / "live-trial" / "20261202T090000-aaaa"
    wd.mkdir(parents=True)
    doc = build_verdict(workdir=wd, target=resolve_target("union-target:work", root), plugins_root=root,
                        session_id=None, requested_model=None, launch="PASS", completion="PASS", goal_result=None,
                        poll_exit="DONE", claude_version="2.1.332", tmux_version="3.3a")
    assert [n for n in doc["notes"] if "could not be read as the shell reads it" in n and "hooks/" in n]
