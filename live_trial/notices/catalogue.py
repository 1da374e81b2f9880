"""The catalogues of plain sentences, ``references/notifications.{ja,en}.json``, and the choice of language.

The language is ``--lang``, else env ``LIVE_TRIAL_LANG``, else Japanese: the seed that defines these
notifications asks for Japanese that a high-school student understands, and the people running these
trials read Japanese first (seed 000 "通知文の書き方"). The sections of a catalogue are described in
:mod:`live_trial.notices.notify`.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Mapping

from live_trial.errors import RefusedInput
from live_trial.resources import resource_path

LANGS = ("ja", "en")
DEFAULT_LANG = "ja"
LANG_ENV = "LIVE_TRIAL_LANG"


def resolve_lang(explicit: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Return the notification language: ``explicit`` > env LIVE_TRIAL_LANG > "ja".

    Raises :class:`RefusedInput` for a language without a catalogue.
    """
    env = os.environ if env is None else env
    lang = (explicit or env.get(LANG_ENV) or DEFAULT_LANG).strip().lower()
    if lang not in LANGS:
        raise RefusedInput(f"no notification catalogue for language {lang!r}", where="--lang / LIVE_TRIAL_LANG",
                           fix=f"use one of: {', '.join(LANGS)}", code="unknown_lang")
    return lang


@lru_cache(maxsize=None)
def catalogue(lang: str) -> dict:
    """The catalogue for ``lang`` (``references/notifications.<lang>.json``) as a dict."""
    return json.loads(resource_path("references", f"notifications.{lang}.json").read_text(encoding="utf-8"))


def reason_sentence(code: str | None, lang: str = DEFAULT_LANG) -> str:
    """The plain sentence for a stop reason / status word / error code.

    Exact entry of ``reasons``; else the ``families`` entry whose prefix the code starts with (bad_, unknown_,
    missing_, no_); else the "unknown" sentence.
    """
    cat = catalogue(lang)
    if code and code in cat["reasons"]:
        return cat["reasons"][code]
    for prefix, sentence in cat.get("families", {}).items():
        if code and code.startswith(prefix):
            return sentence
    return cat["reasons"]["unknown"]


def exit_code_sentence(command: str, exit_code: int, lang: str = DEFAULT_LANG) -> str:
    """The plain sentence for ``exit_code`` of ``command`` (run, boot, poll, verdict, evaluate, watch, any)."""
    table = catalogue(lang)["exit_codes"]
    return (table.get(command, {}).get(str(int(exit_code))) or table["any"].get(str(int(exit_code)))
            or catalogue(lang)["reasons"]["unknown"])
