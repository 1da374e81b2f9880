"""The plugin under trial is loaded: the skill listing of the session's first prompt must name the target.

The CLI drops a plugin it cannot load without a word on screen or stderr (a dependency it does not find, a manifest
field of a type it rejects); the model then never sees the skill. Boot runs the CLI's own validator first
(:mod:`live_trial.session.plugin_check`); what it cannot see shows here: the ``skill_listing`` attachment the CLI
writes with the first prompt (``names``: every skill the model may call, ``plugin:skill`` for plugin skills) lacks
the target. Then the trial stops at once (Escape, then the session is killed) as FAIL, stop reason
``plugin_not_loaded``, instead of waiting out the STALL limit (references/transcript-jsonl.md, "Plugins").

A skill whose frontmatter sets ``disable-model-invocation: true`` is missing from the listing too, though its plugin
was loaded: the CLI hides it from the model and its Skill tool refuses the call (observed on 2.1.197 and 2.1.332,
references/transcript-jsonl.md "A skill hidden from the model"). That stop is ``skill_hidden``, never "did not load
the plugin".
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from live_trial.closure.index import MANIFEST, Target
from live_trial.closure.manifest import name_list, read_json_object
from live_trial.errors import BootFail
from live_trial.stop_reasons import StopReason
from live_trial.transcript.reader import iter_records
from live_trial.trial.context import TrialContext

#: How long to wait for the skill listing after the task was delivered (it is written with the prompt, within
#: about 0.3 s on 2.1.197; generous for a loaded machine).
LISTING_WAIT_S = 10.0
POLL_S = 0.2


class PluginNotLoaded(BootFail):
    """The CLI did not load the plugin (or skill) under trial, so the model cannot call it. ``run``: FAIL."""

    code = StopReason.PLUGIN_NOT_LOADED


class SkillHidden(PluginNotLoaded):
    """The skill under trial sets ``disable-model-invocation: true``: the CLI keeps it from the model and its Skill
    tool refuses to call it, so no trial through a Skill call can start it. ``run``: FAIL."""

    code = StopReason.SKILL_HIDDEN


def hidden(frontmatter: Mapping[str, Any] | None) -> bool:
    """True when a skill's ``frontmatter`` hides it from the model (``disable-model-invocation: true``, as YAML gives
    it or as text)."""
    return (frontmatter or {}).get("disable-model-invocation") in (True, "true")


def skill_listing(records: Iterable[Mapping[str, Any]]) -> list[str] | None:
    """``names`` of the first main-chain ``skill_listing`` attachment, or None when the records hold none."""
    for rec in records:
        att = rec.get("attachment") if rec.get("type") == "attachment" else None
        if isinstance(att, dict) and att.get("type") == "skill_listing" and rec.get("isSidechain") is not True:
            names = att.get("names")
            if isinstance(names, list):
                return [str(n) for n in names]
    return None


def missing_dependencies(plugin_dirs: Iterable[Path]) -> list[tuple[str, str]]:
    """``[(plugin, dependency)]``: dependencies that a loaded plugin's plugin.json declares and no loaded plugin is.

    Boot loads the target and its direct dependencies only (seed 001 rule 3), so a dependency of a dependency is
    not loaded, and the CLI then drops the plugin that needs it (and every plugin needing that one)."""
    manifests = {}
    for root in plugin_dirs:
        try:
            doc = read_json_object(Path(root) / MANIFEST, "plugin.json")
            manifests[str(doc.get("name") or Path(root).name)] = name_list(doc.get("dependencies"), str(root),
                                                                           "dependencies")
        except Exception:  # noqa: BLE001 - only a hint for the message
            continue
    return [(name, dep) for name, deps in manifests.items() for dep in deps if dep not in manifests]


def likely_cause(target: Target, names: list[str], plugin_dirs: Iterable[Path]) -> str:
    """One sentence naming the most likely reason the target is missing from ``names`` (the skill listing).

    ``target``: the resolved :class:`~live_trial.closure.index.Target`; ``plugin_dirs``: the plugins boot loaded.
    """
    plugin, skill = target.plugin_name, target.skill
    if hidden(target.frontmatter):
        return (f"{target.qualified} sets disable-model-invocation: true in its SKILL.md, so the CLI hides it from "
                f"the model and its Skill tool refuses to call it: only a person typing /{target.qualified} starts it")
    if any(n.startswith(f"{plugin}:") for n in names):
        return (f"the CLI loaded plugin {plugin} but not its skill {skill}: it did not accept skills/{skill}/SKILL.md "
                "(its frontmatter, or a skills path in plugin.json that points elsewhere)")
    missing = missing_dependencies(plugin_dirs)
    if missing:
        pairs = ", ".join(f"{name} needs {dep}" for name, dep in missing)
        return (f"the CLI dropped plugin {plugin} without a message because a plugin it depends on is not loaded "
                f"({pairs}; a trial loads only the target's direct dependencies): declare that plugin as a direct "
                f"dependency of {plugin}")
    return (f"the CLI dropped plugin {plugin} without a message: a dependency it cannot find, or a plugin.json field "
            "it rejects (its validator found none)")


def require_target_listed(trial: TrialContext, *, clock: Callable[[], float] = time.monotonic) -> float | None:
    """After the task was delivered, wait (at most :data:`LISTING_WAIT_S`) for the skill listing and check that it
    names the target. Returns the seconds waited, or None when no check applies (a plain skill name, which is
    loaded from the user's or project's skills, or no listing written).

    Raises :class:`PluginNotLoaded` (after pressing Escape to interrupt the turn; the caller's cleanup kills the
    session) when the listing lacks the target; :class:`SkillHidden` when the target hides itself from the model. A
    missing listing is recorded as a warning, never a failure.
    """
    target = trial.target
    if target is None or target.plugin_name is None:
        return None
    started = clock()
    names = None
    while names is None:
        # streamed, parsing only the lines that can hold the listing: the turn may already be writing big tool output
        names = skill_listing(iter_records(trial.transcript_path(), select=lambda line: b"skill_listing" in line))
        if names is None:
            if clock() - started > LISTING_WAIT_S:
                trial.facts.warnings.append("no skill listing was written with the first prompt: whether the CLI "
                                            "loaded the plugin under trial could not be checked at the start")
                return None
            trial.sleep(POLL_S)
    waited = round(clock() - started, 3)
    if target.qualified in names:
        trial.journal.log("loading", "listed", target=target.qualified, skills=len(names), waited_s=waited)
        return waited
    assert trial.state is not None
    try:
        if trial.backend is not None:
            trial.backend.send_keys(trial.state.session, "Escape")      # interrupt the turn the task started
    except Exception:  # noqa: BLE001 - the session is killed next anyway
        pass
    cause = likely_cause(target, names, [Path(d) for d in (trial.state.closure or {}).get("plugin_dirs") or []])
    trial.journal.log("loading", "not_listed", target=target.qualified, skills=names, waited_s=waited, cause=cause)
    if hidden(target.frontmatter):
        raise SkillHidden(f"the skill is hidden from the model: {cause} (the session's skill listing does not name "
                          f"it, {len(names)} skills listed)", where=str(trial.transcript_path()),
                          fix="remove disable-model-invocation from the skill's frontmatter if the model should call "
                              "it, or try it by typing its slash command yourself")
    raise PluginNotLoaded(f"the CLI did not load {target.qualified}: the session's skill listing does not name it "
                          f"({len(names)} skills listed); {cause}", where=str(trial.transcript_path()),
                          fix="fix the plugin so the CLI loads it (run `claude plugin validate <plugin dir>`, check "
                              "its dependencies), then run the trial again")
