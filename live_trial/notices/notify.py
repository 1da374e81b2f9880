"""Plain-language notifications for a person who does not know the system (seed 000 "通知文の書き方").

Texts come from the catalogues ``references/notifications.<lang>.json`` (one per language):

- ``templates.<kind>.text``: ``{objective}``, ``{detail}`` and ``{next}`` (what to do next) are filled in;
  ``templates.<kind>.generic`` is the fallback sentence used when a filled-in text still fails the forbidden-token
  check.
  Kinds: done ✅, mostly_done 🟡, not_working ⚠️, flaky ⚠️ (a repeated case passed some of its tries and not
  others), confirmed ✅ (a watch was confirmed), watch_failed ⚠️ (third failed check), watch_expired ⚠️ (7 days
  without confirmation).
- ``stop_reasons.<code>``: one plain sentence per row of :class:`~live_trial.stop_reasons.StopReason`, and no other;
  ``reasons.<code>``: one per other status word / error code of the harness;
  ``families.<prefix>``: the sentence for other codes starting with bad_, unknown_, missing_, no_.
- ``exit_codes.<command>.<code>``: one plain sentence per exit code of each command.
- ``trial``: the sentences of a trial's summary and of the message that ends it (:mod:`live_trial.notices.outcome`).

The language is ``--lang``, else env ``LIVE_TRIAL_LANG``, else Japanese: the seed that defines these
notifications asks for Japanese that a high-school student understands, and the people running these
trials read Japanese first.

Forbidden tokens (checked over every text before it is sent, see :func:`forbidden_tokens`): every status
word and error code of the harness (and anything snake_case or UPPER_SNAKE), internal field names, every subcommand
written as a command and every flag, anything shaped like a uuid, run id, session name, watch id, hash or path, and
priority tags like [P1]. The user's own names that a caller passes as ``allowed`` (the plugin, the skill,
``plugin:skill``, the file names the skill promises) are not internal codes and stay: a person needs them to know what
the message is about. A text that fails is sanitised (the offending parts of the filled-in values are replaced by a
placeholder) and, if it still fails, replaced by the generic sentence; the record says which happened.

Sinks: ``<eval-root>/notifications.jsonl`` always (one schema-valid record per notification, including the
webhook outcome); a webhook (JSON POST ``{"content": text}``, Discord style) when env
``LIVE_TRIAL_WEBHOOK_URL`` is set, with one total deadline per attempt (connect, send and read together) and one
retry after a quick failure. A failed send is recorded, never lost:
:func:`live_trial.notices.resend.resend_failed` (called by ``watch.daily_maintenance``, so by ``run`` and
``watch daily``, and by ``plan``) sends the same
text again, at most once an hour per notice, until one attempt gets through (seed 000: a person is always told
the outcome in plain words).
"""
from __future__ import annotations

import os
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from live_trial import workdir_files as wf
from live_trial.acceptance.criteria import elsewhere_note
from live_trial.clock import utc_now
from live_trial.errors import LiveTrialError, RefusedInput
from live_trial.jsonfile import append_jsonl, parse_json, validate
from live_trial.notices.catalogue import DEFAULT_LANG, LANGS, catalogue, resolve_lang
from live_trial.notices.outcome import compose, joined
from live_trial.notices.outcome import find_key as _find_key
from live_trial.notices.webhook import WEBHOOK_TIMEOUT_S, Poster, send_webhook
from live_trial.transcript.status import TurnState
from live_trial.workdir_files import NOTIFICATIONS_FILE

KINDS = ("done", "mostly_done", "not_working", "flaky", "confirmed", "watch_failed", "watch_expired")
WEBHOOK_ENV = "LIVE_TRIAL_WEBHOOK_URL"
MAX_OBJECTIVE_CHARS = 200
MAX_DETAIL_CHARS = 600

# Subcommands of the CLI (kept in step with live_trial.cli; a test compares them with the real parser).
SUBCOMMANDS = ("run", "prepare", "plan", "boot", "send", "backend", "status", "poll", "collect", "reap", "evaluate",
               "watch", "verdict", "rehearsal", "self-test", "due", "check", "sweep", "report", "ls", "show", "reasons",
               "merge", "doctor", "delivery", "ticket")
