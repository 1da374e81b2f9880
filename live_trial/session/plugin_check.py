"""The pinned CLI's own plugin validator, run on every plugin boot will load, before anything starts.

``claude plugin validate <plugin dir>`` (2.1.197) checks the manifest and every skill's frontmatter with the CLI's
own rules, which this project does not re-implement (README "Troubleshooting"). Seen on 2.1.197 (about 0.4 to 2 s per
plugin; references/transcript-jsonl.md "Plugins"): exit 1 with ``✘ Found 1 error:`` / ``  ❯ version: Invalid input:
expected string, received number`` / ``✘ Validation failed`` for ``"version": 1``; exit 0 with ``⚠ Found 2
warnings:`` / ``  ❯ description: No description provided…`` for a plugin the CLI loads with remarks. Each check runs
with a fresh empty ``CLAUDE_CONFIG_DIR`` (the validator writes ``.claude.json`` and ``backups/`` there), so a trial
never touches the user's configuration for it.

An error is a malformed manifest in seed 001's sense (rule 3: fail closed before start): :class:`BootFail` with code
``plugin_not_loaded``, quoting the CLI's line and the file. Warnings are returned for the verdict. A validator that
cannot run or prints nothing it recognises is a warning, never a failure (another CLI version may lack it).

2.1.332 prints more after the load checks: ``Provides:`` (``❯ skills: hello:greet``), ``Hosts not read for …``, and a
"Plugin directory checks for <dir>" block (``✘ Found 2 problems the plugin directory refuses a submission for:`` with
README/LICENSE lines, ``⚠ Found 1 plugin directory warning:`` for a missing icon, ``About these checks:``) that reads
the enclosing git repository's README/LICENSE and, in its own words, "does not change the result below". Those
listing checks judge a submission to the marketplace catalogue, not whether the CLI loads the plugin: a skill author
running a trial needs the load verdict, and the same missing icon in every verdict would bury a real remark. So they
are neither errors nor warnings here (:func:`read_output` keeps them apart for ``doctor``); lines no rule knows become
one warning, so a new format is said, not silently dropped.

The validator is a node process of about 0.6-1 s of CPU: its answers are kept in ``<cache dir>/plugin-validate.json``
(``schemas/plugin-validate-cache.schema.json``; cache dir: env ``LIVE_TRIAL_CACHE_DIR``, else
``$XDG_CACHE_HOME/live-trial``, else ``~/.cache/live-trial``), keyed by the claude executable, the plugin files the
validator reads and the parser that read it (:func:`validator_key`), so repeated trials of an unchanged plugin do not
run it again. Seen with strace on 2.1.197: it opens the plugin folder, ``.claude-plugin/plugin.json`` and
``marketplace.json``, ``agents/``, ``commands/``, ``hooks/hooks.json``, ``skills/`` and each ``skills/*/SKILL.md``
(references/transcript-jsonl.md "Plugins"). The listing checks also read the repository's README/LICENSE, which the key
leaves out: they never reach a verdict. An unreadable or invalid cache, or one of another :data:`CACHE_VERSION`, is
treated as empty.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from live_trial.errors import BootFail, LiveTrialError
from live_trial.stop_reasons import StopReason

VALIDATE_TIMEOUT_S = 60.0
_FILE_RE = re.compile(r"^Validating (?:plugin manifest|skill|[\w -]+?): (?P<path>\S.*)$")
_SECTION_RE = re.compile(r"^[✘⚠]\s+Found \d+ (?P<kind>error|warning)s?:?")
_ITEM_RE = re.compile(r"^\s*❯\s+(?P<text>\S.*)$")
#: 2.1.332's plugin-directory sections: "✘ Found 2 problems the plugin directory refuses a submission for:",
#: "⚠ Found 1 plugin directory warning:", "ℹ Found 1 plugin directory note:".
_LISTING_RE = re.compile(r"^[✘⚠ℹ]\s+Found \d+ (?P<kind>problems? the plugin directory refuses|plugin directory "
                         r"warnings?|plugin directory notes?)\b")
_LISTING_KINDS = {"problem the plugin directory refuses": "refused", "problems the plugin directory refuses": "refused",
                  "plugin directory warning": "warning", "plugin directory warnings": "warning",
                  "plugin directory note": "note", "plugin directory notes": "note"}
#: Headings by their first words: (block, kind). "Plugin directory checks for <dir>." opens the listing block.
_HEADINGS = (("Provides:", ("provides", None)), ("Plugin directory checks for ", ("listing", None)),
             ("About these checks:", ("listing", "about")), ("ℹ Advice", ("listing", "advice")))
#: Lines that say something about the run as a whole and hold no item.
_PLAIN_LINES = ("Hosts not read for:", "Hosts not declared:", "These plugin directory checks do not change",
                "The directory also runs ")
_RESULT_LINES = ("✔", "✘ Validation")
#: Environment the validator runs with besides the caller's (no update check, no telemetry: it may run offline).
QUIET_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
CACHE_SCHEMA = "plugin-validate-cache.schema.json"
CACHE_FILE = "plugin-validate.json"
#: The cache file's format; a file of another version (answers parsed by an older parser) is treated as empty.
CACHE_VERSION = 2
#: Which parser made a kept answer: part of every key, so a parse by another parser is never reused. Bump it with
#: any change to :func:`read_output` that changes what it returns for the same text.
PARSER_ID = "read_output/2 (2.1.197, 2.1.332)"
CACHE_MAX_ENTRIES = 256
#: Files whose content the digest covers (every other file counts by its path only).
_READ_SUFFIXES = (".md", ".json")
_SKIP_DIRS = (".git", "node_modules", "__pycache__")


@dataclass
class Validation:
    """What the validator said about one plugin folder: ``errors`` / ``warnings`` as ``(file, text)`` pairs (the load
    checks only, :func:`parse_output`), ``exit_code``, ``duration_s`` and ``problem`` when it could not be run or
    read."""

    plugin_dir: Path
    exit_code: int | None = None
    duration_s: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    problem: str | None = None
    cached: bool = False
    #: 2.1.332's plugin-directory (listing) checks, ``(section, text)``: kept for ``doctor``, never a verdict remark.
    listing: list[tuple[str, str]] = field(default_factory=list)
    #: Lines of the output no rule of :func:`read_output` knows (a format this harness was not checked on).
    unknown: list[str] = field(default_factory=list)
    #: The validator's result line (``✔ Validation passed``, ``✘ Validation failed``), None when it printed none.
    result: str | None = None


def cache_dir(env: Mapping[str, str]) -> Path:
    """Where the validator's answers are kept: ``LIVE_TRIAL_CACHE_DIR``, ``$XDG_CACHE_HOME/live-trial`` or
    ``~/.cache/live-trial``."""
    if env.get("LIVE_TRIAL_CACHE_DIR"):
        return Path(env["LIVE_TRIAL_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "live-trial"


def validator_key(claude_path: str, plugin_dir: Path, claude_version: str = "") -> str | None:
    """``sha256:<hex>`` over the parser (:data:`PARSER_ID`), the claude executable (real path, size, modification
    time, and ``claude_version`` when the caller knows it: a wrapper script whose target changed) and the plugin's
    files: every
    path under ``plugin_dir`` (so a path the manifest names appearing or going changes it) and the bytes of each
    ``.json``, ``.md`` and ``.claude-plugin/`` file. None when the executable cannot be read (no caching then)."""
    try:
        real = os.path.realpath(claude_path)
        st = os.stat(real)
    except OSError:
        return None
    digest = hashlib.sha256(f"{PARSER_ID}\0{real}\0{st.st_size}\0{st.st_mtime_ns}\0{claude_version}\0".encode())
    root = Path(plugin_dir)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if name.endswith(_READ_SUFFIXES) or rel.startswith(".claude-plugin/"):
                try:
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
                except OSError:
                    digest.update(b"unreadable")
    return "sha256:" + digest.hexdigest()


def _load_cache(path: Path) -> dict[str, Any]:
    from live_trial.jsonfile import read_json

    try:
        doc: dict[str, Any] = read_json(path, CACHE_SCHEMA)
        return doc
    except LiveTrialError:          # missing, unreadable or not of this schema: start afresh
        return {"version": CACHE_VERSION, "entries": {}}


def _store(path: Path, doc: dict[str, Any], fresh: dict[str, Validation]) -> None:
    """Add the validator's own answers (never a validator that could not be used) and write the cache. Never raises."""
    from live_trial.clock import utc_now
    from live_trial.jsonfile import write_json

    entries = doc["entries"]
    for key, result in fresh.items():
        if result.problem is None and result.exit_code is not None:
            entries[key] = {"plugin_dir": str(result.plugin_dir), "exit_code": result.exit_code,
                            "errors": [list(e) for e in result.errors], "warnings": [list(w) for w in result.warnings],
                            "unknown": list(result.unknown),
                            "checked_at": utc_now(), "duration_s": result.duration_s}
    for key in sorted(entries, key=lambda k: entries[k]["checked_at"])[:max(0, len(entries) - CACHE_MAX_ENTRIES)]:
        del entries[key]
    try:
        write_json(path, doc, CACHE_SCHEMA)
    except (OSError, LiveTrialError):
        pass


