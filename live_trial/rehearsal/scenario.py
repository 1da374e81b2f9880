"""Rehearsal scenarios: loading, request analysis, rule matching and reply templating.

A scenario (YAML, validated against ``schemas/scenario.schema.json``) is a list of rules. Each
request the CLI sends to the rehearsal server is analysed into a :class:`RequestView` (which
conversation, which step after the last human prompt, the last tool_result, the tools offered)
and the first rule whose predicates all hold (and whose ``times`` budget is not used up) answers
it. The reply is a list of text / tool_use blocks with ``{{...}}`` placeholders filled from the
request. Format reference: ``references/scenario-format.md`` (and ``examples/scenarios/``).

Wire facts used here (claude-cli-observed.md, "What the server receives"; references/transcript-jsonl.md for
2.1.197): requests with no tools are side queries (title generation); ``messages`` may hold role ``system`` entries;
a human prompt is a user message without tool_result blocks that is not only a task notification (the CLI waking
the model after a background task ended) or the summary that starts a compacted conversation; slash-command blocks
(``<command-name>``, ``<local-command-…>``) and ``<system-reminder>`` blocks are not part of a prompt's text, except
a reminder that carries a task notification or Stop-hook feedback (2.1.332; ``wire.unwrap_reminder``), and a paste the
CLI wrapped in ``<pasted_content>`` is the pasted text (2.1.332); a tool listed with ``defer_loading`` is not offered; a
compaction request appends the summary instruction ("CRITICAL: Respond with TEXT ONLY…") to the last user message;
a subagent's request says ``cc_is_subagent=true`` in its system prompt; ``metadata.user_id`` is a JSON string with
``session_id``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from live_trial.errors import RefusedInput
from live_trial.rehearsal.scenario_file import check_text, read_yaml
from live_trial.rehearsal.wire import REMINDER_OPEN, is_deferred, unwrap_reminder
from live_trial.resources import load_schema
from live_trial.transcript.records import unwrap_paste

SCHEMA_NAME = "scenario.schema.json"

NO_RULE_TEXT = "(rehearsal: no rule matched)"
DEFAULT_SIDE_TEXT = "Rehearsal session"
_PLACEHOLDER = re.compile(r"\{\{(re:.+?|[a-z_]+)\}\}(?!\})", re.S)
_CWD_PATTERNS = (re.compile(r"Primary working directory: *(\S[^\n]*)"),
                 re.compile(r"Working directory: *(\S[^\n]*)"))
_NOT_PROMPT_BLOCKS = ("<system-reminder>", "<local-command-caveat>", "<command-name>", "<command-message>",
                      "<local-command-stdout>", "<local-command-stderr>")
_COMPACTION_RE = re.compile(r"^CRITICAL: Respond with TEXT ONLY|create a detailed summary of the conversation so far")
_NOTIFICATION = "<task-notification>"
_SUMMARY_START = "This session is being continued from a previous conversation"
_SUBAGENT_MARK = "cc_is_subagent=true"


@dataclass
class Rule:
    """One scenario rule: predicates (``when``), a reply, an optional firing budget (``times``)."""

    id: str
    when: dict
    reply: dict
    times: int | None = None
    fired: int = 0


@dataclass
class Scenario:
    """A loaded scenario. ``model``: the model reported in message_start (None = echo the request's)."""

    name: str
    rules: list[Rule]
    model: str | None = None
    side_query_text: str = DEFAULT_SIDE_TEXT
    source: str = "<dict>"


@dataclass
class RequestView:
    """What the matcher needs to know about one POST /v1/messages body.

    ``step``: assistant messages after the last human prompt (0 = first reply to the prompt; a wake-up by a task
    notification does not restart it). ``human_turn``: 1-based index of the last human prompt in the conversation.
    ``task_notification``: the notification text when the request answers a wake-up (the last user message is a
    ``<task-notification>``), else None. ``compaction``: the request asks for the summary of ``/compact``.
    ``subagent``: a subagent's request.
    ``last_tool_result``: {"content": str, "is_error": bool, "tool_use_id": str} or None, taken from the
    last user message only (so it is None at step 0). ``conversation``: 1-based ordinal of the
    conversation id among main (tool-bearing) requests, filled in by the server; ``attempt``, which trial of a case
    run it plays for (1 outside one), too.
    """

    model: str
    tools: list[str]
    message_count: int
    conversation_id: str
    side_query: bool
    step: int
    human_turn: int
    first_prompt: str
    last_prompt: str
    last_tool_result: dict | None
    all_text: str
    system_text: str
    stream: bool
    conversation: int = 0
    attempt: int = 1
    extra: dict = field(default_factory=dict)
    task_notification: str | None = None
    compaction: bool = False
    subagent: bool = False


# ---------------------------------------------------------------- loading

def load_scenario(source: str | Path | dict) -> Scenario:
    r"""Load a scenario from a YAML file path or an already-parsed dict.

    Raises :class:`RefusedInput` (exit 2) with one line naming the file and the offending field
    (e.g. ``rules/0/reply/stop_reason``) when the file is missing or unreadable, larger than
    :data:`~live_trial.rehearsal.scenario_file.SCENARIO_MAX_BYTES`, not UTF-8, not YAML, holds aliases that expand to
    more than :data:`~live_trial.rehearsal.scenario_file.MAX_EXPANDED_VALUES` values (or refer to themselves), holds a
    lone surrogate escape (``"\ud800"``: text that cannot be sent as UTF-8), does not fit
    ``schemas/scenario.schema.json``, or holds a regex that does not compile.
    """
    if isinstance(source, dict):
        doc, where = source, "<dict>"
    else:
        path = Path(source)
        where = str(path)
        doc = read_yaml(path, where)
    check_text(doc, where)
    _check_schema(doc, where)
    rules = []
    for i, raw in enumerate(doc["rules"]):
        when = dict(raw.get("when") or {})
        _check_regexes(when, f"rules/{i}/when", where)
        _check_reply_templates(raw["reply"], f"rules/{i}/reply", where)
        rules.append(Rule(id=str(raw.get("id", f"rule-{i}")), when=when, reply=dict(raw["reply"]),
                          times=raw.get("times")))
    return Scenario(name=str(doc.get("name", Path(where).stem)), rules=rules, model=doc.get("model"),
                    side_query_text=str(doc.get("side_query_text", DEFAULT_SIDE_TEXT)), source=where)


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    """The scenario schema's validator, built once per process (every trial of a plan loads its scenario)."""
    return Draft202012Validator(load_schema(SCHEMA_NAME))


def _check_schema(doc: Any, where: str) -> None:
    if not isinstance(doc, dict):
        # Never echo the file's content: a wrong path (say, a system file) must not be printed back.
        raise RefusedInput(f"malformed scenario: the file is a YAML {type(doc).__name__}, not a mapping with rules",
                           where=where, code="scenario_invalid",
                           fix="see schemas/scenario.schema.json and examples/scenarios/", details={"field": "<root>"})
    errors = list(_validator().iter_errors(doc))
    if not errors:
        return
    err = best_match(errors)
    while err.context:  # oneOf/anyOf: report the most specific sub-error
        err = best_match(err.context)
    field_path = "/".join(str(p) for p in err.absolute_path) or "<root>"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    raise RefusedInput(f"malformed scenario: field {field_path}: {_short(err.message)}{more}", where=where,
                       code="scenario_invalid", fix="see schemas/scenario.schema.json and examples/scenarios/",
                       details={"field": field_path})


def _short(msg: str, limit: int = 160) -> str:
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[:limit - 3] + "..."


def _check_regexes(when: dict, base: str, where: str) -> None:
    checks = [(k, when.get(k)) for k in ("first_prompt", "last_prompt")]
    if isinstance(when.get("task_notification"), str):
        checks.append(("task_notification", when["task_notification"]))
    ltr = when.get("last_tool_result") or {}
    checks.append(("last_tool_result/content", ltr.get("content")))
    for key, pattern in checks:
        if pattern is None:
            continue
        try:
            re.compile(pattern)
        except re.error as exc:
            raise RefusedInput(f"malformed scenario: field {base}/{key}: bad regex {pattern!r}: {exc}", where=where,
                               code="scenario_invalid", details={"field": f"{base}/{key}"}) from None


def _check_reply_templates(obj: Any, base: str, where: str) -> None:
    if isinstance(obj, str):
        for m in _PLACEHOLDER.finditer(obj):
            name = m.group(1)
            if name.startswith("re:"):
                try:
                    rx = re.compile(name[3:])
                except re.error as exc:
                    raise RefusedInput(f"malformed scenario: field {base}: bad regex in {{{{{name}}}}}: {exc}",
                                       where=where, code="scenario_invalid", details={"field": base}) from None
                if rx.groups < 1:
                    raise RefusedInput(f"malformed scenario: field {base}: {{{{{name}}}}} needs a capture group",
                                       where=where, code="scenario_invalid", details={"field": base})
            elif name not in PLACEHOLDERS:
                raise RefusedInput(f"malformed scenario: field {base}: unknown placeholder {{{{{name}}}}}"
                                   f" (known: re:<regex>, {', '.join(sorted(PLACEHOLDERS))})", where=where,
                                   code="scenario_invalid", details={"field": base})
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _check_reply_templates(v, f"{base}/{k}", where)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _check_reply_templates(v, f"{base}/{i}", where)


# ---------------------------------------------------------------- request analysis

def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in (content or []) if isinstance(b, dict)]