# Status words and codes that are not keys of the catalogues' reason tables.
EXTRA_CODES = ("WARN", TurnState.BUSY_GENERATING, TurnState.BUSY_TOOL, TurnState.IDLE_TURN_COMPLETE,
               "SCHEMA_INVALID", "OK", "NG",
               "daily_iter_cap", "runner_error", "noop", "failed_check", "mostly_done", "not_working",
               "watch_failed", "watch_expired", "goal_result", "overall", "lastCheckAt", "lastListedAt")


def _error_codes() -> set[str]:
    out: set[str] = set()
    stack = [LiveTrialError]
    while stack:
        cls = stack.pop()
        out.update({cls.status, cls.code})
        stack.extend(cls.__subclasses__())
    return out


@lru_cache(maxsize=None)
def internal_codes() -> tuple[str, ...]:
    """Every status word and error code of the harness: catalogue reason keys, error classes, extras."""
    codes = set(EXTRA_CODES) | _error_codes()
    for lang in LANGS:
        codes.update(catalogue(lang)["reasons"], catalogue(lang)["stop_reasons"])
    return tuple(sorted(codes, key=lambda c: (-len(c), c)))


def _code_pattern() -> str:
    parts = []
    for code in internal_codes():
        if code.isupper() or "_" in code or any(ch.isupper() for ch in code[1:]) or code in ("noop",):
            parts.append(re.escape(code))
    return r"(?<![A-Za-z0-9_])(?:" + "|".join(parts) + r")(?![A-Za-z0-9_])"


