"""Whether a real (non-rehearsal) trial can start on this machine: ``live-trial doctor`` with no ``--cli``, and the
check ``run`` makes before a live trial (README "Running a real trial", "Troubleshooting").

One :class:`Line` per thing a real trial needs, in this order and format (this module owns it)::

    claude: ok 2.1.332 at /path/claude (in the supported range 2.1.197–2.1.332)
    config: ok /home/me/.claude (.claude.json: set-up done)
    login: ok api key from ANTHROPIC_API_KEY, approved in .claude.json (claude auth status)
    trust: ok the eval root /work/eval-log is under /work, trusted in .claude.json
    tmux: ok 3.3a
    sandbox: ok running as root with IS_SANDBOX=1
    DOCTOR: READY (a live trial can start)

A line that does not hold reads ``<name>: MISSING <what is wrong>; fix: <what to do>``, and the summary
``DOCTOR: NOT READY (<n> missing: <names>)``. ``login`` is the CLI's own answer (``claude auth status --json``,
2.1.197 and 2.1.332: local, it asks no service; references/transcript-jsonl.md "The live path"), and for an
``ANTHROPIC_API_KEY`` whether this config approved it (``customApiKeyResponses``: the key's last 20 characters),
since the CLI otherwise stops at start to ask. The reads are here; running ``claude auth status`` is :func:`auth_status`
with an injectable runner.
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from live_trial.jsonfile import parse_json

AUTH_TIMEOUT_S = 20.0
#: How many trailing characters of ``ANTHROPIC_API_KEY`` the CLI keeps in ``customApiKeyResponses`` (2.1.197, 2.1.332).
KEY_SUFFIX_CHARS = 20
#: The lines ``run`` refuses a live trial on (the others it reports its own way: an untrusted folder and root without
#: IS_SANDBOX are refused by their own checks, tmux or claude missing is BLOCKED).
REFUSED_ON = ("config", "login")

Runner = Callable[[list[str], Mapping[str, str]], "subprocess.CompletedProcess[str]"]


@dataclass(frozen=True)
class Line:
    """One thing a live trial needs: ``name`` (claude, config, login, trust, tmux, sandbox), ``ok``, ``text`` (what
    was found, one line) and ``fix`` (what to do; "" when ok)."""

    name: str
    ok: bool
    text: str
    fix: str = ""

    def line(self) -> str:
        """The printed line (module docstring format)."""
        if self.ok:
            return f"{self.name}: ok {self.text}"
        return f"{self.name}: MISSING {self.text}; fix: {self.fix}"


def summary(lines: list[Line]) -> str:
    """``DOCTOR: READY (...)`` when every line holds, else ``DOCTOR: NOT READY (<n> missing: <names>)``."""
    missing = [ln.name for ln in lines if not ln.ok]
    if not missing:
        return "DOCTOR: READY (a live trial can start)"
    return f"DOCTOR: NOT READY ({len(missing)} missing: {', '.join(missing)})"


def claude_json(env: Mapping[str, str]) -> Path:
    """The Claude Code config file a real trial's CLI reads: ``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is
    set, else ``~/.claude.json``."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser() / ".claude.json"
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude.json"


