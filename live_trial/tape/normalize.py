"""What the CLI varies between two runs of the same trial, taken out of a Messages API request before it is hashed
(README "Replaying a real trial offline"; what was observed, per CLI release: references/transcript-jsonl.md "Two runs
of one trial, request by request").

Each varying value is replaced by a named placeholder, and the value it stood for is kept as a *binding*
(``{placeholder: value}``), so a replay can put this run's value where the recorded run had its own in the answer it
plays (the path of a file the model writes, the uuid of the record the evaluator cites). Taken out:

- the trial's paths: its workdir (``<workdir>``, which holds the run id and the trial's own folder), the CLI config
  folder (``<config>``), the plugins root (``<plugins>``), the home folder (``<home>``), each also in the form the CLI
  names a project folder with (every character but ``[A-Za-z0-9]`` as ``-``: ``<workdir-slug>``...);
- ``metadata.user_id``: the device id, the account uuid and the session id;
- uuids (the evaluator's index of transcript records), numbered by first appearance: ``<uuid:1>``...;
- dates ``YYYY-MM-DD`` (``Today's date is ...``), numbered: ``<date:1>``...;
- the id of a paste 2.1.332 wraps (``<pasted_content id="4a44">``): ``<paste-id:1>``...;
- the machine's ``OS Version:`` line and the git status block the CLI attaches at start (branch, status, recent
  commits: the commit a tape was recorded at is never the one CI checks out).

Credentials never reach a tape: every value given as ``secrets`` and anything shaped like an Anthropic key is
replaced by ``<redacted>`` first. Pure functions; nothing here reads or writes a file.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["Roots", "Normalized", "normalize", "canonical", "digest", "redact", "slug", "last_message"]

REDACTED = "<redacted>"
#: Anthropic API keys, OAuth tokens and admin keys (``sk-ant-api03-…``, ``sk-ant-oat01-…``).
_KEY = re.compile(r"sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_\-]{16,}")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
_PASTE_ID = re.compile(r'(</?pasted_content id=")([0-9A-Za-z]+)(")')
_OS_VERSION = re.compile(r"(OS Version: )[^\n]*")
#: 2.1.197: ``gitStatus: This is the git status …`` in the system prompt; 2.1.332: ``# gitStatus\nThis is the git
#: status …`` in a ``<system-reminder>``. Both end with the ``Recent commits:`` lines.
_GIT_STATUS = re.compile(r"(gitStatus: |# gitStatus\n)This is the git status at the start of the conversation\."
                         r".*?\nRecent commits:\n(?:[^\n]+(?:\n|\Z))*", re.S)
_USER_ID_FIELDS = (("device_id", "<device_id>"), ("account_uuid", "<account_uuid>"), ("session_id", "<session_id>"))


@dataclass(frozen=True)
class Roots:
    """The paths of one trial a request may name, by placeholder name (``workdir``, ``folder``, ``config``,
    ``plugins``, ``home``). Empty or root (``/``) paths are ignored. The CLI names a project folder after the folder it
    runs in, so the workdir and the trial's own folder are also taken out in that form (:func:`slug`)."""

    paths: tuple[tuple[str, str], ...]

    #: The roots whose project-folder name (:func:`slug`) appears in requests (``<config>/projects/<slug>/memory/``).
    SLUGGED = ("workdir", "folder")

    @classmethod
    def of(cls, **paths: object) -> "Roots":
        """``Roots.of(workdir=..., folder=..., config=..., plugins=..., home=...)``; None values are left out."""
        kept = [(name, str(value).rstrip("/")) for name, value in paths.items() if value is not None]
        return cls(tuple((n, v) for n, v in kept if len(v) > 1))

    def replacements(self) -> list[tuple[str, str]]:
        """``(value, placeholder)`` pairs, longest value first (a config folder inside the workdir is named before
        the workdir)."""
        pairs: dict[str, str] = {}
        for name, value in self.paths:
            pairs.setdefault(value, f"<{name}>")
            if name in self.SLUGGED:
                pairs.setdefault(slug(value), f"<{name}-slug>")
        return sorted(pairs.items(), key=lambda p: -len(p[0]))

    def pattern(self) -> re.Pattern[str] | None:
        """One regex matching any of :meth:`replacements`, longest first; a path only where it ends a path component
        (never ``/root`` inside ``/rootfs``), a project-folder name also before ``-`` (the session's folder may be
        below the root); None without roots."""
        pairs = self.replacements()
        if not pairs:
            return None
        parts = [re.escape(v) + ("" if p.endswith("-slug>") else r"(?![A-Za-z0-9._\-])") for v, p in pairs]
        return re.compile("|".join(parts))


@dataclass
class Normalized:
    """A request with what varies taken out: ``body`` (a new object), ``bindings`` (placeholder -> the value it stood
    for in this request), ``sha256`` (of the whole normalized request) and ``last_sha256`` (of its last message the
    session or the evaluator sent: :func:`last_message`)."""

    body: Any
    bindings: dict[str, str] = field(default_factory=dict)
    sha256: str = ""
    last_sha256: str = ""