_ASCII_PATH = r"[A-Za-z0-9_.~@%+=:\-]*[/\\][A-Za-z0-9_.~@%+=:/\\\-]*"
_SHAPES: list[tuple[str, str]] = [
    ("uuid", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("run_id", r"\b\d{8}T\d{6}(?:-[0-9a-fA-F]{4})?\b"),
    ("session", r"(?<![A-Za-z0-9_])lt-[A-Za-z0-9_-]+"),
    ("watch_id", r"(?<![A-Za-z0-9_])w-[0-9a-f]{8}\b"),
    ("hash", r"\bsha256:[0-9a-fA-F]*|\b[0-9a-fA-F]{16,}\b"),
    ("path", _ASCII_PATH),
    ("file", r"[A-Za-z0-9_.\-]+\.(?:json|jsonl|md|py|txt|ya?ml|log|sh|toml|cfg|ini|csv|lock)\b"),
    ("priority_tag", r"[\[【［]\s*[Pp]\s*\d+\s*[\]】］]"),
    ("flag", r"(?<![\w-])--?[A-Za-z][\w-]*"),
    ("code_span", r"`[^`]*`"),
    ("program", r"(?<![A-Za-z0-9_])(?:live-trial|live_trial|python3? -m)(?![A-Za-z0-9_])"),
    ("skill_id", r"(?<![A-Za-z0-9_])[a-z][a-z0-9-]*:[a-z][a-z0-9-]*(?![A-Za-z0-9_])"),
    ("field_name", r"(?<![A-Za-z0-9_])[a-z]+[A-Z][A-Za-z]+(?![A-Za-z0-9_])"),
    ("snake_code", r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![A-Za-z0-9])"),
]


@lru_cache(maxsize=None)
def _patterns(lang: str) -> tuple[tuple[str, re.Pattern], ...]:
    subs = "|".join(re.escape(s) for s in SUBCOMMANDS)
    pats = [("code", re.compile(_code_pattern()))]
    pats += [(name, re.compile(rx)) for name, rx in _SHAPES]
    pats.append(("subcommand", re.compile(rf"(?<![A-Za-z0-9_-])(?:{subs})(?=\s+--?[A-Za-z])")))
    if lang == "ja":  # a lone English command name in Japanese prose (not a word inside an English phrase)
        pats.append(("subcommand", re.compile(rf"(?<![A-Za-z0-9_-] )(?<![A-Za-z0-9_-])(?:{subs})"
                                              rf"(?![A-Za-z0-9_-])(?! [A-Za-z0-9])", re.IGNORECASE)))
    return tuple(pats)


def _allowed_ranges(text: str, allowed: Iterable[str]) -> list[tuple[int, int]]:
    """Where the user's own names stand in ``text`` as whole names (not inside a longer name or a path)."""
    ranges = []
    for name in sorted({n for n in allowed if n and n.strip()}, key=len, reverse=True):
        rx = re.compile(r"(?<![A-Za-z0-9_./\\-])" + re.escape(name) + r"(?![A-Za-z0-9_/\\-]|\.[A-Za-z0-9])")
        ranges += [(m.start(), m.end()) for m in rx.finditer(text)]
    return ranges


def forbidden_spans(text: str, lang: str = DEFAULT_LANG,
                    allowed: Iterable[str] = ()) -> list[tuple[int, int, str, str]]:
    """Return ``(start, end, token, kind)`` for each forbidden token in ``text``, merged and in order. A token that
    lies wholly inside one of the ``allowed`` names (the user's own: plugin, skill, file names) is not one."""
    spans = []
    keep = _allowed_ranges(text, allowed)
    for kind, rx in _patterns(lang):
        spans += [(m.start(), m.end(), kind) for m in rx.finditer(text) if m.end() > m.start()
                  and not any(a <= m.start() and m.end() <= b for a, b in keep)]
    spans.sort()
    merged: list[list] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    return [(s, e, text[s:e], k) for s, e, k in merged]


def forbidden_tokens(text: str, lang: str = DEFAULT_LANG, allowed: Iterable[str] = ()) -> list[str]:
    """The forbidden tokens in ``text`` (empty list when it may be sent as is); ``allowed``: the user's own names."""
    return [tok for _, _, tok, _ in forbidden_spans(text, lang, allowed)]


def sanitise(text: str, lang: str = DEFAULT_LANG, allowed: Iterable[str] = ()) -> tuple[str, list[str]]:
    """Replace each forbidden token by the catalogue placeholder; return ``(clean_text, removed_tokens)``. A path
    whose last part is one of the ``allowed`` names keeps that name (``out/greeting.txt`` -> ``greeting.txt``): the
    folders are the harness's, the file is the user's."""
    allowed = set(allowed)
    spans = forbidden_spans(text, lang, allowed)
    if not spans:
        return text, []
    placeholder = catalogue(lang)["placeholder"]
    out, pos = [], 0
    for start, end, token, _ in spans:
        out.append(text[pos:start])
        name = re.split(r"[/\\]", token)[-1]
        if name in allowed:
            out.append(name)
        elif not "".join(out).rstrip().endswith(placeholder):
            out.append(placeholder)
        pos = end
    out.append(text[pos:])
    return "".join(out), [tok for _, _, tok, _ in spans]


def _clip(text: str, limit: int) -> str:
    text = " ".join((text or "").split()) if "\n" not in (text or "") else (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(kind: str, objective: str, detail: str, lang: str, *, next_step: str = "",
           allowed: Iterable[str] = ()) -> dict:
    """Fill the ``kind`` template and check it; return ``{"text", "sanitised", "fallback", "removed"}``.

    ``next_step`` fills ``{next}`` (templates that have it); ``allowed``: the user's own names, which stay.
    The filled-in values are sanitised when the text fails the forbidden-token check; when it still fails
    (a bad template), the kind's generic sentence is used. Raises RefusedInput for an unknown kind.
    """
    if kind not in KINDS:
        raise RefusedInput(f"unknown notification kind {kind!r}", where="kind", fix=f"use one of: {', '.join(KINDS)}",
                           code="unknown_kind")
    tmpl = catalogue(lang)["templates"][kind]
    objective = _clip(objective, MAX_OBJECTIVE_CHARS) or "-"
    detail = _clip(detail, MAX_DETAIL_CHARS) or "-"
    allowed = tuple(allowed)
    next_step = _clip(next_step, MAX_DETAIL_CHARS) or "-"
    text = tmpl["text"].format(objective=objective, detail=detail, next=next_step)
    result = {"text": text, "sanitised": False, "fallback": False, "removed": []}
    if not forbidden_tokens(text, lang, allowed):
        return result
    (clean_obj, rem1), (clean_det, rem2), (clean_next, rem3) = (sanitise(v, lang, allowed)
                                                                for v in (objective, detail, next_step))
    text = tmpl["text"].format(objective=clean_obj, detail=clean_det, next=clean_next)
    result.update(sanitised=True, removed=rem1 + rem2 + rem3, text=text)
    leftover = forbidden_tokens(text, lang, allowed)
    if leftover:
        result.update(text=tmpl["generic"], fallback=True, removed=result["removed"] + leftover)
    return result



def notify(eval_root: Path, kind: str, objective: str, detail: str, lang: str | None = None, *,
           next_step: str = "", allowed: Iterable[str] = (),
           refs: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
           clock: Callable[[], str] = utc_now, post: Poster | None = None,
           sleep: Callable[[float], None] = time.sleep, timeout_s: float = WEBHOOK_TIMEOUT_S) -> dict:
    """Render, check, send and record one notification; return the record appended to notifications.jsonl.

    ``next_step``: what a person should do next (the ``{next}`` of the template); ``allowed``: the user's own names
    the text may show (:func:`forbidden_spans`).
    ``refs`` (watch id, run id, target...) go into the record only, never into the text. The webhook is
    used when env LIVE_TRIAL_WEBHOOK_URL is set; its outcome (sent / failed after one retry / not
    configured) is part of the record. Raises RefusedInput for an unknown kind or language.
    """
    env = os.environ if env is None else env
    lang = resolve_lang(lang, env)
    rendered = render(kind, objective, detail, lang, next_step=next_step, allowed=allowed)
    url = (env.get(WEBHOOK_ENV) or "").strip()
    if url:
        webhook = send_webhook(url, rendered["text"], timeout_s=timeout_s, post=post, sleep=sleep)
    else:
        webhook = {"status": "not_configured", "attempts": 0, "http_status": None, "error": None}
    record = {
        "at": clock(), "kind": kind, "lang": lang, "text": rendered["text"],
        "objective": objective or "", "detail": detail or "",
        "refs": {str(k): str(v) for k, v in (refs or {}).items()},
        "check": {"sanitised": rendered["sanitised"], "fallback": rendered["fallback"],
                  "removed": rendered["removed"]},
        "webhook": webhook,
    }
    validate(record, "notification.schema.json", what=NOTIFICATIONS_FILE)
    append_jsonl(Path(eval_root) / NOTIFICATIONS_FILE, record)
    return record


def _read_records(path: Path) -> list[dict]:
    """The records of a notifications.jsonl in file order; lines that are not a JSON object are skipped."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            doc = parse_json(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            out.append(doc)
    return out


def read_notifications(eval_root: Path) -> list[dict]:
    """All records of ``<eval-root>/notifications.jsonl`` in file order (empty when there is none); a line that is
    not a JSON object (a torn write, a hand edit) is skipped, never raised."""
    return _read_records(Path(eval_root) / NOTIFICATIONS_FILE)


def _trial_workdir(eval_root: Path, doc: Mapping[str, Any], workdir: Path | None) -> Path | None:
    """The trial's workdir: ``workdir``, else found from eval_root, plugin, skill and run id, else the verdict's."""
    if workdir is None and _find_key(doc, "skill") and _find_key(doc, "run_id"):
        from live_trial.acceptance.evallog import workdir_path
        workdir = workdir_path(Path(eval_root), _find_key(doc, "plugin"), str(_find_key(doc, "skill")),
                               str(_find_key(doc, "run_id")))
    found = workdir or _find_key(doc, "workdir")
    return Path(str(found)) if found else None


def _session_status(workdir: Path | None) -> str | None:
    """The status the session reported in its completion marker
    (:func:`live_trial.judge.citable.marker_status`), None without a workdir or a status."""
    if workdir is None:
        return None
    from live_trial.judge.citable import marker_status

    return marker_status(workdir)


def _trial_objective(workdir: Path | None) -> str | None:
    """The skill's description (its promise): as kept in the workdir's evaluation.json, else (a trial the evaluator
    never saw) as its SKILL.md says, found from trial-state.json's target and plugins root; None when neither."""
    if not workdir:
        return None
    try:
        return parse_json((Path(workdir) / wf.EVALUATION).read_text(encoding="utf-8")).get("description") or None
    except (OSError, ValueError, RecursionError, AttributeError):
        pass
    try:
        from live_trial.closure.target import resolve_target

        state = parse_json((Path(workdir) / wf.TRIAL_STATE).read_text(encoding="utf-8"))
        found = resolve_target(str(state["target"]), Path(state["plugins_root"]))
        return str(found.frontmatter.get("description") or "") or None
    except Exception:  # noqa: BLE001 - the message names the skill without its promise then
        return None


def notify_trial_record(eval_root: Path, verdict: Mapping[str, Any], lang: str | None = None, *,
                 objective: str | None = None, workdir: Path | None = None, env: Mapping[str, str] | None = None,
                 clock: Callable[[], str] = utc_now, post: Poster | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> dict:
    """Send the one notification that ends a trial (README: every run ends with one); return its record (the line
    appended to notifications.jsonl: ``text``, ``webhook.status`` sent / failed / not_configured...).

    The parts come from :func:`live_trial.notices.outcome.compose` (read from the verdict dict by key, so it does not
    depend on the exact nesting): the kind, the objective naming the skill and its plugin with the skill's promise
    (``objective``, else the description kept in the workdir's evaluation.json), what was found, and what to do
    next. A session that reported its own status as anything but ok in its completion marker is named so (its own
    words, which the verdict never rests on). The user's own names (plugin, skill, the file names it promises or made)
    stay in the text. A rehearsal
    verdict (``scenario_origin`` rehearsal) adds the sentence ``notes.rehearsal`` of the catalogue: the model was a
    script, so the skill itself is not proven yet. ``workdir``: the trial's (else found from eval_root, plugin, skill
    and run id)."""
    doc = dict(verdict)
    overall = doc.get("overall")
    overall = str((overall.get("verdict") if isinstance(overall, dict) else overall) or "FAIL")
    lang = resolve_lang(lang, env)
    workdir = _trial_workdir(eval_root, doc, workdir)
    message = compose(doc, lang, description=objective or _trial_objective(workdir), workdir=workdir)
    kind, detail = message.kind, message.detail
    if overall == "PASS" and (n_by := elsewhere_note(doc.get("criteria"))):   # the criteria it did not check
        detail = _sentences(detail, catalogue(lang)["notes"]["criteria_elsewhere"][n_by[1]].format(n=n_by[0]), lang)
    if (said := _session_status(workdir)) not in (None, "ok"):
        # the session said it failed (its own words, never evidence): a person must not be surprised by the verdict
        detail = _sentences(detail, catalogue(lang)["notes"]["session_status"].format(status=said), lang)
    if _find_key(doc, "scenario_origin") == "rehearsal" and kind != "not_working":
        # say plainly that the model was scripted (README "Set-up"); a failure's summary already says so
        detail = _sentences(detail, catalogue(lang)["notes"]["rehearsal"], lang)
    if cost := cost_sentence(doc.get("usage"), lang):          # what it cost (README "What a trial costs")
        detail = _sentences(detail, cost, lang)
    target = str(_find_key(doc, "target_skill", "target", "skill") or "")
    refs = {k: str(v) for k, v in {"run_id": _find_key(doc, "run_id"), "target": target,
                                   "overall": overall}.items() if v}
    return notify(eval_root, kind, message.objective, detail, lang, next_step=message.next, allowed=message.allowed,
                  refs=refs, env=env, clock=clock, post=post, sleep=sleep)


def notify_trial(eval_root: Path, verdict: Mapping[str, Any], lang: str | None = None, **kw: Any) -> str:
    """:func:`notify_trial_record`, returning only the text sent (the same keywords)."""
    return notify_trial_record(eval_root, verdict, lang, **kw)["text"]


def cost_sentence(usage: Any, lang: str) -> str:
    """The catalogue's ``notes.cost`` sentence for a verdict's ``usage``: nothing for a rehearsal's real cost, the API
    list price estimate in US dollars for a live trial (a lower bound when a model had no price); "" without usage."""
    if not isinstance(usage, Mapping):
        return ""
    texts = catalogue(lang)["notes"]["cost"]
    if not usage.get("billed"):
        return str(texts["rehearsal"])
    usd = float(usage.get("cost_usd") or 0)
    return str(texts["unpriced" if usage.get("unpriced_models") else "live"]).format(usd=f"{usd:.2f}" if usd >= 0.01
                                                                                     else f"{usd:.4f}")


def _sentences(first: str, second: str, lang: str) -> str:
    """``first`` and ``second`` as two sentences (:func:`live_trial.notices.outcome.joined`)."""
    return joined([first, second], lang)