@dataclass
class ValidatorOutput:
    """What :func:`read_output` found in the validator's text, section by section.

    ``errors`` / ``warnings``: ``(file, text)`` of the load checks (``✘ Found N errors:`` / ``⚠ Found N warnings:``
    under a ``Validating …: <path>`` line), which say whether the CLI loads the plugin. ``provides``: the ``❯`` lines of
    ``Provides:`` (``skills: hello:greet``). ``listing``: ``(section, text)`` of the plugin-directory (marketplace
    listing) checks, ``section`` one of ``refused``, ``warning``, ``note``, ``about``, ``advice``. ``unknown``: lines
    no rule recognised (stripped), in order: a format this parser was not written for.
    """

    errors: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    provides: list[str] = field(default_factory=list)
    listing: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    result: str | None = None


def _heading(line: str) -> tuple[str, str | None] | None:
    """``(block, kind)`` a heading line opens, or None: a load section (``load``, ``error``/``warning``), a listing
    section (``listing``, ``refused``/``warning``/``note``/``about``/``advice``; kind None for the block's first
    line) or ``provides``."""
    if m := _SECTION_RE.match(line):
        return "load", m.group("kind")
    if m := _LISTING_RE.match(line):
        return "listing", _LISTING_KINDS[m.group("kind")]
    for prefix, heading in _HEADINGS:
        if line.startswith(prefix):
            return heading
    return None


