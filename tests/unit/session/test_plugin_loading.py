"""The plugin under trial is loaded: the CLI's validator before boot (``session.plugin_check``), the skill listing at
the first prompt (``trial.loading``), and a Skill call the CLI resolved to the target (``transcript.skill_calls``)."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from live_trial.errors import BootFail
from live_trial.session import plugin_check as pc
from live_trial.transcript.builder import TranscriptBuilder
from live_trial.transcript.reader import read_records
from live_trial.trial import loading
from live_trial.transcript.skill_calls import skill_calls
from tests.unit.fakes import trial_state

REAL = Path(__file__).parents[1] / "transcripts"

# what claude 2.1.197 `plugin validate` printed (references/transcript-jsonl.md "Plugins")
VERSION_NUMBER = """Validating plugin manifest: {d}/.claude-plugin/plugin.json

✘ Found 1 error:

  ❯ version: Invalid input: expected string, received number

✘ Validation failed
"""
WARNINGS_ONLY = """Validating plugin manifest: {d}/.claude-plugin/plugin.json

⚠ Found 2 warnings:

  ❯ description: No description provided. Adding a description helps users understand what your plugin does
  ❯ author: No author information provided. Consider adding author details for plugin attribution

✔ Validation passed with warnings
"""
SKILL_ERROR = """Validating plugin manifest: {d}/.claude-plugin/plugin.json

⚠ Found 1 warning:

  ❯ author: No author information provided. Consider adding author details for plugin attribution

Validating skill: {d}/skills/hello/SKILL.md

✘ Found 1 error:

  ❯ frontmatter: YAML frontmatter failed to parse: YAML Parse error: Unexpected token.

