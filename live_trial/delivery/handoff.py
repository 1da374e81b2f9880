"""What a person is told when a delivery ends (``handoff_complete``; seed 001 artifact_delivery and related section),
in their language (``references/notifications.<lang>.json`` section ``delivery``): the artifact accepted as it is
(the goal not judged), a PASS at the first judged trial, converged in N rounds, or not converged with what still
fails; a BLOCKED trial is not the skill's failure. When the loop did not converge and a skill named
``run-skill-iter-improve`` is installed (seed 001 関連: the place for deeper improvement), the message names it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from live_trial.delivery.ledger import max_rounds
from live_trial.notices.catalogue import catalogue

ITER_IMPROVE = "run-skill-iter-improve"


@dataclass(frozen=True)
class Handoff:
    """The end of a delivery: the message, whether the loop converged (None: the goal was not judged) and the
    improvement rounds run."""

    message: str
    converged: bool | None
    rounds: int

    def to_doc(self) -> dict[str, Any]:
        """``delivery.json`` ``handoff``."""
        return {"message": self.message, "converged": self.converged, "rounds": self.rounds}


def skill_roots(env: Mapping[str, str], cwd: Path, plugins_root: Path | None) -> list[Path]:
    """Where an installed skill's folder may be: the config's ``skills/`` (``CLAUDE_CONFIG_DIR``, else ``~/.claude``),
    each installed plugin's ``skills/`` (``plugins/installed_plugins.json``), the project's ``.claude/skills/`` and
    each plugin's ``skills/`` under ``plugins_root``."""
    config = Path(env.get("CLAUDE_CONFIG_DIR") or Path(env.get("HOME") or Path.home()) / ".claude")
    roots = [config / "skills", Path(cwd) / ".claude" / "skills"]
    try:
        installed = json.loads((config / "plugins" / "installed_plugins.json").read_text(encoding="utf-8"))
        for entries in (installed.get("plugins") or {}).values():
            roots += [Path(e["installPath"]) / "skills" for e in entries
                      if isinstance(e, dict) and e.get("installPath")]
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    if plugins_root is not None and Path(plugins_root).is_dir():
        roots += sorted(p / "skills" for p in Path(plugins_root).iterdir() if p.is_dir())
    return roots


def find_skill(name: str, roots: Iterable[Path]) -> Path | None:
    """The ``SKILL.md`` of the skill ``name`` in the first of ``roots`` that has it, else None."""
    for root in roots:
        path = Path(root) / name / "SKILL.md"
        if path.is_file():
            return path
    return None


def iter_improve(plugins_root: Path | None, cwd: Path | None = None,
                 env: Mapping[str, str] | None = None) -> Path | None:
    """The installed ``run-skill-iter-improve`` skill's SKILL.md, or None."""
    env = os.environ if env is None else env
    return find_skill(ITER_IMPROVE, skill_roots(env, Path(cwd or Path.cwd()), plugins_root))


def compose(*, trial: str, lang: str, choice: str | None, first: Mapping[str, Any] | None,
            ledger: Mapping[str, Any] | None, artifact: str, deeper: Path | None) -> Handoff:
    """The handoff of a delivery. ``first``: the completed first verdict (None: accepted as it is); ``ledger``: the
    improvement ledger (None: no round was run); ``artifact``: the first artifact's path; ``deeper``: the installed
    iter-improve skill, named when the loop did not converge."""
    d = catalogue(lang)["delivery"]
    if choice == "accept-as-is" or first is None:
        return Handoff(d["accepted"].format(trial=trial, verdict=artifact), None, 0)
    rounds = [r for r in (ledger or {}).get("rounds", []) if r["trial"] is not None]
    n = sum(1 for r in rounds if r["n"] > 0)
    last = rounds[-1]["trial"] if rounds else {"overall": first["overall"]["verdict"],
                                               "reasons": list(first["overall"].get("reasons") or [])}
    reasons = "; ".join(last["reasons"]) or last["overall"]
    bound = int((ledger or {}).get("max_rounds") or max_rounds(str(choice)))
    if last["overall"] == "PASS":
        return Handoff(d["pass_first"].format(trial=trial) if n == 0 else d["converged"].format(trial=trial, n=n),
                       True, n)
    if last["overall"] == "BLOCKED":
        return Handoff(d["blocked"].format(trial=trial, reasons=reasons), False, n)
    key = "not_converged" if bound and n >= bound else "stopped"
    text = d[key].format(trial=trial, n=n, max=bound, choice=choice, reasons=reasons)
    if deeper is not None:
        text += " " + d["deeper"].format(skill=ITER_IMPROVE, path=deeper)
    return Handoff(text, False, n)
