"""The message that ends a trial never contradicts its verdict (README "Evidence, watches and messages to a person").

The table below says, per verdict and per what happened, which phrases a message must hold and which it must never
hold, in both languages. The cases are generated: every stop reason the verdict schema names and every code the
catalogues have a sentence for, under every verdict and last poll exit it can come with, plus the trials that ended
without a stop reason (PASS, mostly done, each kind of DEGRADED, a proof's FAIL). A stop reason added to the schema
or the catalogues is covered at once, and one without a sentence fails here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from live_trial.notices import notify as nt
from live_trial.notices import outcome as oc
from live_trial.notices.catalogue import reason_sentence
from live_trial.resources import load_schema

#: Phrases by meaning, per language. A tuple: any one of them.
PHRASES = {
    "en": {
        "not_end": "did not get to the end",
        "end": ("got to the end", "ran to the end"),
        "not_fault": "not the skill's fault",
        "waiting": "waiting for an answer",
        "reply": ("Reply", "reply"),
        "goal_missing": "the result it was meant to produce was not there",
        "result_there": ("the result it was meant to produce is there", "was checked and is there"),
        "helped": ("time(s) to go on", "answered for it", "a person had to step in"),
        "next": "\nWhat to do next: ",
        "done": ("✅ Finished: ", "🟡 Mostly finished: "),
        "failed": "⚠️ Not working: ",
        "skill": "greet",
        "plugin": "hello",
    },
    "ja": {
        "not_end": "最後までたどりつけませんでした",
        "end": ("最後まで動", "最後まで自分で動"),
        "not_fault": "スキルのせいではありません",
        "waiting": "答えを待って",
        "reply": ("返信",),
        "goal_missing": "目的の結果は出ていませんでした",
        "result_there": ("目的の結果も出ました", "目的の結果が出ていることを確かめました"),
        "helped": ("声をかけました", "代わりに答えました", "人の手助けが必要でした"),
        "next": "\n次にすること: ",
        "done": ("✅ 終わりました: ", "🟡 だいたい終わりました: "),
        "failed": "⚠️ うまくいっていません: ",
        "skill": "greet",
        "plugin": "hello",
    },
}


@dataclass(frozen=True)
class Case:
    overall: str
    poll_exit: str | None
    stop_reason: str | None = None
    goal: str | None = None
    nudges: int = 0
    gates: int = 0
    unverified: str | None = None
    proof: bool = False

    def doc(self) -> dict:
        return {"target": "hello:greet", "plugin": "hello", "skill": "greet", "run_id": "20261201T000000-abcd",
                "overall": {"verdict": self.overall, "reasons": []}, "poll_exit": self.poll_exit,
                "stop_reason": self.stop_reason, "goal_result": self.goal, "goal_blockers": ["greeting.txt is empty"]
                if self.goal == "FAIL" else [], "nudge_count": self.nudges, "gate_response_count": self.gates,
                "gate_kind": "rescue", "unverified": self.unverified, "proof": self.proof,
                "scenario_origin": "live", "evidence": [{"claim": "c", "source": "side-effects/files/greeting.txt",
                                                         "observed": "1 file greeting.txt with 1 line"}]}


#: (what the rule is about, when it applies, phrases required, phrases forbidden).
RULES = [
    ("every message names the skill and its plugin and never asks for a reply (nothing reads replies)",
     lambda c: True, ["skill", "plugin"], ["reply"]),
    ("'waiting for an answer' only when a question was left unanswered",
     lambda c: c.stop_reason != "gate_unanswered", [], ["waiting"]),
    ("a message that is not a success ends with what to do next", lambda c: c.overall != "PASS", ["next", "failed"],
     ["done"]),
    ("a success is a success", lambda c: c.overall == "PASS", ["done"], ["failed", "not_end", "goal_missing"]),
    ("a FAIL whose session did not finish says it did not get to the end",
     lambda c: c.overall == "FAIL" and c.poll_exit != "DONE", ["not_end"], ["end"]),
    ("a session that finished never reads 'did not get to the end'",
     lambda c: c.overall != "PASS" and c.poll_exit == "DONE", ["end"], ["not_end"]),
    ("BLOCKED is never the skill's fault, never 'did not get to the end'",
     lambda c: c.overall == "BLOCKED", ["not_fault"], ["not_end"]),
    ("a DEGRADED whose goal was met says so and names the help it needed, never 'the result is missing'",
     lambda c: c.overall == "DEGRADED" and c.goal == "PASS", ["result_there", "helped"], ["goal_missing", "not_end"]),
    ("a DEGRADED whose goal was missed says the result was not there",
     lambda c: c.overall == "DEGRADED" and c.goal == "FAIL", ["goal_missing", "end"], ["result_there"]),
]


def stop_reasons() -> list[str]:
    """Every stop reason the verdict schema names, and every code the catalogues have a sentence for (any of them can
    be the code that stopped a trial: the runner records the code of whatever stopped it)."""
    prop = load_schema("live-trial-verdict.schema.json")["properties"]["stop_reason"]
    codes = set(prop.get("examples") or []) | {c for c in prop.get("enum") or [] if c}
    for lang in nt.LANGS:
        codes |= {c for section in ("reasons", "stop_reasons") for c in nt.catalogue(lang)[section]
                  if re.fullmatch(r"[a-z][a-z0-9_]*", c)}
    return sorted(codes - {"unknown"})


def cases() -> list[Case]:
    out = [Case("PASS", "DONE", goal="PASS"), Case("PASS", "DONE", goal="PASS", unverified="replies not seen yet"),
           Case("DEGRADED", "DONE", goal="FAIL"), Case("DEGRADED", "DONE", goal=None),
           Case("DEGRADED", "DONE", goal="PASS", nudges=2), Case("DEGRADED", "DONE", goal="PASS", gates=1),
           Case("DEGRADED", "DONE", goal="PASS", nudges=1, gates=2), Case("DEGRADED", "DONE", goal="FAIL", nudges=1),
           Case("FAIL", "DONE", goal="PASS", gates=1, proof=True), Case("FAIL", "GATE"), Case("FAIL", "STALL"),
           Case("BLOCKED", "HARD_CAP"), Case("BLOCKED", None)]
    for code in stop_reasons():
        out += [Case("FAIL", exit_, code) for exit_ in (None, "STALL", "GATE", "DONE")]
        out += [Case("BLOCKED", exit_, code) for exit_ in (None, "HARD_CAP", "STALL")]
    return out


def _has(text: str, phrase) -> bool:
    return any(p in text for p in (phrase if isinstance(phrase, tuple) else (phrase,)))


def message(case: Case, lang: str) -> str:
    m = oc.compose(case.doc(), lang, description="Writes a greeting file greeting.txt in the working folder")
    rendered = nt.render(m.kind, m.objective, m.detail, lang, next_step=m.next, allowed=m.allowed)
    assert not rendered["fallback"], rendered
    return rendered["text"]


CASES = cases()


@pytest.mark.parametrize("lang", nt.LANGS)
def test_the_phrase_table_holds_for_every_stop_reason_and_verdict(lang):
    assert len(stop_reasons()) > 40 and {"plugin_not_loaded", "transcript_moved", "harness_interrupted", "hang",
                                           "gate_unanswered", "hard_cap"} <= set(stop_reasons())
    words, broken = PHRASES[lang], []
    for case in CASES:
        text = message(case, lang)
        for about, applies, required, forbidden in RULES:
            if not applies(case):
                continue
            broken += [f"{case}: {about}: missing {key!r}" for key in required if not _has(text, words[key])]
            broken += [f"{case}: {about}: has {key!r}" for key in forbidden if _has(text, words[key])]
        if nt.forbidden_tokens(text, lang, oc.user_names(case.doc(), "greeting.txt")) \
                or nt.catalogue(lang)["placeholder"] in text:
            broken.append(f"{case}: internal codes or a placeholder in {text!r}")
    assert broken == [], "\n".join(broken[:20]) + f"\n({len(broken)} in all)"


@pytest.mark.parametrize("lang", nt.LANGS)
def test_every_stop_reason_has_its_own_sentence_in_the_message(lang):
    """A stop reason without a sentence would read as 'it stopped for an unexpected reason': the catalogue must say
    what it means, and the message must carry it."""
    unknown = reason_sentence(None, lang)
    missing = [c for c in stop_reasons() if reason_sentence(c, lang) == unknown]
    assert missing == [], f"add sentences to notifications.{lang}.json for {missing}"
    for code in stop_reasons():
        for overall, exit_ in (("FAIL", "STALL"), ("BLOCKED", None)):
            text = message(Case(overall, exit_, code), lang)
            clause = oc.first_sentence(reason_sentence(code, lang), lang)
            assert clause[1:] in text, (code, overall, text)


@pytest.mark.parametrize("lang", nt.LANGS)
def test_the_summary_is_one_sentence_naming_the_skill(lang):
    for case in CASES:
        text = oc.summary(case.doc(), lang)
        assert "greet" in text and "hello" in text, text
        if lang == "ja":
            assert text.endswith("。") and text.count("。") == 1, text
        else:
            assert text.endswith(".") and not re.search(r"[.!?]\s+[A-Z]", text), text


@pytest.mark.parametrize("lang", nt.LANGS)
def test_no_template_asks_for_a_reply(lang):
    for kind, tmpl in nt.catalogue(lang)["templates"].items():
        for text in (tmpl["text"], tmpl["generic"]):
            assert not _has(text, PHRASES[lang]["reply"]), (kind, text)


def test_the_plugins_mcp_tool_named_in_the_evidence_stays_whole_in_the_message():
    """``mcp__plugin_dbkit_db__lookup`` is the plugin's own tool, as the CLI names it: kept whole, never cut into
    ``mcp__(internal reference)__lookup``."""
    doc = {"target": "dbkit:query", "plugin": "dbkit", "skill": "query",
           "evidence": [{"observed": "1 tool call of mcp__plugin_dbkit_db__lookup in the CLI's record"}]}
    allowed = oc.user_names(doc)
    text = "What was checked: 1 tool call of mcp__plugin_dbkit_db__lookup in the CLI's record"
    assert "mcp__plugin_dbkit_db__lookup" in allowed
    assert nt.sanitise(text, "en", allowed) == (text, [])