def read_output(text: str, plugin_dir: Path) -> ValidatorOutput:
    """Every section of ``claude plugin validate``'s output (2.1.197 and 2.1.332 formats: references/transcript-jsonl.md
    "Validator, nested variables and the doctor probe"), as a :class:`ValidatorOutput`.

    Each ``❯`` line belongs to the heading above it, never to an earlier section: 2.1.332 prints ``Provides:``, ``Hosts
    not read for …`` and the "Plugin directory checks …" block after the load checks, and their lines are not load
    remarks. An indented line that is not a ``❯`` line continues the item above it (``Fix: …``). Never raises.
    """
    out = ValidatorOutput()
    current, block, kind, item = str(plugin_dir), None, None, False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if m := _FILE_RE.match(line):
            current, block, kind, item = m.group("path").strip(), "file", None, False
        elif heading := _heading(line):
            (block, kind), item = heading, False
        elif (m := _ITEM_RE.match(raw)) and (kind or block == "provides"):
            text_ = m.group("text").strip()
            if block == "load":
                (out.errors if kind == "error" else out.warnings).append((current, text_))
            elif block == "listing" and kind:
                out.listing.append((kind, text_))
            elif block == "provides":
                out.provides.append(text_)
            item = True
        elif raw[:1].isspace() and item:
            continue                                    # "    Fix: …" and other continuations of the item above
        elif line.startswith(_RESULT_LINES):
            block, kind, item = None, None, False
            out.result = line
        elif not line.startswith(_PLAIN_LINES):
            out.unknown.append(line)
    return out


