"""What the planner reads before it decides (README "Planning many skills"): the plugin roots of ``--plugin-dir``,
their suites, the ``scenario_id`` an old verdict records, the closure a watch tested; and the plan's digest."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.suite import Suite, load_suites
from live_trial.closure.index import MANIFEST, discover, skills_of
from live_trial.errors import LiveTrialError, RefusedInput
from live_trial.jsonfile import parse_json
from live_trial.workdir_files import VERDICT


def plugin_roots(plugin_dirs: Iterable[Path]) -> tuple[list[Path], dict[Path, LiveTrialError]]:
    """Each --plugin-dir is a plugin (has .claude-plugin/plugin.json) or a folder of plugins. Returns the plugin
    roots and the plugin folders whose manifest cannot be used (folder -> why): each of those is one refused row per
    skill, the others plan as usual."""
    roots: list[Path] = []
    broken: dict[Path, LiveTrialError] = {}
    for d in plugin_dirs:
        d = Path(d).resolve()
        if (d / MANIFEST).is_file():
            found = [d]
        elif d.is_dir():
            found_in = discover(d)
            found = sorted(found_in.plugins.values())
            broken.update(found_in.broken)
        else:
            raise RefusedInput("plugin dir is not a folder", where=str(d), code="bad_plugin_dir",
                               fix="pass --plugin-dir plugins/<plugin>")
        if not found and not broken:
            raise RefusedInput("no plugin found (no .claude-plugin/plugin.json)", where=str(d), code="bad_plugin_dir",
                               fix="pass --plugin-dir plugins/<plugin>")
        roots += [r for r in found if r not in roots]
    return roots, broken


def scenario_of(path: Path) -> str | None:
    """The ``scenario_id`` a verdict file records, None when it cannot be read."""
    try:
        doc = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc.get("scenario_id") if isinstance(doc, dict) else None


def inline_refs(node: Any, defs: Mapping[str, Any]) -> Any:
    """Replace ``{"$ref": "#/$defs/x", ...}`` by the definition (our schemas use only local, non-recursive refs)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            inlined = inline_refs(defs[ref[len("#/$defs/"):]], defs)
            return {**inlined, **inline_refs(rest, defs)} if rest else inlined
        return {k: inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [inline_refs(v, defs) for v in node]
    return node


def plan_suites(plugin_dirs: Iterable[Path], suite: Path | None = None) -> dict[Path, Suite]:
    """The suite of each plugin root of ``plugin_dirs`` (``suite``, ``--suite FILE``, for all of them, else each
    root's own ``live-trials.yaml``), read before anything is planned or written. Raises :class:`RefusedInput`
    (``bad_suite``) for a bad file or a skill key that names no skill of the plugins planned."""
    roots, _ = plugin_roots(plugin_dirs)
    suites = load_suites(roots, suite)
    for one in {id(s): s for s in suites.values()}.values():
        known = [(plugin_name(r), n) for r, s in suites.items() if s is one for n in skills_of(r)]
        unknown = one.unknown_keys(known)
        if unknown:
            raise RefusedInput(f"the suite names skills the plugin does not have: {'; '.join(unknown)}",
                               code="bad_suite", fix="name a skill by its folder under skills/ (or plugin:skill)")
    return suites


def plugin_name(root: Path) -> str:
    """The plugin's name from its manifest (its folder's name when that cannot be read)."""
    try:
        name = parse_json((root / MANIFEST).read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else root.name


def watch_closure(watch: Mapping[str, Any]) -> str | None:
    """The behaviour-closure digest the trial behind ``watch`` tested: its ``closure``, else the
    ``skill_dir_tree_sha`` of the verdict in its workdir; None when neither can be read."""
    closure = watch.get("closure")
    if isinstance(closure, str):
        return closure
    if not watch.get("workdir"):
        return None
    try:
        doc = parse_json((Path(str(watch["workdir"])) / VERDICT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sha = doc.get("skill_dir_tree_sha") if isinstance(doc, dict) else None
    return sha if isinstance(sha, str) else None


def superseded_watches(doc: Mapping[str, Any]) -> list[str]:
    """The ids of the open watches a plan found superseded (their skill's behaviour closure changed since)."""
    return [i for s in doc["skills"] for i in s.get("superseded_watch_ids") or []]


def plan_digest(doc: Mapping[str, Any]) -> str:
    """sha256 of a plan's decisions (targets, actions, digests) — equal plans give equal digests (tests, benchmarks)."""
    keys = [(s["target"], s["action"], s["skill_dir_tree_sha"]) + ((s["case"],) if s.get("case", "default") != "default"
                                                                   else ()) for s in doc["skills"]]
    return "sha256:" + hashlib.sha256(json.dumps(keys).encode()).hexdigest()
