"""A rehearsal scenario for any skill, written from what the skill declares (``live-trial rehearsal new``; README "Your
own plugin and skill", references/scenario-format.md).

The scenario plays the path a trial of the skill takes on the real CLI: the Skill call by the name the CLI knows the
skill by (``plugin:skill``; its tool_result reads ``Launching skill: plugin:skill``), a Write of the file the skill's
description promises into the session's folder (a placeholder to edit), the completion marker named in the task, and
``DONE: ok``. Its first rule answers the fresh evaluator (the only caller offering ``StructuredOutput``) with PASS and
one evidence item that holds under the evidence rules (README "Evidence, watches and messages to a person"): it cites
the written file's copy ``side-effects/files/<name>``, quotes its one line and counts it, and gives a passing check for
each criterion the evaluator judges. Variants: ``gate`` stops at an AskUserQuestion first (answer it with
``run --gate-response``); ``no_marker`` reports DONE without writing the marker (a contract violation).

Pure: :func:`scenario_text` returns the YAML text; nothing is read or written.
"""
from __future__ import annotations

import json
import re
import textwrap

from live_trial.workdir_files import SIDE_EFFECTS_COPIES_PATH

#: A file name a description promises: ``greeting.txt``, ``report.csv`` ...
_FILE_RE = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.(?:txt|md|json|csv|tsv|yaml|yml|html|xml|toml|ini|log|py|js|"
                      r"ts|sh|sql))\b")
GATE_OPTIONS = ("Go on", "Stop")
MARKER_PATH = r"'{{re:Completion marker: *`?(/.+?/out/status\.json)}}'"
ARGS = r"""'{{re:args: *"([^"]*)"}}'"""


_WRITES_RE = re.compile(r"\b(writ|creat|produc|sav|output|generat|emit|export|render|updat|append)", re.IGNORECASE)


def promised_file(description: str, skill: str) -> str:
    """The file a skill's ``description`` promises to make: the first ``name.ext`` it names after a verb of making
    (writes, creates, saves, outputs ...; "Reads notes.txt and writes summary.md" gives ``summary.md``), else the
    first file it names, a relative path kept as written; with none, ``<skill>-output.txt``. The scenario's Write
    makes that file in the session's folder."""
    found = list(_FILE_RE.finditer(description or ""))
    start = 0
    for m in found:
        if _WRITES_RE.search(description[start:m.start()]):
            return m.group(1)
        start = m.end()
    if found:
        return found[0].group(1)
    return f"{re.sub(r'[^a-z0-9-]+', '-', skill.lower()).strip('-') or 'skill'}-output.txt"


def _q(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


def _comment(text: str, width: int = 112) -> list[str]:
    return ["# " + line for line in textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)] or ["#"]


def scenario_text(target: str, description: str, criteria: list[str], *, gate: bool = False,
                  no_marker: bool = False) -> str:
    """The YAML text of a scenario that plays ``target`` (``plugin:skill``, the name the CLI resolves; a plain skill
    name is played as given). ``description``: the skill's frontmatter description (its promise, quoted in the
    header); ``criteria``: the ids of the ``feedback_contract`` criteria the evaluator judges (one passing check
    each). ``gate``: ask one AskUserQuestion (options "Go on", "Stop") before the work; ``no_marker``: never write the
    completion marker. Loads with :func:`live_trial.rehearsal.scenario.load_scenario`."""
    skill = target.rsplit(":", 1)[-1]
    name = promised_file(description, skill)
    content = f"PLACEHOLDER: what {target} promises goes here"
    step = 2 if gate else 1
    flow = ["Skill call", *(["AskUserQuestion (answer with run --gate-response \"Go on\")"] if gate else []),
            f"Write {name}", *([] if no_marker else ["the completion marker"]), '"DONE: ok"']
    header = (f"A rehearsal of {target}, written by `live-trial rehearsal new`. The session: {' -> '.join(flow)}."
              + (" No completion marker: the trial ends FAIL, stop reason contract_violation (it reported DONE "
                 "without it)." if no_marker else "")
              + (" It stops at the question: without an answer the trial ends FAIL (stopped at a question it had to "
                 "ask); with a --gate-response rescue answer it runs on (a person stepped in: DEGRADED at best)."
                 if gate else "")
              + f" The fresh evaluator answers PASS, citing the file's copy side-effects/files/{name}.")
    lines = [*_comment(header),
             "# What the skill promises (its description):",
             *_comment(description or "(no description in its frontmatter)"),
             "# EDIT the write-output rule: the file and the content the description promises; then the evaluator's",
             "# quote (a piece of that content) and observed (what it holds, counted: lines are checked).",
             f"name: {_q(re.sub(r'[^a-z0-9-]+', '-', target.lower()).strip('-') + '-rehearsal')}",
             f"side_query_text: {_q(target + ' rehearsal')}",
             "rules:",
             "  - id: evaluator-verdict",
             "    description: the fresh evaluator (claude -p --json-schema, the only requests offering "
             "StructuredOutput)",
             "    when: {tools_include: [StructuredOutput]}",
             "    reply:",
             "      content:",
             "        - tool_use:",
             "            name: StructuredOutput",
             "            input:",
             "              verdict: PASS",
             "              blockers: []",
             "              evidence:",
             "                - claim: " + _q(f"the skill wrote {name}, the file its description promises"),
             "                  source: " + _q(f"{SIDE_EFFECTS_COPIES_PATH}/{name}"),
             "                  quote: " + _q(content),
             "                  observed: 1 file written in the working folder, with 1 line",
             "              checks:" + ("" if criteria else " []"),
             *[f"                - {{id: {_q(c)}, result: pass, evidence: {_q(f'{name} holds what {c} asks for')}}}"
               for c in criteria],
             "              unverified: []",
             "  - id: skill-call",
             "    when: {human_turn: 1, step: 0, tools_include: [Skill]}",
             "    reply:",
             "      content:",
             "        - text: I will invoke the skill as asked.",
             f"        - tool_use: {{name: Skill, input: {{skill: {_q(target)}, args: {ARGS}}}}}"]
    launched = f"{{content: {_q('Launching skill: ' + target)}, is_error: false}}"
    if gate:
        lines += ["  - id: ask",
                  f"    when: {{step: 1, last_tool_result: {launched}}}",
                  "    reply:",
                  "      content:",
                  "        - text: One decision first.",
                  "        - tool_use:",
                  "            name: AskUserQuestion",
                  "            input:",
                  "              questions:",
                  "                - question: Go on with the work?",
                  "                  header: Go on",
                  "                  multiSelect: false",
                  "                  options:",
                  *[f"                    - {{label: {_q(o)}, "
                    f"description: {_q(o + ' ' + ('with' if o == 'Go on' else 'before') + ' the work')}}}"
                    for o in GATE_OPTIONS],
                  "  - id: cancelled",
                  "    when: {step: 2, last_tool_result: {is_error: true}}",
                  "    reply: {content: [{text: \"DONE: failed\"}]}"]
    after = "{step: %d, last_tool_result: %s}" % (step, "{is_error: false}" if gate else launched)
    lines += ["  - id: write-output",
              f"    when: {after}",
              "    reply:",
              "      content:",
              "        - tool_use:",
              "            name: Write",
              "            input:",
              f"              file_path: {_q('{{cwd}}/' + name)}   # EDIT: the file the skill promises",
              f"              content: {_q(content + chr(10))}   # EDIT: what it holds"]
    if not no_marker:
        step += 1
        lines += ["  - id: write-marker",
                  f"    when: {{step: {step}, last_tool_result: {{is_error: false}}}}",
                  "    reply:",
                  "      content:",
                  "        - tool_use:",
                  "            name: Write",
                  "            input:",
                  f"              file_path: {MARKER_PATH}",
                  "              content: " + _q(json.dumps({"status": "ok", "summary": f"wrote {name}"}) + "\n")]
    lines += ["  - id: report-done",
              f"    when: {{step: {step + 1}, last_tool_result: {{is_error: false}}}}",
              "    reply:",
              "      content: [{text: \"DONE: ok\"}]"]
    return "\n".join(lines) + "\n"