def _tool_result_text(block: dict) -> str:
    return "\n".join(b.get("text", "") for b in _blocks(block.get("content")) if b.get("type") == "text")


def _text_parts(msg: dict) -> list[str]:
    return [b.get("text", "") for b in _blocks(msg.get("content")) if b.get("type") == "text"]


def _own_words(msg: dict) -> list[str]:
    """The text blocks of a user message a person wrote (a paste the CLI wrapped in ``<pasted_content>`` is the
    pasted text): without ``<system-reminder>`` context blocks, slash-command blocks and a compaction request's
    summary instruction. A reminder that carries a task notification or Stop-hook feedback is that input
    (:func:`unwrap_reminder`), as 2.1.197 sent it."""
    words = []
    for part in _text_parts(msg):
        if part.lstrip().startswith(REMINDER_OPEN):
            inner = unwrap_reminder(part)
            if inner is not None:
                words.append(inner)
        elif not part.lstrip().startswith(_NOT_PROMPT_BLOCKS) and not _COMPACTION_RE.search(part):
            words.append(unwrap_paste(part))
    return words


def _prompt_text(msg: dict) -> str:
    """Text of a human user message (:func:`_own_words`; when none is left, the blocks other than context)."""
    kept = _own_words(msg)
    if not kept:
        kept = [p for p in _text_parts(msg) if not p.lstrip().startswith(REMINDER_OPEN)] or _text_parts(msg)
    return "\n".join(kept)