def config_folder(env: Mapping[str, str]) -> Path:
    """The config folder in use: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".claude"


def read_config(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The parsed ``.claude.json`` (:func:`claude_json`), or None when it is missing or not a JSON object."""
    try:
        doc = parse_json(claude_json(env).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def trusted_above(folder: Path, env: Mapping[str, str]) -> Path | None:
    """The folder (``folder`` itself or one above it) trusted in the config (``projects.<path>
    .hasTrustDialogAccepted``), or None. Observed on 2.1.197: a folder under a trusted one boots with no question."""
    projects = (read_config(env) or {}).get("projects")
    trusted = {os.path.normpath(k) for k, v in (projects if isinstance(projects, dict) else {}).items()
               if isinstance(v, dict) and v.get("hasTrustDialogAccepted")}
    folder = Path(folder).resolve()
    return next((p for p in (folder, *folder.parents) if str(p) in trusted), None)


#: What ``claude auth status`` reads of a config (besides the environment): copied into a private folder for it.
AUTH_FILES = (".credentials.json", "settings.json")


def auth_status(claude_path: str, env: Mapping[str, str], runner: Runner | None = None) -> dict[str, Any] | None:
    """``claude auth status --json`` parsed (``{"loggedIn", "authMethod", "apiKeySource"?, ...}``), or None when the
    CLI has no such command or gave no JSON. Exit 1 with ``loggedIn: false`` is an answer, not a failure.

    The CLI rewrites the config it runs on (``.claude.json`` and a ``backups/`` copy, seen on 2.1.332; it creates
    them in an empty folder), so it runs on a private copy of what it reads (:func:`claude_json` and
    :data:`AUTH_FILES` of :func:`config_folder`), removed afterwards: a doctor, or a refused ``run``, changes nothing of
    the person's config (README "Running a real trial")."""
    import shutil
    import tempfile

    run = runner or _run
    with tempfile.TemporaryDirectory(prefix="live-trial-auth-") as private:
        os.chmod(private, 0o700)
        sources = [(claude_json(env), ".claude.json")] + [(config_folder(env) / n, n) for n in AUTH_FILES]
        for source, name in sources:
            if source.is_file():
                shutil.copyfile(source, Path(private) / name)
                os.chmod(Path(private) / name, 0o600)
        try:
            proc = run([claude_path, "auth", "status", "--json"], {**env, "CLAUDE_CONFIG_DIR": private})
        except (OSError, subprocess.TimeoutExpired):
            return None
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and "loggedIn" in doc else None


def _run(argv: list[str], env: Mapping[str, str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(argv, capture_output=True, text=True, timeout=AUTH_TIMEOUT_S, env=dict(env),
                          stdin=subprocess.DEVNULL)


def config_line(env: Mapping[str, str]) -> Line:
    """``config``: the folder in use and whether its ``.claude.json`` says the first-run set-up is done."""
    where, doc = config_folder(env), read_config(env)
    fix = "run `claude` once in a terminal and finish what it shows (theme, login or key), then run this again"
    if doc is None:
        return Line("config", False, f"{where}: {claude_json(env)} is missing (claude never ran with this config)",
                    fix)
    if not doc.get("hasCompletedOnboarding"):
        return Line("config", False, f"{where}: the first-run set-up is not finished ({claude_json(env)})", fix)
    return Line("config", True, f"{where} ({claude_json(env).name}: set-up done)")


def login_line(status: dict[str, Any] | None, env: Mapping[str, str]) -> Line:
    """``login``: the CLI's own answer (``status``, from :func:`auth_status`; None: it could not tell) and, for a key
    from ``ANTHROPIC_API_KEY``, whether this config approved it."""
    if status is None:
        return Line("login", True, "unknown: this claude has no `claude auth status` (the trial finds out at start)")
    if not status.get("loggedIn"):
        return Line("login", False, "not logged in (claude auth status: loggedIn false, no key, no token)",
                    "run `claude auth login` (or `/login` in claude), or export ANTHROPIC_API_KEY")
    method = str(status.get("authMethod") or "unknown")
    key = env.get("ANTHROPIC_API_KEY") or ""
    if method != "api_key" or status.get("apiKeySource") != "ANTHROPIC_API_KEY" or not key:
        source = f" from {status['apiKeySource']}" if status.get("apiKeySource") else ""
        return Line("login", True, f"logged in ({method}{source}; claude auth status)")
    responses = (read_config(env) or {}).get("customApiKeyResponses")
    responses = responses if isinstance(responses, dict) else {}
    suffix = key[-KEY_SUFFIX_CHARS:]
    shown = f"ANTHROPIC_API_KEY (…{key[-4:]})"
    if suffix in (responses.get("rejected") or []):
        return Line("login", False, f"{shown} was refused in this config: claude will not use it",
                    f"remove it from customApiKeyResponses.rejected in {claude_json(env)}, or unset it to use "
                    "your login")
    if suffix not in (responses.get("approved") or []):
        return Line("login", False, f"{shown} is not approved in this config yet: claude would stop at start to "
                                    "ask \"Do you want to use this API key?\"",
                    "run `claude` once in a terminal with this key exported and answer Yes, or unset "
                    "ANTHROPIC_API_KEY to use your login")
    return Line("login", True, f"api key from {shown}, approved in {claude_json(env).name} (claude auth status)")


def trust_line(folder: Path, env: Mapping[str, str], *, what: str = "the eval root") -> Line:
    """``trust``: whether ``folder`` (the eval root; DIR for ``--in-place``) or a folder above it is trusted."""
    above = trusted_above(folder, env)
    if above is None:
        return Line("trust", False, f"{what} {Path(folder).resolve()} is not under a folder trusted in "
                                    f"{claude_json(env)}",
                    f"run `claude` once in {Path(folder).resolve()} (or a folder above it) and choose \"Yes, I "
                    "trust this folder\"")
    return Line("trust", True, f"{what} {Path(folder).resolve()} is under {above}, trusted in "
                               f"{claude_json(env).name}")


def sandbox_line(env: Mapping[str, str], euid: int | None = None) -> Line:
    """``sandbox``: as root, Claude Code accepts bypass-permissions mode only with ``IS_SANDBOX=1``."""
    root = (os.geteuid() if euid is None else euid) == 0
    if not root:
        return Line("sandbox", True, "not root: IS_SANDBOX is not needed")
    if env.get("IS_SANDBOX") == "1":
        return Line("sandbox", True, "running as root with IS_SANDBOX=1")
    return Line("sandbox", False, "running as root without IS_SANDBOX=1: claude refuses bypass-permissions mode",
                "in a disposable sandbox or container export IS_SANDBOX=1; otherwise run as a normal user")


def claude_line(claude: Any) -> Line:
    """``claude``: the one a trial would use (a :class:`live_trial.session.claude_bin.ClaudeBinary`), its version and
    whether it lies in the supported range; outside it a trial still starts, with a warning in the verdict."""
    from live_trial.session.claude_bin import VERIFIED_RANGE

    if claude.in_verified_range:
        return Line("claude", True, f"{claude.version} at {claude.path} (in the supported range {VERIFIED_RANGE})")
    return Line("claude", True, f"{claude.version} at {claude.path} is outside the supported range {VERIFIED_RANGE} "
                                f"(a trial warns; `live-trial doctor --cli {claude.path}` checks it)")


def check_live(env: Mapping[str, str], *, folder: Path, what: str = "the eval root", claude_bin: str | None = None,
               runner: Runner | None = None, euid: int | None = None) -> list[Line]:
    """Every line of the module docstring, in order, for a real trial whose folder is ``folder`` (the eval root, or
    DIR in place: ``what`` names it) started with ``env`` (the person's environment) and ``claude_bin`` (None: the
    documented search). Runs ``claude --version`` and ``claude auth status`` (about 1 s) and ``tmux -V``; raises
    nothing: a missing tool is a ``MISSING`` line."""
    from live_trial.errors import LiveTrialError
    from live_trial.session.backend import Backend
    from live_trial.session.claude_bin import find_claude
    from live_trial.session.environment import child_env

    lines: list[Line] = []
    try:
        claude = find_claude(claude_bin, env)
    except LiveTrialError as exc:
        lines.append(Line("claude", False, exc.problem, exc.fix or "run `make setup`"))
        claude = None
    else:
        lines.append(claude_line(claude))
    lines.append(config_line(env))
    if claude is None:
        lines.append(Line("login", False, "not known without claude", "install claude first (`make setup`)"))
    else:
        lines.append(login_line(auth_status(claude.path, child_env(env, {}, rehearsal=False), runner), env))
    lines.append(trust_line(folder, env, what=what))
    version = Backend().tmux_version()
    lines.append(Line("tmux", True, version) if version else
                 Line("tmux", False, "tmux not found", "`apt-get install tmux` (or `make setup` as root)"))
    lines.append(sandbox_line(env, euid))
    return lines
