"""The plugins under one plugins root and the types the closure works with: :class:`PluginIndex` (discovered
plugins, cached manifests, contracts and file hashes), :class:`PluginRef`, :class:`Target` and :class:`Pinning`.

A plugin is a folder (the root, a child or a grandchild) with ``.claude-plugin/plugin.json`` whose ``"name"`` names
it; a skill is ``<plugin>/skills/<skill>/SKILL.md``. A malformed manifest or two plugins with one name is a
:class:`~live_trial.closure.manifest.ClosureError` (seed 001 rule 3: fail closed) for that plugin only: discovery
keeps it in :attr:`PluginIndex.broken` and every other plugin under the root resolves, plans and runs.
"""
from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from live_trial.closure.manifest import NAME_RE, ClosureError, read_json_object, validate_contract
from live_trial.errors import RefusedInput

MANIFEST = Path(".claude-plugin") / "plugin.json"


CONTRACT = Path("references") / "package-contract.json"


REF_FIELDS = ("script_refs", "reference_refs", "responsibility_refs", "schema_refs")


PLAIN_LABEL = "_"




_READ_BYTES = 64 * 1024


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
    #: what the verdict should say about how the closure was read (a hook command the shell reading could not tell)
    notes: tuple[str, ...] = ()


class PluginIndex:
    """Discovered plugins under one root, with cached manifests, contracts and file hashes.

    Build one per command (plan builds one for all skills); the module functions build one when not given.
    """

    def __init__(self, plugins_root: Path) -> None:
        self.root = Path(plugins_root).resolve()
        found = discover(self.root)
        self.plugins = found.plugins
        #: plugin folders whose manifest cannot be used (malformed, unreadable, a name two plugins share) -> why
        self.broken: dict[Path, ClosureError] = found.broken
        self._manifests: dict[str, dict] = dict(found.manifests)
        self._contracts: dict[str, dict | None] = {}
        self._sha: dict[str, str] = {}
        # closure_walk caches: plugin parts, their digest lines, directories known to be real (no symlink)
        self._parts: dict[tuple[str, bool], dict[tuple[str, str], str]] = {}
        self._part_notes: dict[tuple[str, bool], tuple[str, ...]] = {}
        self._part_lines: dict[tuple[str, bool], frozenset[str]] = {}
        self._part_blocks: dict[tuple[str, bool], bytes] = {}
        self._real_dirs: dict[str, bool] = {}

    def plugin_root(self, name: str, *, declared_in: str | None = None) -> Path:
        """Root of plugin ``name``; :class:`ClosureError` when it is not under the plugins root (or its manifest is
        broken: then that plugin's own error)."""
        try:
            return self.plugins[name]
        except KeyError:
            broken = self.broken_named(name)
            if broken is not None:
                raise broken from None
            known = ", ".join(sorted(self.plugins)) or "none"
            raise ClosureError(f"dependency plugin '{name}' not found under {self.root}", where=declared_in,
                               fix=f"add it under the plugins root (known plugins: {known}){self.broken_hint()}") \
                from None

    def broken_named(self, name: str) -> ClosureError | None:
        """The error of the broken plugin that is most likely ``name``: one whose manifest names it, or whose folder
        is called so; None when there is none."""
        for folder, error in self.broken.items():
            if error.details.get("name") == name:
                return error
        for folder, error in self.broken.items():
            if folder.name == name:
                return error
        return None

    def broken_hint(self) -> str:
        """``"; N plugin manifest(s) under the root cannot be used: <first one>"`` or ``""``."""
        if not self.broken:
            return ""
        first = next(iter(self.broken.values()))
        return f"; {len(self.broken)} plugin manifest(s) under the root cannot be used: {first.message}"

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
        """sha256 hex of a file's content (cached by path for the life of this index). Raises :class:`ClosureError`
        naming the file when it cannot be read."""
        key = str(path)
        digest = self._sha.get(key)
        if digest is None:
            digest = self._sha[key] = closure_file_sha(key)
        return digest


