"""When ``plan`` may reuse an activation result (README "Does it start by itself?", references/suite-format.md
"Activation cases").

An activation result answers one question: given this skill listing, do these prompts start the skill? It is reused
*as an activation result* (never as an acceptance PASS) only while both are unchanged:

- the **prompt set**: the target, each prompt's text, whether it should trigger and its sessions, and for a rehearsal
  the scenario's bytes (:func:`live_trial.acceptance.activation.prompt_set_digest`);
- the **skill listing** the model saw, as far as it can be known without starting the CLI: the names and descriptions
  of every skill of the plugins the session loads (the target's plugin and its declared dependencies, siblings
  included: :func:`plugin_skills`), equal to those when the result was recorded (``skills_digest``), and the recorded
  listing named exactly those skills. The CLI's own skills (``init``, ``code-review``...) come with the CLI release:
  a newer ``claude`` may list others, which ``plan`` does not see (the result records the version it ran with).

Only a PASS is reused; a FLAKY, FAIL or BLOCKED result runs again. Reads activation.json files and SKILL.md
frontmatter; raises nothing for a file it cannot read (that result is simply not reused).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.acceptance.activation import read_activation
from live_trial.closure.index import skills_of
from live_trial.closure.manifest import read_frontmatter
from live_trial.errors import LiveTrialError
from live_trial.workdir_files import ACTIVATION


def plugin_skills(plugins: Iterable[tuple[str, Path]]) -> dict[str, tuple[Path, str]]:
    """``plugin:skill`` -> (its resolved folder, its frontmatter description) for every skill of the loaded
    ``plugins`` (``(name, root)``): what the skill listing shows of them. A SKILL.md that cannot be read has the
    description ``""``."""
    out: dict[str, tuple[Path, str]] = {}
    for name, root in plugins:
        for skill in skills_of(Path(root)):
            folder = (Path(root) / "skills" / skill).resolve()
            try:
                description = str(read_frontmatter(folder / "SKILL.md").get("description") or "")
            except (LiveTrialError, OSError, ValueError):
                description = ""
            out[f"{name}:{skill}"] = (folder, " ".join(description.split()))
    return out


def skills_digest(skills: Mapping[str, tuple[Path, str]]) -> str:
    """``sha256:<hex>`` of the names and descriptions of :func:`plugin_skills` (folders left out: a moved checkout
    lists the same skills)."""
    raw = json.dumps(sorted((name, desc) for name, (_, desc) in skills.items()), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()


def activation_results(runs_dir: Path, case: str) -> list[tuple[Path, dict[str, Any] | None]]:
    """The activation runs of one case of a skill, newest first: ``(activation.json path, the document or None when
    it cannot be read or does not fit its schema)``."""
    if not Path(runs_dir).is_dir():
        return []
    found: list[tuple[Path, dict[str, Any] | None]] = []
    for path in sorted(Path(runs_dir).glob(f"*/{ACTIVATION}"), key=lambda p: p.parent.name, reverse=True):
        try:
            doc: dict[str, Any] | None = read_activation(path)
        except (LiveTrialError, OSError):
            doc = None
        if doc is None or doc.get("case") == case:
            found.append((path, doc))
    return found


def decide_activation_reuse(runs_dir: Path, case: str, prompt_set: str, skills: Mapping[str, tuple[Path, str]], *,
                            live: bool = True) -> tuple[bool, str, Path | None, str | None]:
    """``(reusable, reason, activation.json considered, its verdict)`` for the activation case ``case`` whose prompt
    set is ``prompt_set`` and whose loaded plugins' skills are ``skills`` now (module docstring); ``live``: the plan is
    for the real model (no ``--rehearsal-reuse``), so a rehearsal's result is never reused (its prompt set names its
    scenario)."""
    found = [f for f in activation_results(runs_dir, case) if f[1] is None or f[1].get("prompt_set") == prompt_set]
    if not found:
        older = activation_results(runs_dir, case)
        last = older[0][1] if older else None
        if not older:
            why = "no activation result yet"
        elif live and last is not None and last.get("scenario_origin") == "rehearsal":
            why = (f"the last activation run was a rehearsal: a scripted model's choice is never reused for the real "
                   f"model (run {older[0][0].parent.name})")
        else:
            why = "the prompts (or their scenario) changed since the last activation run"
        return False, why, older[0][0] if older else None, None
    path, doc = found[0]
    run = path.parent.name
    if doc is None:
        return False, f"the last activation result does not fit its schema (run {run})", path, None
    verdict = str(doc["verdict"])
    if verdict != "PASS":
        never = "a FLAKY activation is never reused" if verdict == "FLAKY" else "only a PASS is reused"
        return False, f"the last activation run was {verdict}: {never} (run {run})", path, verdict
    if doc.get("skills_digest") != skills_digest(skills):
        return False, (f"the skill listing changed: a name or description of the loaded plugins' skills differs from "
                       f"the one the sessions were shown (run {run})"), path, verdict
    listed = {n for n in (doc.get("listing") or {}).get("names") or [] if ":" in n
              and n.split(":", 1)[0] in {k.split(":", 1)[0] for k in skills}}
    if listed != set(skills):
        return False, f"the recorded skill listing named other skills of the plugins than they have now (run {run})", \
            path, verdict
    return True, (f"activation PASS with the same prompts and the same skill listing of the plugins "
                  f"(claude {doc.get('claude_version') or '?'}; run {run})"), path, verdict