def _notification_text(msg: dict) -> str | None:
    """The notification text of a user message that only wakes the model after a background task ended."""
    text = "\n".join(_own_words(msg)).strip()
    return text if msg.get("role") == "user" and text.startswith(_NOTIFICATION) else None


def _is_human(msg: dict) -> bool:
    """A human prompt: a user message without tool_result blocks holding words a person wrote, which are not a task
    notification nor the summary a compacted conversation starts with."""
    if msg.get("role") != "user" or any(b.get("type") == "tool_result" for b in _blocks(msg.get("content"))):
        return False
    if not _text_parts(msg):
        return True                                    # an image-only prompt
    words = "\n".join(_own_words(msg)).lstrip()
    return bool(words) and not words.startswith((_NOTIFICATION, _SUMMARY_START))


def _all_text(messages: list[dict]) -> str:
    out: list[str] = []
    for msg in messages:
        for b in _blocks(msg.get("content")):
            t = b.get("type")
            if t == "text":
                out.append(b.get("text", ""))
            elif t == "tool_result":
                out.append(_tool_result_text(b))
            elif t == "tool_use":
                out.append(json.dumps(b.get("input", {}), ensure_ascii=False))
    return "\n".join(out)


def conversation_key(body: dict) -> str:
    """The conversation id: ``session_id`` from ``metadata.user_id`` (a JSON string), else the raw user_id, else ""."""
    uid = (body.get("metadata") or {}).get("user_id")
    if isinstance(uid, str):
        try:
            parsed = json.loads(uid)
            if isinstance(parsed, dict) and parsed.get("session_id"):
                return str(parsed["session_id"])
        except ValueError:
            m = re.search(r"session_([0-9a-f-]{36})", uid)
            return m.group(1) if m else uid
    return ""


