"""One case appended to a suite file, the rest of it kept byte for byte (``live-trial rehearsal new PLUGIN:SKILL --suite
FILE --case NAME``; references/suite-format.md).

The file is edited as text, never dumped again: the new case is one line (a YAML flow mapping) inserted after the
last case of its skill, or a new skill key after the last one, at the file's own indentation; comments, key order,
quoting and blank lines stay as the author wrote them. Where the new line goes comes from the YAML's node marks
(``yaml.compose``). The result is checked as a suite (:func:`live_trial.acceptance.suite.load_suite`) before it is
written, atomically; a case name the skill already has is refused and nothing is written.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from live_trial.acceptance.suite import load_suite
from live_trial.errors import RefusedInput
from live_trial.jsonfile import write_text_atomic


def case_line(case: Mapping[str, Any]) -> str:
    """The case as one YAML flow mapping (``{name: x, scenario: s.yaml}``), keys in the order given."""
    import yaml

    return str(yaml.safe_dump(dict(case), default_flow_style=True, sort_keys=False, width=10**6,
                              allow_unicode=True)).strip()


def _last_line(node: Any) -> int:
    """The 0-based line where ``node`` ends (its last scalar or closing bracket)."""
    import yaml

    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    mark = node.end_mark
    return int(mark.line if mark.column > 0 or mark.line == 0 else mark.line - 1)


def _insert_after(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return "".join(lines[:line + 1] + [new] + lines[line + 1:])


def _insert_flow(text: str, node: Any, item: str) -> str:
    """``item`` added as the last element of a flow collection (before its closing bracket)."""
    end = node.end_mark.index - 1
    sep = ", " if node.value else ""
    return text[:end] + sep + item + text[end:]


def appended(text: str, skill_key: str, case: Mapping[str, Any], *, where: str) -> str:
    """``text`` (a suite file's) with ``case`` appended to the cases of ``skill_key`` (a new skill key when the file
    has none). Raises :class:`RefusedInput` when the skill already has a case of that name, or the file has no
    ``skills`` mapping to add to."""
    import yaml

    root = yaml.compose(text) if text.strip() else None
    if root is None:
        return f"skills:\n  {skill_key}:\n    cases:\n      - {case_line(case)}\n"
    skills = next((v for k, v in getattr(root, "value", []) if getattr(k, "value", None) == "skills"), None)
    if not isinstance(skills, yaml.MappingNode):
        raise RefusedInput("the suite file has no skills mapping to add the case to", where=where, code="bad_suite",
                           fix="fix the file (references/suite-format.md), or pass another --suite FILE")
    skill = next((v for k, v in skills.value if k.value == skill_key), None)
    if skill is None:
        if skills.flow_style:
            return _insert_flow(text, skills, f"{skill_key}: {{cases: [{case_line(case)}]}}")
        indent = " " * skills.value[0][0].start_mark.column if skills.value else "  "
        return _insert_after(text, _last_line(skills), f"{indent}{skill_key}:\n{indent}  cases:\n"
                                                       f"{indent}    - {case_line(case)}\n")
    cases = next((v for k, v in getattr(skill, "value", []) if k.value == "cases"), None)
    if not isinstance(cases, yaml.SequenceNode):
        raise RefusedInput(f"skills.{skill_key} has no cases list to add the case to", where=where, code="bad_suite",
                           fix="fix the file (references/suite-format.md)")
    names = [v.value for item in cases.value if isinstance(item, yaml.MappingNode)
             for k, v in item.value if k.value == "name"]
    if str(case["name"]) in names:
        raise RefusedInput(f"skills.{skill_key} already has a case named {case['name']!r}", where=where,
                           code="case_exists", fix="pass another --case NAME")
    if cases.flow_style:
        return _insert_flow(text, cases, case_line(case))
    indent = " " * cases.start_mark.column
    return _insert_after(text, _last_line(cases), f"{indent}- {case_line(case)}\n")


def append_case(suite: Path, skill_key: str, case: Mapping[str, Any]) -> Path:
    """Append ``case`` to ``skill_key`` in the suite file ``suite`` (made when missing), keeping the rest of the file as
    it is; the result must load as a suite (its paths, e.g. the case's ``scenario``, exist already). Returns the path.
    Raises :class:`RefusedInput` (nothing written): the case name exists, the file or the result is not a valid
    suite."""
    import yaml

    suite = Path(suite)
    text = suite.read_text(encoding="utf-8") if suite.exists() else ""
    try:
        new = appended(text, skill_key, case, where=str(suite))
    except yaml.YAMLError as exc:
        raise RefusedInput(f"the suite file is not YAML ({exc})", where=str(suite), code="bad_suite",
                           fix="fix the file (references/suite-format.md)") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{suite.name}.", suffix=".check.yaml", dir=suite.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(new)
        load_suite(Path(tmp))               # a bad result is refused, with its line and key
    except RefusedInput as exc:
        problems = [p.replace(str(Path(tmp).resolve()), str(suite)) for p in exc.details.get("problems") or []]
        raise RefusedInput(f"the case would leave the suite file invalid: {'; '.join(problems) or exc.problem}",
                           where=str(suite), code="bad_suite",
                           fix="fix the file (references/suite-format.md)") from None
    finally:
        os.unlink(tmp)
    mode = suite.stat().st_mode & 0o777 if suite.exists() else 0o644     # the author's file keeps its mode
    write_text_atomic(suite, new)
    os.chmod(suite, mode)
    return suite
