"""The plugins under one plugins root and the types the closure works with: :class:`PluginIndex` (discovered
plugins, cached manifests, contracts and file hashes), :class:`PluginRef`, :class:`Target` and :class:`Pinning`.

A plugin is a folder (the root, a child or a grandchild) with ``.claude-plugin/plugin.json`` whose ``"name"`` names
it; a skill is ``<plugin>/skills/<skill>/SKILL.md``. A malformed manifest or two plugins with one name is a
:class:`~live_trial.closure.manifest.ClosureError` (seed 001 rule 3: fail closed).
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from live_trial.closure.manifest import NAME_RE, ClosureError, read_json_object, validate_contract
from live_trial.errors import RefusedInput

MANIFEST = Path(".claude-plugin") / "plugin.json"


CONTRACT = Path("references") / "package-contract.json"


REF_FIELDS = ("script_refs", "reference_refs", "responsibility_refs", "schema_refs")


PLAIN_LABEL = "_"




_READ_BYTES = 64 * 1024


PLUGIN_ROOT_REF = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/([^\s\"'`;|&)<>]+)")


#: Folders never entered while walking a closure folder: VCS data and bytecode caches (not behaviour).
SKIP_DIRS = {".git", "__pycache__"}


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
            if not isinstance(name, str) or not NAME_RE.match(name):
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


def as_index(plugins_root: Path | PluginIndex) -> PluginIndex:
    return plugins_root if isinstance(plugins_root, PluginIndex) else PluginIndex(plugins_root)


def maybe_index(target: Target, plugins_root: Path | PluginIndex | None) -> PluginIndex | None:
    """A plain skill may have no plugins root; a qualified target always needs one."""
    if plugins_root is None:
        if target.plugin_name is not None:
            raise RefusedInput(f"target {target.qualified} needs a plugins root", code="plugins_root",
                               fix="pass --plugins-root")
        return None
    return as_index(plugins_root)


def skills_of(root: Path) -> list[str]:
    base = root / "skills"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "SKILL.md").is_file())