def unreadable(path: str | Path, exc: OSError) -> ClosureError:
    """The one-line :class:`ClosureError` for a closure file or folder that cannot be read (a symlink loop, no
    permission, ...), naming it."""
    reason = "a symlink loop" if exc.errno == errno.ELOOP else (exc.strerror or type(exc).__name__)
    return ClosureError(f"cannot read a file of the behaviour closure: {reason}", where=str(path),
                        fix="make it a readable file or folder, or remove it")


def closure_file_sha(path: str | Path) -> str:
    """:func:`file_sha256_hex`, raising :class:`ClosureError` naming the file instead of OSError."""
    try:
        return file_sha256_hex(path)
    except OSError as exc:
        raise unreadable(path, exc) from None


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


@dataclass
class Discovery:
    """What :func:`discover` found: ``plugins`` (name -> resolved root), ``manifests`` (name -> plugin.json, already
    read), ``broken`` (plugin folder -> the :class:`ClosureError` that keeps it out)."""

    plugins: dict[str, Path] = field(default_factory=dict)
    manifests: dict[str, dict] = field(default_factory=dict)
    broken: dict[Path, ClosureError] = field(default_factory=dict)


def discover(plugins_root: Path) -> Discovery:
    """Find plugins under ``plugins_root`` (the root itself, its children and grandchildren).

    A plugin is a folder with ``.claude-plugin/plugin.json`` whose ``"name"`` names it. A manifest that cannot be
    read or parsed, has no valid name, or shares its name with another plugin puts its folder (both folders, for a
    shared name) in ``broken`` with the reason; the others are found as usual. Folders that cannot be listed are
    skipped. Raises :class:`RefusedInput` when the root is not a folder.
    """
    root = Path(plugins_root)
    if not root.is_dir():
        raise RefusedInput("plugins root is not a folder", where=str(root), code="plugins_root",
                           fix="pass --plugins-root <folder that holds the plugins>")
    out = Discovery()
    named: dict[str, list[Path]] = {}

    def visit(folder: Path, depth: int) -> None:
        manifest = folder / MANIFEST
        if manifest.is_file() or manifest.is_symlink():
            resolved = folder.resolve()
            try:
                doc = read_json_object(manifest, "plugin.json")
                name = doc.get("name")
                if not isinstance(name, str) or not NAME_RE.match(name):
                    raise ClosureError(f"plugin.json has no valid \"name\" (got {str(name)[:80]!r})",
                                       where=str(manifest), fix="set \"name\" to the plugin's name")
            except ClosureError as exc:
                out.broken[resolved] = exc
                return
            if resolved not in named.setdefault(name, []):
                named[name].append(resolved)
            out.manifests.setdefault(name, doc)
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
            try:
                is_dir = entry.is_dir()
            except OSError:          # a symlink loop or an unreadable entry is no plugin folder
                continue
            if is_dir:
                visit(Path(entry.path), depth + 1)

    visit(root, 0)
    for name, folders in named.items():
        if len(folders) == 1:
            out.plugins[name] = folders[0]
            continue
        out.manifests.pop(name, None)
        for folder in folders:
            out.broken[folder] = ClosureError(f"two plugins are named '{name}': {folders[0]} and {folders[1]}",
                                              where=str(root), fix="rename one or move it out of the plugins root",
                                              details={"name": name})
    return out


def discover_plugins(plugins_root: Path) -> dict[str, Path]:
    """The usable plugins under ``plugins_root`` (``{name: resolved root}``; see :func:`discover`, whose ``broken``
    lists the others). Raises :class:`RefusedInput` when the root is not a folder."""
    return discover(plugins_root).plugins


def as_index(plugins_root: Path | PluginIndex) -> PluginIndex:
    """``plugins_root`` itself when it is already a :class:`PluginIndex`, else a new index of that folder."""
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
    """The names of the skills of the plugin at ``root``: the folders under ``skills/`` that hold a ``SKILL.md``,
    sorted; empty when there is no ``skills/`` folder."""
    base = root / "skills"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "SKILL.md").is_file())