def analyse_request(body: dict) -> RequestView:
    """Reduce a Messages API request body to a :class:`RequestView` (pure; ``conversation`` left 0)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    convo = [m for m in messages if m.get("role") in ("user", "assistant")]
    human_idx = [i for i, m in enumerate(convo) if _is_human(m)]
    last_h = human_idx[-1] if human_idx else -1
    step = sum(1 for m in convo[last_h + 1:] if m.get("role") == "assistant")
    last_tool_result = None
    if convo and convo[-1].get("role") == "user" and last_h != len(convo) - 1:
        results = [b for b in _blocks(convo[-1].get("content")) if b.get("type") == "tool_result"]
        if results:
            r = results[-1]
            last_tool_result = {"content": _tool_result_text(r), "is_error": bool(r.get("is_error", False)),
                                "tool_use_id": r.get("tool_use_id", "")}
    tools = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict) and not is_deferred(t)]
    system = body.get("system")
    system_text = system if isinstance(system, str) else "\n".join(
        b.get("text", "") for b in _blocks(system) if b.get("type") == "text")
    last_user = next((m for m in reversed(convo) if m.get("role") == "user"), None)
    last_texts = [b.get("text", "") for b in _blocks((last_user or {}).get("content")) if b.get("type") == "text"]
    return RequestView(
        model=str(body.get("model", "")), tools=tools, message_count=len(messages),
        conversation_id=conversation_key(body), side_query=not tools, step=step, human_turn=len(human_idx),
        first_prompt=_prompt_text(convo[human_idx[0]]) if human_idx else "",
        last_prompt=_prompt_text(convo[last_h]) if human_idx else "",
        last_tool_result=last_tool_result, all_text=_all_text(messages), system_text=system_text,
        stream=bool(body.get("stream", False)),
        extra={"output_format": (body.get("output_config") or {}).get("format")},
        task_notification=_notification_text(convo[-1]) if convo else None,
        compaction=any(_COMPACTION_RE.search(t) for t in last_texts),
        subagent=_SUBAGENT_MARK in system_text)


# ---------------------------------------------------------------- matching

def rule_matches(rule: Rule, view: RequestView) -> bool:
    """True when every predicate of ``rule.when`` holds for ``view`` and the rule's ``times`` budget is left.

    Predicates (all optional, AND-ed): ``conversation`` (1-based ordinal), ``first_prompt`` /
    ``last_prompt`` (regex search), ``step``, ``human_turn``, ``last_tool_result`` {content regex,
    is_error, present}, ``tools_include`` / ``tools_exclude`` (names), ``model`` (regex on the requested model),
    ``task_notification`` (true: a wake-up by a task notification, false: not one, a string: a wake-up whose
    notification matches that regex), ``compaction`` (the summary request of ``/compact``; a rule without this key
    never answers one), ``subagent`` (a subagent's request), ``attempt`` (which trial of a case run it plays for).
    """
    w = rule.when
    if rule.times is not None and rule.fired >= rule.times:
        return False
    if bool(w.get("compaction", False)) != view.compaction:
        return False
    if "subagent" in w and bool(w["subagent"]) != view.subagent:
        return False
    if "task_notification" in w:
        want = w["task_notification"]
        if want is False and view.task_notification is not None:
            return False
        if want is not False and (view.task_notification is None
                                  or (isinstance(want, str) and not re.search(want, view.task_notification))):
            return False
    if "conversation" in w and w["conversation"] != view.conversation:
        return False
    if "attempt" in w and w["attempt"] != view.attempt:
        return False
    if "step" in w and w["step"] != view.step:
        return False
    if "human_turn" in w and w["human_turn"] != view.human_turn:
        return False
    if "first_prompt" in w and not re.search(w["first_prompt"], view.first_prompt):
        return False
    if "last_prompt" in w and not re.search(w["last_prompt"], view.last_prompt):
        return False
    if "model" in w and not re.search(w["model"], view.model):
        return False
    if any(t not in view.tools for t in w.get("tools_include", [])):
        return False
    if any(t in view.tools for t in w.get("tools_exclude", [])):
        return False
    ltr = w.get("last_tool_result")
    if ltr is not None:
        res = view.last_tool_result
        if ltr.get("present", True) is False:
            return res is None
        if res is None:
            return False
        if "is_error" in ltr and bool(ltr["is_error"]) != res["is_error"]:
            return False
        if "content" in ltr and not re.search(ltr["content"], res["content"]):
            return False
    return True


def select_rule(scenario: Scenario, view: RequestView) -> Rule | None:
    """The first rule of ``scenario`` matching ``view`` (its ``fired`` count is increased), or None.

    Callers must hold the server's lock: selection and the ``fired`` update are one step.
    """
    for rule in scenario.rules:
        if rule_matches(rule, view):
            rule.fired += 1
            return rule
    return None


# ---------------------------------------------------------------- templating

def _cwd_of(view: RequestView) -> str:
    for rx in _CWD_PATTERNS:
        for text in (view.system_text, view.all_text):
            m = rx.search(text)
            if m:
                return m.group(1).strip()
    return ""


PLACEHOLDERS = {
    "cwd": _cwd_of,
    "session_id": lambda v: v.conversation_id,
    "model": lambda v: v.model,
    "step": lambda v: str(v.step),
    "conversation": lambda v: str(v.conversation),
    "attempt": lambda v: str(v.attempt),
}


def render(obj: Any, view: RequestView, misses: list[str]) -> Any:
    """Return a copy of ``obj`` with every ``{{...}}`` placeholder in its strings filled from ``view``.

    ``{{re:<regex>}}``: first capture group of the first match of ``<regex>`` over the request's message
    text (text blocks, tool_result contents, tool_use inputs as JSON, then the system prompt).
    ``{{cwd}}``, ``{{session_id}}``, ``{{model}}``, ``{{step}}``, ``{{conversation}}``, ``{{attempt}}``: PLACEHOLDERS.
    A placeholder that finds nothing becomes ``<rehearsal: no match for ...>`` and is appended to ``misses``.
    """
    if isinstance(obj, str):
        def fill(m: re.Match) -> str:
            name = m.group(1)
            if name.startswith("re:"):
                for text in (view.all_text, view.system_text):
                    found = re.search(name[3:], text)
                    if found:
                        return found.group(1) or ""
            else:
                value = PLACEHOLDERS[name](view)
                if value:
                    return value
            misses.append(name)
            return f"<rehearsal: no match for {name}>"
        return _PLACEHOLDER.sub(fill, obj)
    if isinstance(obj, dict):
        return {k: render(v, view, misses) for k, v in obj.items()}
    if isinstance(obj, list):
        return [render(v, view, misses) for v in obj]
    return obj
