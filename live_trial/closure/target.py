"""Resolve a trial target (``plugin:skill``, a plain skill name, or a skill folder) to its folder and frontmatter.

Bad targets are refused before anything is created (exit 2), listing what exists; a malformed manifest or frontmatter
is a :class:`~live_trial.closure.manifest.ClosureError` (seed 001 rule 3: fail closed).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from live_trial.closure.index import MANIFEST, PluginIndex, Target, as_index, skills_of
from live_trial.closure.manifest import NAME_RE, read_frontmatter, read_json_object
from live_trial.errors import RefusedInput


def resolve_target(target: str, plugins_root: Path | PluginIndex) -> Target:
    """Resolve ``plugin:skill`` (or a plain ``skill``) to its folder and frontmatter.

    ``plugin:skill`` -> ``<plugin root>/skills/<skill>/SKILL.md``. A plain name is looked up in
    ``<plugins_root>/.claude/skills``, ``<plugins_root>/skills`` and then in each plugin (must be unique);
    it gets no plugin pinning. Raises :class:`RefusedInput` (exit 2, nothing created) for a malformed
    target, an unknown plugin or a missing skill, listing what is known; :class:`ClosureError` for a
    malformed manifest or frontmatter (the target's own: another plugin's broken manifest under the same root
    changes nothing here).
    """
    index = as_index(plugins_root)
    if not isinstance(target, str) or target.count(":") > 1:
        raise RefusedInput(f"target {target!r} is not 'plugin:skill' or 'skill'", code="bad_target",
                           fix="pass e.g. hello:greet")
    plugin, _, skill = target.rpartition(":")
    for part, what in ((plugin, "plugin"), (skill, "skill")):
        if (part or what == "skill") and not NAME_RE.match(part):
            raise RefusedInput(f"{what} name {part!r} in target {target!r} has unsafe characters", code="bad_target",
                               fix="use letters, digits, '.', '_' and '-'")
    if plugin:
        if plugin not in index.plugins:
            broken = index.broken_named(plugin)
            if broken is not None:
                raise broken
            known = ", ".join(sorted(index.plugins)) or "none"
            raise RefusedInput(f"unknown plugin '{plugin}' under {index.root}", code="unknown_plugin",
                               fix=f"known plugins: {known}; or pass --plugins-root{index.broken_hint()}")
        root = index.plugins[plugin]
        skill_dir = root / "skills" / skill
        if not (skill_dir / "SKILL.md").is_file():
            known = ", ".join(skills_of(root)) or "none"
            raise RefusedInput(f"plugin '{plugin}' has no skill '{skill}'", where=str(skill_dir / "SKILL.md"),
                               code="unknown_skill", fix=f"skills of {plugin}: {known}")
        return Target(plugin, root, skill, skill_dir, skill_dir / "SKILL.md", read_frontmatter(skill_dir / "SKILL.md"))
    candidates = [index.root / ".claude" / "skills" / skill, index.root / "skills" / skill]
    found = next((c for c in candidates if (c / "SKILL.md").is_file()), None)
    if found is None:
        owners = [n for n, r in sorted(index.plugins.items()) if (r / "skills" / skill / "SKILL.md").is_file()]
        if len(owners) > 1:
            raise RefusedInput(f"skill '{skill}' is in several plugins: {', '.join(owners)}", code="ambiguous_skill",
                               fix=f"qualify it, e.g. {owners[0]}:{skill}")
        if not owners:
            raise RefusedInput(f"skill '{skill}' not found under {index.root}", code="unknown_skill",
                               fix="pass plugin:skill (known plugins: "
                                   f"{', '.join(sorted(index.plugins)) or 'none'}) or --plugins-root")
        found = index.plugins[owners[0]] / "skills" / skill
    skill_dir = found.resolve()
    return Target(None, None, skill, skill_dir, skill_dir / "SKILL.md", read_frontmatter(skill_dir / "SKILL.md"))


def target_from_skill_dir(skill_dir: Path, plugins_root: Path | None = None) -> tuple[Target, PluginIndex | None]:
    """Resolve a target from its skill folder (the verdict CLI's ``--skill-dir``).

    When ``<skill_dir>/../..`` holds ``.claude-plugin/plugin.json`` the target is ``plugin:skill`` and the
    plugins root defaults to that plugin's parent folder. Raises :class:`RefusedInput` when there is no SKILL.md.
    """
    skill_dir = Path(skill_dir).resolve()
    if not (skill_dir / "SKILL.md").is_file():
        raise RefusedInput("no SKILL.md in the skill folder", where=str(skill_dir), code="unknown_skill",
                           fix="pass --skill-dir <folder holding SKILL.md>")
    plugin_root = skill_dir.parent.parent
    if skill_dir.parent.name == "skills" and (plugin_root / MANIFEST).is_file():
        index = PluginIndex(plugins_root or plugin_root.parent)
        name: Any = read_json_object(plugin_root / MANIFEST, "plugin.json").get("name")     # parsed JSON
        if index.plugins.get(name) != plugin_root:
            raise RefusedInput(f"plugin at {plugin_root} is not found under plugins root {index.root}",
                               code="plugins_root", fix="pass --plugins-root <folder that holds it>")
        return resolve_target(f"{name}:{skill_dir.name}", index), index
    return Target(None, None, skill_dir.name, skill_dir, skill_dir / "SKILL.md",
                  read_frontmatter(skill_dir / "SKILL.md")), None