def parse_output(text: str, plugin_dir: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(errors, warnings)`` of the load checks in the validator's output (:func:`read_output`): each ``❯`` line under
    ``✘ Found N errors`` / ``⚠ Found N warnings``, paired with the file named by the ``Validating …: <path>`` line above
    it. The plugin-directory (listing) checks of 2.1.332 are in neither list: they judge a submission to the
    marketplace catalogue (LICENSE, icon, README length), not whether the CLI loads the plugin."""
    found = read_output(text, plugin_dir)
    return found.errors, found.warnings


def validate_plugins(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str], *,
                     timeout_s: float = VALIDATE_TIMEOUT_S, cache: bool = True,
                     claude_version: str = "") -> list[Validation]:
    """Run ``claude plugin validate`` on every folder at once and return one :class:`Validation` each (same order).

    ``env``: the trial's child environment (its ``CLAUDE_CONFIG_DIR`` is replaced by a fresh temporary folder per
    plugin, removed afterwards). With ``cache``, a plugin whose :func:`validator_key` is in the cache gets the kept
    answer (``Validation.cached``; no process). Never raises for the validator's own failures (see
    ``Validation.problem``).
    """
    cache_path = cache_dir(env) / CACHE_FILE
    doc: dict[str, Any] = _load_cache(cache_path) if cache else {"version": CACHE_VERSION, "entries": {}}
    keys = [validator_key(claude_path, Path(d), claude_version) if cache else None for d in plugin_dirs]
    known: dict[int, Validation] = {}
    for i, (plugin_dir, key) in enumerate(zip(plugin_dirs, keys)):
        entry = doc["entries"].get(key) if key else None
        if entry is not None:
            known[i] = Validation(Path(plugin_dir), exit_code=entry["exit_code"], cached=True,
                                  errors=[tuple(e) for e in entry["errors"]],
                                  warnings=[tuple(w) for w in entry["warnings"]], unknown=entry["unknown"])
    ran = _run_validator(claude_path, [d for i, d in enumerate(plugin_dirs) if i not in known], env, timeout_s)
    out, fresh = [], {}
    for i, key in enumerate(keys):
        if i in known:
            out.append(known[i])
            continue
        result = ran.pop(0)
        out.append(result)
        if key:
            fresh[key] = result
    if cache and fresh:
        _store(cache_path, doc, fresh)
    return out


def _end_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the validator's process group and reap it; its pipe is closed, not drained (a grandchild that
    escaped the group cannot keep the harness waiting)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    if proc.stdout is not None:
        proc.stdout.close()
    proc.wait()


def _run_validator(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str],
                   timeout_s: float) -> list[Validation]:
    """One validator process per folder, all at once; their results in the same order."""
    runs: list[tuple[Validation, subprocess.Popen[str] | None, str, float]] = []
    for plugin_dir in plugin_dirs:
        config = tempfile.mkdtemp(prefix="lt-validate-")
        child = {**env, **QUIET_ENV, "CLAUDE_CONFIG_DIR": config}
        started = time.monotonic()
        try:
            # its own process group: a validator that does not answer is ended with every process it started, so
            # none of them holds the pipe open and keeps the harness waiting past ``timeout_s``
            proc = subprocess.Popen([claude_path, "plugin", "validate", str(plugin_dir)], stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=child,
                                    start_new_session=True)
        except OSError as exc:
            proc = None
            runs.append((Validation(Path(plugin_dir), problem=f"could not start: {exc}"), None, config, started))
            continue
        runs.append((Validation(Path(plugin_dir)), proc, config, started))
    out = []
    for result, proc, config, started in runs:
        try:
            if proc is not None:
                try:
                    text, _ = proc.communicate(timeout=timeout_s)
                    result.exit_code = proc.returncode
                    found = read_output(text or "", result.plugin_dir)
                    result.errors, result.warnings = found.errors, found.warnings
                    result.listing, result.unknown, result.result = found.listing, found.unknown, found.result
                    if result.exit_code != 0 and not result.errors:
                        tail = " | ".join(ln.strip() for ln in (text or "").splitlines() if ln.strip())[-300:]
                        result.problem = (f"exit {result.exit_code} without a validation error line: "
                                          f"{tail or '(no output)'}")
                except subprocess.TimeoutExpired:
                    _end_group(proc)
                    result.problem = f"no answer within {timeout_s:.0f}s"
            result.duration_s = round(time.monotonic() - started, 3)
        finally:
            shutil.rmtree(config, ignore_errors=True)
        out.append(result)
    return out


def check_plugins(claude_path: str, plugin_dirs: Sequence[Path], env: Mapping[str, str],
                  checks: list[dict[str, Any]] | None = None) -> list[str]:
    """Validate every plugin boot will load; return the warnings (one line each) for the verdict. ``checks`` (when
    given) gets ``{plugin, cached, duration_s}`` per plugin: whether the kept answer was used, and how long the
    validator process took.

    Raises :class:`BootFail` (code ``plugin_not_loaded``, exit 2) naming the plugin, the file and the CLI's own line
    for the first plugin with an error: the CLI would drop it silently (seed 001 rule 3: fail closed before start).
    """
    warnings: list[str] = []
    for result in validate_plugins(claude_path, plugin_dirs, env):
        if checks is not None:
            checks.append({"plugin": result.plugin_dir.name, "cached": result.cached, "duration_s": result.duration_s})
        if result.errors:
            path, text = result.errors[0]
            more = f" (+{len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
            raise BootFail(f"the CLI would not load plugin {result.plugin_dir.name}: `claude plugin validate` says "
                           f"\"{text}\"{more} in {path}", where=str(result.plugin_dir),
                           fix="fix the named field (the CLI drops a plugin whose manifest it rejects, without a word "
                               "on screen), then run again", code=StopReason.PLUGIN_NOT_LOADED,
                           details={"validator": [f"{p}: {t}" for p, t in result.errors],
                                    "duration_s": result.duration_s})
        warnings += [f"plugin {result.plugin_dir.name}: {text} ({os.path.basename(path)})"
                     for path, text in result.warnings]
        if result.unknown:
            warnings.append(f"plugin {result.plugin_dir.name}: the CLI's plugin validator printed "
                            f"{len(result.unknown)} line(s) this harness does not know, first: "
                            f"\"{result.unknown[0][:160]}\" (run "
                            "`live-trial doctor --cli`)")
        if result.problem:
            warnings.append(f"plugin {result.plugin_dir.name}: the CLI's plugin validator could not be used "
                            f"({result.problem})")
    return warnings
