"""Whose failure an API error record of the transcript is (README "Whose failure it is").

When the CLI gives up on a request it writes one ``assistant`` record with ``isApiErrorMessage: true``, the HTTP
status in ``apiErrorStatus`` (none for a network error), the CLI's own class of the error in ``error``
(``server_error``, ``rate_limit``, ``authentication_failed``, ``billing_error``, ``model_not_found``,
``invalid_request``, ``max_output_tokens``, ``unknown``) and the line it shows as the record's text (seen on 2.1.197
and 2.1.332: references/transcript-jsonl.md "API errors"). The model's service is the environment:

- overloaded (529), any other 5xx, a rate limit (429), a timeout or a lost connection -> ``model_unavailable``;
- an account's usage or spend limit, or no credit left -> ``usage_limit`` (its next step is to wait for the reset or
  raise the limit, not to try again in a moment);
- credentials refused (401, 403, a bad, expired or unapproved key, logged out) -> ``model_auth``;
- a model the service does not know (404 ``model_not_found``) -> ``model_unknown``: the user's input;
- anything else (400 ``invalid_request`` such as a prompt too long, 413, ``max_output_tokens``) is a request the
  session itself made: ``api_error``, the session's failure (judged).

Pure; no I/O.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:       # annotations only: ``live-trial status`` imports this, and typing would cost its start-up
    from typing import Any

#: The codes this module gives: rows of :class:`live_trial.stop_reasons.StopReason` (a unit test checks), kept as
#: words so the classifier loads nothing more.
MODEL_UNAVAILABLE, USAGE_LIMIT, MODEL_AUTH, MODEL_UNKNOWN = ("model_unavailable", "usage_limit", "model_auth",
                                                             "model_unknown")
API_ERROR = "api_error"
CAUSES = (MODEL_UNAVAILABLE, USAGE_LIMIT, MODEL_AUTH, MODEL_UNKNOWN, API_ERROR)

#: The CLI's classes (the record's ``error``) of a service that could not answer.
UNAVAILABLE_KINDS = ("server_error", "rate_limit")
AUTH_KINDS = ("authentication_failed",)
USAGE_KINDS = ("billing_error",)
UNKNOWN_MODEL_KINDS = ("model_not_found",)
#: The lines the CLI shows for an account's limit (read in the 2.1.197 and 2.1.332 binaries: they come with the
#: ``rate_limit`` class, like a short-lived rate limit, so the text tells them apart; "Server is temporarily limiting
#: requests (not your usage limit)" is the short-lived one).
USAGE_TEXT = re.compile(r"(?i)((?<!not your )usage limit|spend limit|You've hit your|You've reached your|"
                        r"out of usage credits|Credit balance is too low|usage credits required)")
AUTH_TEXT = re.compile(r"(?i)(Invalid API key|Not logged in|Please run /login|OAuth token (?:has )?(?:expired|been "
                       r"revoked)|authentication_error|Fix external API key)")
NETWORK_TEXT = re.compile(r"(?i)(Connection error|Connection to the API was lost|Unable to connect to API|"
                          r"Request timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|fetch failed)")
_MODEL_NAMED = re.compile(r"\(([^()\s]+)\)")


def api_error_cause(status: Any, kind: Any, text: str) -> str:
    """The stop reason code (one of :data:`CAUSES`) of an API error the CLI gave up on: ``status`` the HTTP status
    (int or None), ``kind`` the record's ``error`` class (str or None), ``text`` the line the CLI wrote. Never
    raises."""
    kind = kind if isinstance(kind, str) else ""
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    text = text or ""
    if kind in UNKNOWN_MODEL_KINDS or (status == 404 and "model" in text.lower()):
        return MODEL_UNKNOWN
    if kind in AUTH_KINDS or status in (401, 403) or AUTH_TEXT.search(text):
        return MODEL_AUTH
    if kind in USAGE_KINDS or ((kind in UNAVAILABLE_KINDS or status == 429) and USAGE_TEXT.search(text)):
        return USAGE_LIMIT
    if kind in UNAVAILABLE_KINDS or status in (408, 429) or (status is not None and status >= 500):
        return MODEL_UNAVAILABLE
    if status is None and NETWORK_TEXT.search(text):
        return MODEL_UNAVAILABLE
    return API_ERROR


def screen_error_cause(text: str) -> str | None:
    """The stop reason code of an error line the CLI drew on screen with no API error record in the transcript
    (``live_trial.session.screen.error_screen``): an account's usage limit -> ``usage_limit``, credentials refused or
    not logged in -> ``model_auth``, the service unreachable -> ``model_unavailable``; None for any other line (the
    session's own error). The same words as the records' (README "Whose failure it is"). Never raises."""
    text = text or ""
    if USAGE_TEXT.search(text):
        return USAGE_LIMIT
    if AUTH_TEXT.search(text):
        return MODEL_AUTH
    if NETWORK_TEXT.search(text):
        return MODEL_UNAVAILABLE
    return None


def record_cause(rec: Mapping[str, Any], text: str) -> str | None:
    """:func:`api_error_cause` of an ``isApiErrorMessage`` record whose shown line is ``text``; None for any other
    record."""
    if rec.get("isApiErrorMessage") is not True:
        return None
    return api_error_cause(rec.get("apiErrorStatus"), rec.get("error"), text)


def model_named(text: str, requested: str | None = None) -> str | None:
    """The model an unknown-model error names: ``requested`` when given, else the CLI's ``(<model>)`` in ``text``
    ("There's an issue with the selected model (claude-x). …"), else None."""
    if requested:
        return requested
    m = _MODEL_NAMED.search(text or "")
    return m.group(1) if m else None


#: What the service says of a request too large for the model (a 400 ``invalid_request`` or a 413).
_TOO_LARGE = re.compile(r"prompt is too long|too many (input )?tokens|exceeds? the (model's )?(maximum )?context|"
                        r"request (entity )?too large|\b413\b", re.I)


def refused_for_size(text: str | None) -> bool:
    """True when the API error line ``text`` refuses a request for its size. On the task's first request that size
    is the CLI's own prompt and what the loaded plugins add to it (their skill listing, their MCP tools), so the
    refusal is no outage of the service: the session's ``api_error``, never ``model_never_answered`` (README "Whose
    failure it is")."""
    return bool(text) and _TOO_LARGE.search(text or "") is not None