✘ Validation failed
"""


def test_parse_output_pairs_each_line_with_its_file(tmp_path):
    d = tmp_path / "p"
    errors, warnings = pc.parse_output(SKILL_ERROR.format(d=d), d)
    assert errors == [(f"{d}/skills/hello/SKILL.md", "frontmatter: YAML frontmatter failed to parse: YAML Parse error: "
                                                     "Unexpected token.")]
    assert warnings == [(f"{d}/.claude-plugin/plugin.json", "author: No author information provided. Consider adding "
                                                            "author details for plugin attribution")]
    assert pc.parse_output(WARNINGS_ONLY.format(d=d), d)[0] == []


def _fake_claude(tmp_path: Path, outputs: dict[str, tuple[str, int]]) -> str:
    """A stand-in ``claude`` that prints the recorded validator output for each plugin folder name and records the
    CLAUDE_CONFIG_DIR it was given."""
    script = tmp_path / "claude"
    for name, (text, _code) in outputs.items():
        (tmp_path / f"{name}.out").write_text(text)
    cases = "\n".join(f"  */{name}) cat {tmp_path}/{name}.out; echo \"$CLAUDE_CONFIG_DIR\" >> {tmp_path}/configs; "
                      f"exit {code};;" for name, (_text, code) in outputs.items())
    script.write_text(f"#!/bin/bash\ncase \"$3\" in\n{cases}\n  *) echo 'error: unknown command'; exit 2;;\nesac\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_an_error_is_boot_fail_plugin_not_loaded_naming_the_line_and_file(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    claude = _fake_claude(tmp_path, {"good": (WARNINGS_ONLY.format(d=good), 0), "bad": (VERSION_NUMBER.format(d=bad), 1)})
    with pytest.raises(BootFail) as err:
        pc.check_plugins(claude, [good, bad], dict(os.environ))
    assert err.value.code == "plugin_not_loaded"
    assert "version: Invalid input: expected string, received number" in err.value.message
    assert f"{bad}/.claude-plugin/plugin.json" in err.value.message
    configs = (tmp_path / "configs").read_text().split()
    assert len(configs) == 2 and len(set(configs)) == 2 and not any(Path(c).exists() for c in configs)


def test_warnings_are_returned_and_a_validator_that_cannot_be_used_is_only_a_warning(tmp_path):
    good, odd = tmp_path / "good", tmp_path / "odd"
    claude = _fake_claude(tmp_path, {"good": (WARNINGS_ONLY.format(d=good), 0)})
    warnings = pc.check_plugins(claude, [good, odd], dict(os.environ))
    assert warnings[0].startswith("plugin good: description: No description provided")
    assert warnings[-1].startswith("plugin odd: the CLI's plugin validator could not be used (exit 2")


def test_skill_listing_and_the_likely_cause(tmp_path):
    recs = read_records(REAL / "bg-shell-ctrl-b.jsonl").records
    assert "update-config" in loading.skill_listing(recs) and loading.skill_listing([]) is None
    target = SimpleNamespace(plugin_name="a", skill="mark", qualified="a:mark", frontmatter={})
    for name, deps in (("a", ["b"]), ("b", ["c"])):
        (tmp_path / name / ".claude-plugin").mkdir(parents=True)
        (tmp_path / name / ".claude-plugin" / "plugin.json").write_text(f'{{"name": "{name}", "dependencies": {deps!r}}}'
                                                                         .replace("'", '"'))
    dirs = [tmp_path / "a", tmp_path / "b"]
    assert loading.missing_dependencies(dirs) == [("b", "c")]
    assert "b needs c" in loading.likely_cause(target, ["init"], dirs)
    assert "loaded plugin a but not its skill mark" in loading.likely_cause(target, ["a:other"], dirs)
    hidden = SimpleNamespace(**{**vars(target), "frontmatter": {"disable-model-invocation": True}})
    assert "disable-model-invocation" in loading.likely_cause(hidden, ["init"], dirs)
    assert "validator found none" in loading.likely_cause(target, ["init"], [])


class _Trial:
    def __init__(self, transcript: Path, qualified="trialkit:mark"):
        plugin, skill = qualified.split(":")
        self.target = SimpleNamespace(plugin_name=plugin, skill=skill, qualified=qualified, frontmatter={})
        self.keys: list[str] = []
        self.backend = SimpleNamespace(send_keys=lambda session, key: self.keys.append(key))
        self.state = trial_state(session="lt-x", closure={"plugin_dirs": []})
        self.facts = SimpleNamespace(warnings=[])
        self.logged: list[tuple] = []
        self.journal = SimpleNamespace(log=lambda *a, **k: self.logged.append((a, k)))
        self.clock = 0.0
        self._path = transcript

    def transcript_path(self):
        return self._path

    def sleep(self, s):
        self.clock += s


def _listing(tmp_path: Path, names: list[str]) -> Path:
    b = TranscriptBuilder()
    b.prompt("task")
    b.attachment("skill_listing", names=names, skillCount=len(names), isInitial=True, content="")
    return b.write(tmp_path / "t.jsonl")


def test_the_target_in_the_listing_passes_and_a_missing_one_stops_at_once(tmp_path):
    trial = _Trial(_listing(tmp_path, ["init", "trialkit:mark"]))
    assert loading.require_target_listed(trial, clock=lambda: trial.clock) == 0.0
    trial = _Trial(_listing(tmp_path, ["init"]))
    with pytest.raises(loading.PluginNotLoaded) as err:
        loading.require_target_listed(trial, clock=lambda: trial.clock)
    assert err.value.code == "plugin_not_loaded" and trial.keys == ["Escape"]
    assert "skill listing does not name it" in err.value.message


def test_a_skill_hidden_from_the_model_is_named_so_never_a_plugin_the_cli_did_not_load(tmp_path):
    """``disable-model-invocation: true``: on 2.1.197 and 2.1.332 the CLI loads the plugin (its other skills are
    listed), leaves the skill out of the listing and its Skill tool refuses the call (references/transcript-jsonl.md
    "A skill hidden from the model"). The stop, its summary and its message say that, not "did not load the plugin"."""
    from live_trial.notices.outcome import summary

    trial = _Trial(_listing(tmp_path, ["init", "trialkit:mark", "trialkit:report"]), qualified="trialkit:hidden")
    trial.target.frontmatter = {"name": "hidden", "disable-model-invocation": True}
    with pytest.raises(loading.SkillHidden) as err:
        loading.require_target_listed(trial, clock=lambda: trial.clock)
    assert err.value.code == "skill_hidden" and trial.keys == ["Escape"]
    assert "refuses to call it" in err.value.message and "did not load" not in err.value.message, err.value.message
    said = summary({"target": "trialkit:hidden", "overall": {"verdict": "FAIL"}, "stop_reason": "skill_hidden",
                    "poll_exit": None, "launch": "FAIL", "completion": "FAIL"}, "en")
    assert "only a person typing its command can start it" in said and "did not load" not in said, said


def test_no_listing_is_a_warning_after_the_wait_and_a_plain_skill_is_not_checked(tmp_path):
    b = TranscriptBuilder()
    b.prompt("task")
    trial = _Trial(b.write(tmp_path / "t.jsonl"))
    assert loading.require_target_listed(trial, clock=lambda: trial.clock) is None
    assert trial.clock > loading.LISTING_WAIT_S and "no skill listing" in trial.facts.warnings[0]
    trial.target.plugin_name = None
    assert loading.require_target_listed(trial) is None


def test_a_bare_name_call_the_cli_resolved_counts_as_the_target():
    """Recorded on 2.1.197: `Skill({skill: "hello"})` with goodplug loaded; the next assistant record names
    goodplug:hello in attributionSkill."""
    assert skill_calls(read_records(REAL / "bare-name-skill.jsonl").records) == [("goodplug:hello", True)]
    b = TranscriptBuilder()
    b.prompt()
    bare = b.tool_use("Skill", {"skill": "mark"})
    b.tool_result(bare, "Launching skill: mark", result={"success": True, "commandName": "mark"})
    b.meta("Base directory for this skill: /p/trialkit/skills/mark", tool_use_id=bare)
    b.message([{"type": "text", "text": "working"}], attributionSkill="trialkit:mark", attributionPlugin="trialkit")
    failed = b.tool_use("Skill", {"skill": "nope"})
    b.tool_result(failed, "Unknown skill: nope", is_error=True)
    b.message([{"type": "text", "text": "x"}], attributionSkill="trialkit:mark")
    unresolved = b.tool_use("Skill", {"skill": "other"})
    b.tool_result(unresolved, "Launching skill: other")
    assert skill_calls(b.records) == [("trialkit:mark", True), ("nope", False), ("other", True)]


# ------------------------------------------------------------------ the validator's answers are kept
def _plugin(root: Path, name: str) -> Path:
    (root / name / ".claude-plugin").mkdir(parents=True)
    (root / name / ".claude-plugin" / "plugin.json").write_text(f'{{"name": "{name}"}}')
    (root / name / "skills" / "s").mkdir(parents=True)
    (root / name / "skills" / "s" / "SKILL.md").write_text("---\nname: s\n---\nDo it.\n")
    return root / name


def test_an_unchanged_plugin_is_not_validated_again(tmp_path, monkeypatch):
    monkeypatch.setenv("LIVE_TRIAL_CACHE_DIR", str(tmp_path / "cache"))
    plugins = tmp_path / "plugins"
    good, bad = _plugin(plugins, "good"), _plugin(plugins, "bad")
    claude = _fake_claude(tmp_path, {"good": (WARNINGS_ONLY.format(d=good), 0), "bad": (VERSION_NUMBER.format(d=bad), 1)})

    def runs() -> int:
        configs = tmp_path / "configs"
        return len(configs.read_text().split()) if configs.exists() else 0

    first = pc.validate_plugins(claude, [good, bad], dict(os.environ))
    assert runs() == 2 and not any(r.cached for r in first)
    again = pc.validate_plugins(claude, [good, bad], dict(os.environ))
    assert runs() == 2 and all(r.cached for r in again)
    assert [(r.exit_code, r.errors, r.warnings) for r in again] == [(r.exit_code, r.errors, r.warnings) for r in first]
    with pytest.raises(BootFail) as err:                      # a kept error still fails the boot, with the same line
        pc.check_plugins(claude, [good, bad], dict(os.environ))
    assert "version: Invalid input" in err.value.message and runs() == 2
    # what the validator reads changed: asked again, for that plugin only
    (good / "skills" / "s" / "SKILL.md").write_text("---\nname: s\ndescription: now described\n---\n")
    pc.validate_plugins(claude, [good, bad], dict(os.environ))
    assert runs() == 3
    (bad / "agents").mkdir()
    (bad / "agents" / "helper.md").write_text("an agent")
    pc.validate_plugins(claude, [good, bad], dict(os.environ))
    assert runs() == 4
    # another claude executable (an update): everything asked again
    os.utime(claude, ns=(1, 1))
    pc.validate_plugins(claude, [good, bad], dict(os.environ))
    assert runs() == 6


def test_a_validator_that_could_not_be_used_is_asked_again_and_a_bad_cache_is_ignored(tmp_path, monkeypatch):
    from live_trial.jsonfile import read_json

    cache = tmp_path / "cache"
    monkeypatch.setenv("LIVE_TRIAL_CACHE_DIR", str(cache))
    odd = _plugin(tmp_path / "plugins", "odd")
    claude = _fake_claude(tmp_path, {})                       # prints "unknown command", exit 2
    assert pc.validate_plugins(claude, [odd], dict(os.environ))[0].problem
    assert pc.validate_plugins(claude, [odd], dict(os.environ))[0].cached is False
    cache.mkdir(exist_ok=True)
    (cache / pc.CACHE_FILE).write_text('{"version": 1, "entries": {"x": 1}}')
    good = _plugin(tmp_path / "plugins", "good")
    claude = _fake_claude(tmp_path, {"good": (WARNINGS_ONLY.format(d=good), 0)})
    assert pc.validate_plugins(claude, [good], dict(os.environ))[0].cached is False
    doc = read_json(cache / pc.CACHE_FILE, pc.CACHE_SCHEMA)
    assert len(doc["entries"]) == 1 and next(iter(doc["entries"].values()))["plugin_dir"] == str(good)
    assert pc.validate_plugins(claude, [good], dict(os.environ))[0].cached is True


def test_the_launch_check_s_streamed_records_resolve_a_bare_name_call_too(tmp_path):
    """The launch check reads only the records it needs, cut down (it never holds a whole transcript): the assistant
    record naming the resolved skill is one of them, in the recorded session and in a built one."""
    from live_trial.transcript.skill_calls import skill_call_records

    assert skill_calls(skill_call_records(REAL / "bare-name-skill.jsonl")) == [("goodplug:hello", True)]
    b = TranscriptBuilder()
    b.prompt()
    bare = b.tool_use("Skill", {"skill": "mark"})
    b.tool_result(bare, "Launching skill: mark", result={"success": True, "commandName": "mark"})
    b.message([{"type": "text", "text": "working " * 1000}], attributionSkill="trialkit:mark")
    unresolved = b.tool_use("Skill", {"skill": "other"})
    b.tool_result(unresolved, "Launching skill: other")
    b.text("DONE: ok")
    kept = skill_call_records(b.write(tmp_path / "t.jsonl"))
    assert skill_calls(kept) == [("trialkit:mark", True), ("other", True)]
    assert all(len(json.dumps(r)) < 1000 for r in kept)
