"""A plugin with two dependencies (one from plugin.json, one from package-contract narrowed to the skill) loads
exactly those plugins: shown by the transcript's skill listing, and the closure returns the same set (seed 001 rule 3)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from live_trial.closure.pinning import dependency_union
from live_trial.closure.target import resolve_target
from live_trial.session import send
from live_trial.transcript.paths import locate
from live_trial.transcript.reader import read_records

from .session_support import PLAIN_SCENARIO, TrackingBackend, boot_rehearsal
from .waiting import wait_for


def _plugin(root: Path, name: str, skill: str, deps=(), contract=None, extra_skills=()):
    (root / name / ".claude-plugin").mkdir(parents=True)
    (root / name / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "0.0.1", "description": f"{name} plugin", "dependencies": list(deps)}))
    for s in (skill, *extra_skills):
        d = root / name / "skills" / s
        d.mkdir(parents=True)
        d.joinpath("SKILL.md").write_text(f"---\nname: {s}\ndescription: Use when testing {name} {s}.\n---\n\nSay hi.\n")
    if contract:
        (root / name / "references").mkdir()
        (root / name / "references" / "package-contract.json").write_text(json.dumps(contract))


@pytest.fixture
def backend():
    b = TrackingBackend()
    yield b
    b.cleanup()


@pytest.mark.budget(6)
def test_two_dependency_union_is_loaded_and_listed(backend, tmp_path, rehearsal_server):
    root = tmp_path / "plugins"
    _plugin(root, "tgt", "run", deps=["manidep"], extra_skills=("other",),
            contract={"entry_points": {"skills": ["run", "other"]}, "depends_on": ["contractdep", "unuseddep"],
                      "skill_dependencies": {"run": ["contractdep"], "other": ["unuseddep"]}})
    _plugin(root, "manidep", "mskill")
    _plugin(root, "contractdep", "cskill")
    _plugin(root, "unuseddep", "uskill")
    _plugin(root, "bystander", "bskill")
    srv = rehearsal_server(PLAIN_SCENARIO)
    result, cwd, cfg = boot_rehearsal(backend, tmp_path, "plugins", srv.url, target="tgt:run", plugins_root=root,
                                      plugin_dirs=None)
    expected = [ref.root for ref in dependency_union(resolve_target("tgt:run", root), root)]
    assert [p.name for p in expected] == ["tgt", "manidep", "contractdep"]
    assert result.plugin_dirs == expected
    assert [result.argv[i + 1] for i, a in enumerate(result.argv) if a == "--plugin-dir"] == [str(p) for p in expected]

    task = tmp_path / "task.md"
    task.write_text("list your skills\n")
    tpath = locate(result.session_id, cwd, cfg)
    send.send_file(backend, result.session, task, transcript_path=tpath)
    listing = wait_for(lambda: [r for r in read_records(tpath).records
                                  if r.get("type") == "attachment"
                                  and (r.get("attachment") or {}).get("type") == "skill_listing"], what="[r for r in read_records(tpath).records if r.get('type') == 'attachment' and (r.get('at...")
    assert listing, "no skill_listing attachment in the transcript"
    text = json.dumps(listing[0]["attachment"])
    plugin_skills = {name for name in ("tgt:run", "tgt:other", "manidep:mskill", "contractdep:cskill",
                                       "unuseddep:uskill", "bystander:bskill") if name in text}
    assert plugin_skills == {"tgt:run", "tgt:other", "manidep:mskill", "contractdep:cskill"}
