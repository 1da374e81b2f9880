"""Plugin manifests, the dependency union and the behaviour closure of a skill (seed 001 rule 3; issue 5).

One function decides which plugins a trial loads (:func:`dependency_union`) and the closure digest
(:func:`closure_files` / :func:`closure_digest`) is computed over exactly that set, so the set boot
loads is the set the verdict's ``skill_dir_tree_sha`` covers (ARCHITECTURE invariant 1). Boot should
call :func:`pin`, which returns both from one computation.

Layout assumed (Claude Code plugins)::

    <plugins_root>/<any dir, depth 1 or 2>/.claude-plugin/plugin.json   {"name": ..., "dependencies": [...]}
    <plugin>/skills/<skill>/SKILL.md                                     frontmatter (YAML)
    <plugin>/references/package-contract.json                            {"entry_points": {"skills": [...]},
                                                                          "depends_on": [...],
                                                                          "skill_dependencies": {skill: [...]}}

Dependency union (seed 001 rule 3): (a) every entry of plugin.json ``dependencies`` (a name, ``name@marketplace``
or ``{"name": ...}``; never narrowed) ∪ (b) package-contract ``depends_on``, narrowed to
``skill_dependencies.<skill>`` when that map exists (a skill not listed there gets no (b) dependencies). Only
direct dependencies. A map key not in ``entry_points.skills`` or a value not in ``depends_on`` is refused.

Behaviour closure (issue 5): of the target plugin — the skill's SKILL.md, its local ``scripts/`` and
``prompts/``, every path in the frontmatter's ``script_refs``/``reference_refs``/``responsibility_refs``/
``schema_refs`` (relative to the skill folder; a folder means all files below it), ``.claude-plugin/*``,
``.mcp.json``, ``hooks/**`` plus any hooks file named in plugin.json and every ``${CLAUDE_PLUGIN_ROOT}/<path>``
a hook command names, and ``references/package-contract.json``; of each dependency in the union — the same
manifest/hooks/contract files, its entry points (``skills/<s>/SKILL.md`` with that skill's ``scripts/`` and
``prompts/``, for the skills in ``entry_points.skills`` or every skill when the contract does not list them;
``agents/*.md``; ``commands/*.md``) and its top-level ``scripts/**`` and ``schemas/**``.

Digest: sha256 over the sorted lines ``<plugin>/<posix relpath>\\0<sha256 hex of content>\\n`` -> ``sha256:<hex>``.
A plain skill name (no plugin) has no plugin pinning; its closure label is ``_`` and paths are relative to the
folder that holds ``skills/`` (or to the skill folder).

Folders walked skip only ``.git`` and ``__pycache__`` (bytecode caches are not behaviour). Not covered (so a
change there does not invalidate a verdict): the rest of a plugin (other skills, docs, ``references/`` files no
ref names), files a script reads at run time without declaring them in a ``*_refs`` field, the user's installed
plugins and settings, the CLI and the model.

Fail closed (:class:`ClosureError`, status BOOT_FAIL, exit 2), never hashed around: a dependency not found
under plugins_root, a missing or malformed manifest/contract/frontmatter, a missing referenced file, a path
leaving its plugin (``..`` or a symlink), a reference into a plugin outside the union.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from live_trial.closure_manifest import (ClosureError, NAME_RE, name_list, read_frontmatter, read_json_object,
                                         validate_contract)
from live_trial.errors import RefusedInput

__all__ = ["ClosureError", "PluginRef", "Target", "Pinning", "PluginIndex", "read_frontmatter", "discover_plugins",
           "resolve_target", "target_from_skill_dir", "dependency_union", "closure_files", "closure_digest",
           "digest_files", "pin", "file_sha256_hex"]

MANIFEST = Path(".claude-plugin") / "plugin.json"
CONTRACT = Path("references") / "package-contract.json"
REF_FIELDS = ("script_refs", "reference_refs", "responsibility_refs", "schema_refs")
PLAIN_LABEL = "_"
_NAME_RE = NAME_RE
_READ_BYTES = 64 * 1024
_PLUGIN_ROOT_REF = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/([^\s\"'`;|&)<>]+)")
#: Folders never entered while walking a closure folder: VCS data and bytecode caches (not behaviour).
_SKIP_DIRS = {".git", "__pycache__"}
#: Folders never searched for plugins.
_DISCOVERY_SKIP = {".git", "node_modules", "__pycache__", ".venv", "eval-log"}


@dataclass(frozen=True)
class PluginRef:
    """One plugin boot loads with ``--plugin-dir root`` and the closure covers."""

    name: str
    root: Path


@dataclass(frozen=True)
class Target:
    """A resolved trial target. ``plugin_name``/``plugin_root`` are None for a plain skill name."""

    plugin_name: str | None
    plugin_root: Path | None
    skill: str
    skill_dir: Path
    skill_md: Path
    frontmatter: dict = field(hash=False, compare=False)

    @property
    def qualified(self) -> str:
        """``plugin:skill`` or the plain skill name."""
        return f"{self.plugin_name}:{self.skill}" if self.plugin_name else self.skill


@dataclass(frozen=True)
class Pinning:
    """What boot loads and what the verdict digests, from one computation (invariant 1)."""

    plugins: list[PluginRef]
    files: list[tuple[str, str, Path]]
    digest: str


# --------------------------------------------------------------------------------------------- index

class PluginIndex:
    """Discovered plugins under one root, with cached manifests, contracts and file hashes.

    Build one per command (plan builds one for all skills); the module functions build one when not given.
    """

    def __init__(self, plugins_root: Path) -> None:
        self.root = Path(plugins_root).resolve()
        self.plugins = discover_plugins(self.root)
        self._manifests: dict[str, dict] = {}
        self._contracts: dict[str, dict | None] = {}
        self._sha: dict[str, str] = {}
        # closure_walk caches: plugin parts, their digest lines, directories known to be real (no symlink)
        self._parts: dict[tuple[str, bool], dict[tuple[str, str], str]] = {}
        self._part_lines: dict[tuple[str, bool], frozenset[str]] = {}
        self._part_blocks: dict[tuple[str, bool], bytes] = {}
        self._real_dirs: dict[str, bool] = {}

    def plugin_root(self, name: str, *, declared_in: str | None = None) -> Path:
        """Root of plugin ``name``; :class:`ClosureError` when it is not under the plugins root."""
        try:
            return self.plugins[name]
        except KeyError:
            known = ", ".join(sorted(self.plugins)) or "none"
            raise ClosureError(f"dependency plugin '{name}' not found under {self.root}",
                               where=declared_in, fix=f"add it under the plugins root (known plugins: {known})") from None

    def manifest(self, name: str) -> dict:
        """plugin.json of ``name`` (validated in discovery)."""
        if name not in self._manifests:
            self._manifests[name] = read_json_object(self.plugins[name] / MANIFEST, "plugin.json")
        return self._manifests[name]

    def contract(self, name: str) -> dict | None:
        """references/package-contract.json of ``name``, validated, or None when the plugin has none."""
        if name not in self._contracts:
            path = self.plugins[name] / CONTRACT
            self._contracts[name] = validate_contract(read_json_object(path, "package-contract.json"), path) \
                if path.is_file() or path.is_symlink() else None
        return self._contracts[name]

    def sha(self, path: str | Path) -> str:
        """sha256 hex of a file's content (cached by path for the life of this index)."""
        key = str(path)
        digest = self._sha.get(key)
        if digest is None:
            digest = self._sha[key] = file_sha256_hex(key)
        return digest