def last_message(body: Any) -> Any:
    """The last message of the request ``body`` that the session or the evaluator sent (the prompt, a tool_result,
    the model's own turn): the last one whose role is not ``system``, or None when there is none. The CLI adds
    ``{"role": "system"}`` messages of its own, the same whatever the task: 2.1.197 ends the first request of a
    conversation with its agent listing, 2.1.332 with its ``# Environment`` section (the evaluator's too), so the
    request's very last message would say nothing of the task, the tool result or the evaluator's prompt (observed:
    references/transcript-jsonl.md "Two runs of one trial, request by request")."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return None
    return next((m for m in reversed(messages) if not (isinstance(m, dict) and m.get("role") == "system")), None)


def slug(path: str) -> str:
    """The name the CLI gives a project folder under ``<config>/projects/``: every character of ``path`` that is not
    an ASCII letter or digit becomes ``-`` (observed on 2.1.197 and 2.1.332)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def canonical(doc: Any) -> str:
    """``doc`` as canonical JSON text (sorted keys, no spaces, UTF-8 as is): what a hash is taken of."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(doc: Any) -> str:
    """``sha256:<hex>`` of :func:`canonical` of ``doc``."""
    return "sha256:" + hashlib.sha256(canonical(doc).encode("utf-8", "surrogatepass")).hexdigest()


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every value of ``secrets`` (and of its ``Bearer`` part) and every Anthropic key or token
    replaced by ``<redacted>``."""
    for secret in secrets:
        for value in {secret, secret.removeprefix("Bearer ").strip()}:
            if len(value) >= 8:
                text = text.replace(value, REDACTED)
    return _KEY.sub(REDACTED, text)


class _Numbering:
    """Placeholders ``<kind:N>`` numbered by the first appearance of each value."""

    def __init__(self, bindings: dict[str, str]) -> None:
        self.bindings = bindings
        self.seen: dict[tuple[str, str], str] = {}

    def name(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self.seen:
            self.seen[key] = f"<{kind}:{sum(1 for k in self.seen if k[0] == kind) + 1}>"
            self.bindings[self.seen[key]] = value
        return self.seen[key]


def normalize(body: Any, roots: Roots, secrets: Iterable[str] = ()) -> Normalized:
    """Take out of the request ``body`` (a parsed JSON document; anything else is kept as it is) what varies between
    two runs of the same trial (module docstring), and hash it. Returns a :class:`Normalized`; ``body`` is not
    changed. The session id of ``metadata.user_id`` is bound first, so a uuid equal to it elsewhere is named
    ``<session_id>`` too."""
    bindings: dict[str, str] = {}
    numbering = _Numbering(bindings)
    secrets = tuple(secrets)
    path_re = roots.pattern()
    placeholder_of = dict(roots.replacements())
    fixed: dict[str, str] = {}
    doc = json.loads(json.dumps(body)) if isinstance(body, (dict, list)) else body
    if isinstance(doc, dict):
        _user_id(doc, bindings, fixed)

    def text(s: str) -> str:
        s = redact(s, secrets)
        if path_re is not None:
            def path(m: re.Match[str]) -> str:
                bindings[placeholder_of[m.group(0)]] = m.group(0)
                return placeholder_of[m.group(0)]
            s = path_re.sub(path, s)
        s = _GIT_STATUS.sub(lambda m: m.group(1) + "<git status>\n", s)
        s = _OS_VERSION.sub(r"\1<os version>", s)
        s = _PASTE_ID.sub(lambda m: m.group(1) + numbering.name("paste-id", m.group(2)) + m.group(3), s)
        s = _UUID.sub(lambda m: fixed.get(m.group(0).lower()) or numbering.name("uuid", m.group(0)), s)
        return _DATE.sub(lambda m: numbering.name("date", m.group(0)), s)

    doc = _walk(doc, text)
    return Normalized(body=doc, bindings=bindings, sha256=digest(doc), last_sha256=digest(last_message(doc)))


def _user_id(doc: dict, bindings: dict[str, str], fixed: dict[str, str]) -> None:
    """Replace the device id, account uuid and session id in ``metadata.user_id`` (a JSON text on 2.1.197 and
    2.1.332) by placeholders, binding each; ``fixed`` gets the session id for the rest of the request."""
    meta = doc.get("metadata")
    uid = meta.get("user_id") if isinstance(meta, dict) else None
    if not isinstance(uid, str):
        return
    try:
        parsed = json.loads(uid)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        for key, placeholder in _USER_ID_FIELDS:
            value = parsed.get(key)
            if isinstance(value, str) and value:
                bindings[placeholder] = value
                parsed[key] = placeholder
                if key == "session_id":
                    fixed[value.lower()] = placeholder
        assert isinstance(meta, dict)
        meta["user_id"] = json.dumps(parsed, separators=(",", ":"))
        return
    assert isinstance(meta, dict)
    meta["user_id"] = "<user_id>"
    bindings["<user_id>"] = uid


def _walk(node: Any, text: Any) -> Any:
    """``node`` with ``text`` applied to every string value (keys are kept)."""
    if isinstance(node, str):
        return text(node)
    if isinstance(node, dict):
        return {k: _walk(v, text) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk(v, text) for v in node]
    return node
