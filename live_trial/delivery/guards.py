"""The minimal guards of the first artifact before it is shown to a person (seed 001 "Pre-choice usable artifact
execution": parse/open, secret, corrupt guards, and nothing of the trial left running), checked by the harness when
``minimum_guard_pass`` is recorded: a claim of the session is never enough.

1. **schema**: ``verdict.json`` fits its schema and is the artifact created (its digest unchanged), ``delivery.json``
   fits its own;
2. **never a PASS**: its goal is not judged (no evaluator ran before the choice);
3. **secrets**: nothing shown to the person (the verdict, ``report.html``) holds what looks like a key, a token, a
   password or a private key (the finding names the kind and the file, never the secret);
4. **nothing left running**: the trial's tmux session is gone, no process carries its tag, its container is empty,
   and for a rehearsal nothing listens on its scripted model's port.
"""
from __future__ import annotations

import re
import socket as socketlib
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.acceptance import delivery_state as ds
from live_trial.acceptance.verdict import read_verdict
from live_trial.errors import LiveTrialError
from live_trial.workdir_files import REPORT, VERDICT

#: What a secret looks like: (its kind, a regex). The rehearsal's own placeholder key (``…-rehearsal-key-…``) is a
#: secret by shape too: a screen or a record showing any key is refused.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("an API key", r"\bsk-[A-Za-z0-9]{32,}"),
    ("an AWS access key", r"\bAKIA[0-9A-Z]{16}\b"),
    ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}"),
    ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ("a bearer token", r"(?i)\bbearer\s+[A-Za-z0-9._\-]{20,}"),
    ("a password or token assignment",
     r"(?i)\b(?:api[_-]?key|secret|password|passwd|token)\b[\"']?\s*[=:]\s*[\"']?[A-Za-z0-9/+_\-]{16,}"),
)


def secrets_in(text: str) -> list[str]:
    """The kinds of secret ``text`` holds (each once, in :data:`SECRET_PATTERNS` order)."""
    return [kind for kind, pattern in SECRET_PATTERNS if re.search(pattern, text)]


def port_listening(port: int) -> bool:
    """True when something accepts a connection on 127.0.0.1:``port``."""
    try:
        with socketlib.create_connection(("127.0.0.1", int(port)), timeout=0.5):
            return True
    except OSError:
        return False


def left_running(state: Mapping[str, Any]) -> list[str]:
    """What of the trial in ``state`` (its trial-state.json) still runs: its tmux session, processes carrying its tag,
    processes in its container, the rehearsal server on its port; ``[]`` when nothing does."""
    from live_trial.session import containment, proctree
    from live_trial.session.backend import Backend

    session = str(state["session"])
    found = []
    if Backend(state.get("socket")).has_session(session):
        found.append(f"the tmux session {session} (run `live-trial backend kill-session {session}`)")
    pids = {p.pid for p in proctree.tagged(session)}
    if state.get("containment"):
        pids |= {p.pid for p in containment.members(containment.Container.from_json(state["containment"]))}
    if pids:
        found.append(f"process(es) {', '.join(map(str, sorted(pids)))} of the trial (run `live-trial reap`)")
    port = (state.get("rehearsal") or {}).get("port")
    if port and port_listening(int(port)):
        found.append(f"the scripted model's server on port {port} (stop it)")
    return found


def guard_problems(workdir: Path, delivery: ds.Delivery, state: Mapping[str, Any], *, report_html: str,
                   running: Callable[[Mapping[str, Any]], list[str]] = left_running) -> list[str]:
    """Each guard of the module docstring that fails for the first artifact in ``workdir``, as one line; ``[]`` when
    all hold. ``state``: the trial's trial-state.json; ``report_html``: the page about to be written (checked before
    it is); ``running``: :func:`left_running` (a fake in unit tests)."""
    problems: list[str] = []
    path = Path(workdir) / VERDICT
    try:
        doc = read_verdict(path)
    except LiveTrialError as exc:
        return [f"schema: {exc.message}"]
    if ds.sha256_of(path) != delivery.doc["artifact"]["sha256"]:
        problems.append(f"schema: {VERDICT} changed since the artifact was created")
    if doc.get("goal_result") is not None or doc["overall"]["verdict"] == "PASS":
        problems.append("never a PASS: the first artifact's goal must be not judged")
    shown = {VERDICT: path.read_text(encoding="utf-8", errors="replace"), REPORT: report_html}
    for name, text in shown.items():
        problems += [f"secret: {name} holds {kind}" for kind in secrets_in(text)]
    problems += [f"still running: {what}" for what in running(state)]
    return problems