#: The starting prompts of ``rehearsal new --activation`` (README "Does it start by itself?"): two that should start
#: the skill and two that should not, none naming it. The author replaces them by requests in their users' words;
#: the scenario answers each by its text.
ACTIVATION_PROMPTS = (("EDIT: a request in your users' words that this skill is for (1)", True),
                      ("EDIT: another request in your users' words that this skill is for (2)", True),
                      ("What is 2 + 2?", False),
                      ("EDIT: a near request that belongs to another skill, or to none", False))


def activation_scenario_text(target: str, description: str,
                             prompts: tuple[tuple[str, bool], ...] = ACTIVATION_PROMPTS) -> str:
    """The YAML text of a scenario that plays an activation case of ``target`` (references/scenario-format.md):
    each prompt is told apart by a regex on the first prompt (its text, escaped), a should-trigger prompt answered
    with the Skill call by ``target``'s name and, after it, one line of text; a should-not prompt with plain text.
    ``description``: the skill's frontmatter description, quoted in the header. Loads with
    :func:`live_trial.rehearsal.scenario.load_scenario`."""
    header = (f"An activation case of {target}, written by `live-trial rehearsal new --activation`: each prompt is "
              "pasted alone (README \"Does it start by itself?\"), and this script plays the model's choice, told "
              "apart by a regex on the first prompt. The prompts that should start the skill are answered with its "
              "Skill call, the others with plain text. A script proves the mechanics (the prompt pasted alone, the "
              "listing, the Skill call read from the transcript), never the description: only a real model "
              "(run --case NAME --live) measures that.")
    lines = [*_comment(header), "# What the skill promises (its description), which the model is shown:",
             *_comment(description or "(no description in its frontmatter)"),
             "# EDIT the prompts in the suite case and the first_prompt regexes here together.",
             f"name: {_q(re.sub(r'[^a-z0-9-]+', '-', target.lower()).strip('-') + '-activation')}",
             f"side_query_text: {_q(target + ' activation')}", "rules:"]
    for n, (text, should) in enumerate(prompts, start=1):
        lines += [f"  - id: {'should' if should else 'should-not'}-{n}",
                  f"    when: {{step: 0, first_prompt: {_literal(text)}}}",
                  "    reply:", "      content:"]
        lines += ([f"        - tool_use: {{name: Skill, input: {{skill: {_q(target)}}}}}"] if should else
                  ["        - text: " + _q("A plain answer: no skill is needed for this.")])
    lines += ["  - id: after-the-skill",
              f"    when: {{step: 1, last_tool_result: {{content: {_q('Launching skill: ' + target)}}}}}",
              "    reply: {content: [{text: \"Done.\"}]}"]
    return "\n".join(lines) + "\n"


def _literal(text: str) -> str:
    """A regex matching ``text`` as written (its metacharacters escaped, nothing else), as a YAML single-quoted
    scalar (a backslash stays one backslash there)."""
    pattern = re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)
    return "'" + pattern.replace("'", "''") + "'"
