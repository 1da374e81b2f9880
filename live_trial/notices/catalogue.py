"""The catalogues of plain sentences, ``references/notifications.<lang>.json``, and the choice of language.

The languages are the catalogues present: adding a language is adding its file (every test of the catalogues runs
over :data:`LANGS`). The language is ``--lang``, else env ``LIVE_TRIAL_LANG``, else Japanese: the seed that defines
these notifications asks for Japanese that a high-school student understands, and the people running these
trials read Japanese first (seed 000 "通知文の書き方"). The sections of a catalogue are described in
:mod:`live_trial.notices.notify`.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Mapping

from live_trial.errors import RefusedInput
from live_trial.resources import reference_names, resource_path

DEFAULT_LANG = "ja"
LANG_ENV = "LIVE_TRIAL_LANG"
CATALOGUE_PREFIX, CATALOGUE_SUFFIX = "notifications.", ".json"


def catalogue_langs() -> tuple[str, ...]:
    """The languages with a catalogue, ``references/notifications.<lang>.json``: the default first, then the others
    in alphabetical order."""
    found = [name[len(CATALOGUE_PREFIX):-len(CATALOGUE_SUFFIX)]
             for name in reference_names(f"{CATALOGUE_PREFIX}*{CATALOGUE_SUFFIX}")]
    langs = sorted(lang for lang in found if lang and "." not in lang)
    return tuple(sorted(langs, key=lambda lang: lang != DEFAULT_LANG))      # stable: the default, then a-z


#: The languages of the messages (``--lang`` choices), one per catalogue file.
LANGS = catalogue_langs()


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
    return json.loads(resource_path("references", f"{CATALOGUE_PREFIX}{lang}{CATALOGUE_SUFFIX}")
                      .read_text(encoding="utf-8"))


def reason_sentence(code: str | None, lang: str = DEFAULT_LANG) -> str:
    """The plain sentence for a stop reason / status word / error code.

    Exact entry of ``stop_reasons`` (one per :class:`~live_trial.stop_reasons.StopReason`) or of ``reasons``; else
    the ``families`` entry whose prefix the code starts with (bad_, unknown_, missing_, no_); else the "unknown"
    sentence.
    """
    cat = catalogue(lang)
    for section in ("stop_reasons", "reasons"):
        if code and code in cat[section]:
            return cat[section][code]
    for prefix, sentence in cat.get("families", {}).items():
        if code and code.startswith(prefix):
            return sentence
    return cat["reasons"]["unknown"]


def exit_code_sentence(command: str, exit_code: int, lang: str = DEFAULT_LANG) -> str:
    """The plain sentence for ``exit_code`` of ``command`` (run, boot, poll, verdict, evaluate, watch, any)."""
    table = catalogue(lang)["exit_codes"]
    return (table.get(command, {}).get(str(int(exit_code))) or table["any"].get(str(int(exit_code)))
            or catalogue(lang)["reasons"]["unknown"])


def nudge_text(lang: str = DEFAULT_LANG) -> str:
    """The fixed text of a nudge in ``lang`` (seed 001 STALL table row 4: 「task.md の指示どおり質問せず自走で続行し、
    完了条件を満たしてください」; catalogue key ``nudge``), written to ``nudge-<n>.md`` and pasted as a file by ``run``
    and by ``backend nudge`` alike."""
    return str(catalogue(lang)["nudge"])