def file_sha256_hex(path: str | Path) -> str:
    """sha256 hex of a file's bytes, read with raw file descriptors (cheaper than ``open()`` for many small files).

    A read shorter than asked means end of file for the regular files a closure holds.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        chunk = os.read(fd, _READ_BYTES)
        if len(chunk) < _READ_BYTES:
            return hashlib.sha256(chunk).hexdigest()
        h = hashlib.sha256(chunk)
        while chunk:
            chunk = os.read(fd, 1 << 20)
            h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


def discover_plugins(plugins_root: Path) -> dict[str, Path]:
    """Find plugins under ``plugins_root`` (the root itself, its children and grandchildren).

    A plugin is a folder with ``.claude-plugin/plugin.json`` whose ``"name"`` names it. Returns
    ``{name: resolved root}``. Raises :class:`RefusedInput` when the root is not a folder and
    :class:`ClosureError` for a malformed manifest or two plugins with one name.
    """
    root = Path(plugins_root)
    if not root.is_dir():
        raise RefusedInput("plugins root is not a folder", where=str(root), code="plugins_root",
                           fix="pass --plugins-root <folder that holds the plugins>")
    found: dict[str, Path] = {}

    def visit(folder: Path, depth: int) -> None:
        manifest = folder / MANIFEST
        if manifest.is_file():
            doc = read_json_object(manifest, "plugin.json")
            name = doc.get("name")
            if not isinstance(name, str) or not _NAME_RE.match(name):
                raise ClosureError(f"plugin.json has no valid \"name\" (got {name!r})", where=str(manifest),
                                   fix="set \"name\" to the plugin's name")
            resolved = folder.resolve()
            if name in found and found[name] != resolved:
                raise ClosureError(f"two plugins are named '{name}': {found[name]} and {resolved}",
                                   where=str(root), fix="rename one or move it out of the plugins root")
            found[name] = resolved
            return
        if depth >= 2:
            return
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _DISCOVERY_SKIP:
                continue
            if entry.is_dir():
                visit(Path(entry.path), depth + 1)

    visit(root, 0)
    return found


# --------------------------------------------------------------------------------------------- target

def _index(plugins_root: Path | PluginIndex) -> PluginIndex:
    return plugins_root if isinstance(plugins_root, PluginIndex) else PluginIndex(plugins_root)


def _maybe_index(target: Target, plugins_root: Path | PluginIndex | None) -> PluginIndex | None:
    """A plain skill may have no plugins root; a qualified target always needs one."""
    if plugins_root is None:
        if target.plugin_name is not None:
            raise RefusedInput(f"target {target.qualified} needs a plugins root", code="plugins_root",
                               fix="pass --plugins-root")
        return None
    return _index(plugins_root)


def resolve_target(target: str, plugins_root: Path | PluginIndex) -> Target:
    """Resolve ``plugin:skill`` (or a plain ``skill``) to its folder and frontmatter.

    ``plugin:skill`` -> ``<plugin root>/skills/<skill>/SKILL.md``. A plain name is looked up in
    ``<plugins_root>/.claude/skills``, ``<plugins_root>/skills`` and then in each plugin (must be unique);
    it gets no plugin pinning. Raises :class:`RefusedInput` (exit 2, nothing created) for a malformed
    target, an unknown plugin or a missing skill, listing what is known; :class:`ClosureError` for a
    malformed manifest or frontmatter.
    """
    index = _index(plugins_root)
    if not isinstance(target, str) or target.count(":") > 1:
        raise RefusedInput(f"target {target!r} is not 'plugin:skill' or 'skill'", code="bad_target",
                           fix="pass e.g. hello:greet")
    plugin, _, skill = target.rpartition(":")
    for part, what in ((plugin, "plugin"), (skill, "skill")):
        if (part or what == "skill") and not _NAME_RE.match(part):
            raise RefusedInput(f"{what} name {part!r} in target {target!r} has unsafe characters", code="bad_target",
                               fix="use letters, digits, '.', '_' and '-'")
    if plugin:
        if plugin not in index.plugins:
            known = ", ".join(sorted(index.plugins)) or "none"
            raise RefusedInput(f"unknown plugin '{plugin}' under {index.root}", code="unknown_plugin",
                               fix=f"known plugins: {known}; or pass --plugins-root")
        root = index.plugins[plugin]
        skill_dir = root / "skills" / skill
        if not (skill_dir / "SKILL.md").is_file():
            known = ", ".join(_skills_of(root)) or "none"
            raise RefusedInput(f"plugin '{plugin}' has no skill '{skill}'", where=str(skill_dir / "SKILL.md"),
                               code="unknown_skill", fix=f"skills of {plugin}: {known}")
        return Target(plugin, root, skill, skill_dir, skill_dir / "SKILL.md", read_frontmatter(skill_dir / "SKILL.md"))
    candidates = [index.root / ".claude" / "skills" / skill, index.root / "skills" / skill]
    skill_dir = next((c for c in candidates if (c / "SKILL.md").is_file()), None)
    if skill_dir is None:
        owners = [n for n, r in sorted(index.plugins.items()) if (r / "skills" / skill / "SKILL.md").is_file()]
        if len(owners) > 1:
            raise RefusedInput(f"skill '{skill}' is in several plugins: {', '.join(owners)}", code="ambiguous_skill",
                               fix=f"qualify it, e.g. {owners[0]}:{skill}")
        if not owners:
            raise RefusedInput(f"skill '{skill}' not found under {index.root}", code="unknown_skill",
                               fix="pass plugin:skill (known plugins: "
                                   f"{', '.join(sorted(index.plugins)) or 'none'}) or --plugins-root")
        skill_dir = index.plugins[owners[0]] / "skills" / skill
    skill_dir = skill_dir.resolve()
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
        name = read_json_object(plugin_root / MANIFEST, "plugin.json").get("name")
        if index.plugins.get(name) != plugin_root:
            raise RefusedInput(f"plugin at {plugin_root} is not found under plugins root {index.root}",
                               code="plugins_root", fix="pass --plugins-root <folder that holds it>")
        return resolve_target(f"{name}:{skill_dir.name}", index), index
    return Target(None, None, skill_dir.name, skill_dir, skill_dir / "SKILL.md",
                  read_frontmatter(skill_dir / "SKILL.md")), None


def _skills_of(root: Path) -> list[str]:
    base = root / "skills"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "SKILL.md").is_file())


# --------------------------------------------------------------------------------------------- union

def dependency_union(target: Target, plugins_root: Path | PluginIndex) -> list[PluginRef]:
    """The plugins a trial of ``target`` loads, target plugin first (seed 001 rule 3).

    (a) plugin.json ``dependencies`` in declared order, then (b) package-contract ``depends_on`` narrowed by
    ``skill_dependencies.<skill>`` when that map exists (skill not listed -> none); duplicates dropped. A plain
    skill name returns ``[]`` (no pinning). Raises :class:`ClosureError` naming the path and reason for a
    missing or malformed manifest or contract, a bad narrowing map, or a dependency not under plugins_root.
    """
    if target.plugin_name is None:
        return []
    index = _index(plugins_root)
    name = target.plugin_name
    if name not in index.plugins:
        raise ClosureError(f"target plugin '{name}' not found under {index.root}", fix="pass --plugins-root")
    manifest_path = index.plugins[name] / MANIFEST
    origin: dict[str, str] = {}
    for dep in name_list(index.manifest(name).get("dependencies"), str(manifest_path), "dependencies"):
        origin.setdefault(dep, f"{manifest_path} dependencies")
    contract = index.contract(name)
    if contract is not None:
        narrowing = contract["narrowing"]
        extra = contract["depends_on"] if narrowing is None else narrowing.get(target.skill, [])
        for dep in extra:
            origin.setdefault(dep, f"{index.plugins[name] / CONTRACT} depends_on")
    refs = [PluginRef(name, index.plugins[name])]
    for dep, declared_in in origin.items():
        if dep != name:
            refs.append(PluginRef(dep, index.plugin_root(dep, declared_in=declared_in)))
    return refs


# --------------------------------------------------------------------------------------------- closure

def _entries(target: Target, index: PluginIndex | None, union: list[PluginRef] | None) -> list[tuple[str, str, str]]:
    from live_trial.closure_walk import entries

    if target.plugin_name is None:
        return entries(target, index, [])
    assert index is not None
    return entries(target, index, dependency_union(target, index) if union is None else union)


def closure_files(target: Target, plugins_root: Path | PluginIndex | None,
                  union: list[PluginRef] | None = None) -> list[tuple[str, str, Path]]:
    """The behaviour closure of ``target``: sorted ``[(plugin label, posix relpath, absolute path)]``.

    ``union`` defaults to :func:`dependency_union` (pass it only when you computed it from the same index).
    See the module docstring for what is included. Raises :class:`ClosureError` (fail closed).
    """
    index = _maybe_index(target, plugins_root)
    return [(label, rel, Path(path)) for label, rel, path in _entries(target, index, union)]


def digest_files(files: Iterable[tuple[str, str, Any]], index: PluginIndex | None = None) -> str:
    """``sha256:<hex>`` over the sorted lines ``<plugin>/<relpath>\\0<sha256 hex of content>\\n`` (issue 5)."""
    sha = index.sha if index is not None else _file_sha
    lines = sorted(f"{label}/{rel}\0{sha(path)}\n" for label, rel, path in files)
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _file_sha(path: Any) -> str:
    return file_sha256_hex(path)


def closure_digest(target: Target, plugins_root: Path | PluginIndex | None) -> str:
    """The behaviour-closure digest (verdict field ``skill_dir_tree_sha``), ``sha256:<hex>``. Fails closed."""
    from live_trial.closure_walk import digest

    index = _maybe_index(target, plugins_root)
    if target.plugin_name is None:
        return digest(target, index, [])
    assert index is not None
    return digest(target, index, dependency_union(target, index))


def pin(target: Target, plugins_root: Path | PluginIndex | None) -> Pinning:
    """Everything boot needs and the verdict records, from ONE computation: plugins to load, closure files, digest.

    Boot passes ``--plugin-dir p.root`` for each ``p`` in ``plugins`` (empty for a plain skill: no pinning).
    Raises :class:`ClosureError` before anything starts when the closure cannot be built (fail closed).
    """
    index = _maybe_index(target, plugins_root)
    union = dependency_union(target, index) if index is not None else []
    found = _entries(target, index, union or None)
    return Pinning(union, [(label, rel, Path(path)) for label, rel, path in found], digest_files(found, index))
