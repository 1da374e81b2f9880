"""The suite of trials a skill author writes once: ``live-trials.yaml`` at a plugin's root, or ``--suite FILE``
(README "Planning many skills", references/suite-format.md, schemas/live-trials.schema.json).

Per skill one or more named cases, each with its own args, answers to its questions (with their kinds), expected
stop, rehearsal scenario, bounds, model and fixture folder; an activation case (``kind: activation``) lists instead
the prompts that should and should not start the skill (references/suite-format.md "Activation cases"). A skill the
suite does not name gets one default case (no args, no answers): the trial ``plan`` planned before suites existed, with
the same ``scenario_id``.

A bad file is refused whole (:class:`RefusedInput`, ``bad_suite``, exit 2) before anything is planned or written:
every problem with the file, its line and the key, from the YAML's node marks (``yaml.compose``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from live_trial.errors import RefusedInput

#: The suite file's name at a plugin's root.
SUITE_FILE = "live-trials.yaml"

#: The suite's schema in schemas/.
SCHEMA = "live-trials.schema.json"

#: The name of the case a skill gets when the suite names none.
DEFAULT_CASE = "default"

#: The kinds of case: the skill called by its task and judged on its goal, or its prompts pasted alone.
TASK, ACTIVATION = "task", "activation"
#: Keys of an activation case that describe the acceptance trial of ``then_acceptance`` only.
ACCEPTANCE_KEYS = ("args", "answers", "expect", "criteria")


@dataclass(frozen=True)
class Prompt:
    """One prompt of an activation case (references/suite-format.md "Activation cases"): the text a person would type,
    pasted alone into a session of its own."""

    text: str                       #: pasted as it is: nothing is added (no Skill literal, no completion marker)
    should_trigger: bool            #: the model should invoke the skill for it (True) or leave the skill alone
    repeats: int | None = None      #: sessions of this prompt; None: the case's ``repeats``

    def sessions(self, case_repeats: int) -> int:
        """How many sessions this prompt gets: its own ``repeats``, else the case's."""
        return self.repeats if self.repeats is not None else case_repeats


@dataclass(frozen=True)
class Case:
    """One named trial of a skill (references/suite-format.md); paths are resolved against the suite file."""

    name: str = DEFAULT_CASE                           #: unique within its skill
    args: str = ""                                     #: the skill's arguments (run --args)
    answers: tuple[tuple[str, str], ...] | None = None  #: (answer, kind) in order; None: the suite gave none
    expect_gate: bool = False                          #: ``expect: gate`` (run --expect-gate)
    scenario: Path | None = None                       #: the rehearsal scenario (run --rehearsal)
    replay: Path | None = None                         #: the tape a rehearsal answers from (run --replay)
    stall_limit_s: float | None = None                 #: run --stall-limit
    hard_cap_s: float | None = None                    #: run --hard-cap
    proof: bool = False                                #: run --proof
    model: str | None = None                           #: run --model
    repeats: int = 1                                   #: independent trials of the case (run --repeat)
    max_cost_usd: float | None = None                  #: the trial's budget (run --max-cost-usd)
    cwd: Path | None = None                            #: a fixture folder copied for the trial (run --cwd)
    criteria: tuple[tuple[str, str], ...] = ()         #: ``(id, text)`` the evaluator judges besides the skill's
    kind: str = TASK                                   #: what the case tries: ``task`` or ``activation``
    suite: Path | None = None                          #: the suite file it comes from; None: the default case
    mcp_fixtures: tuple[tuple[str, str], ...] = ()     #: stand-in MCP servers (NAME, COMMAND) (run --mcp-fixture)
    prompts: tuple[Prompt, ...] = ()                   #: an activation case's prompts, in file order
    stop_after_trigger: bool = False                   #: an activation case: end a session once the skill was invoked
    then_acceptance: bool = False                      #: an activation case: one acceptance trial after its prompts

    @property
    def activation(self) -> bool:
        """An activation case (``kind: activation``)."""
        return self.kind == ACTIVATION

    def trials(self) -> int:
        """The sessions the case starts: k for a task case of ``repeats: k``; for an activation case every prompt's
        sessions, plus one acceptance trial with ``then_acceptance`` (a plan's budget counts these)."""
        if not self.activation:
            return self.repeats
        return sum(p.sessions(self.repeats) for p in self.prompts) + (1 if self.then_acceptance else 0)


#: The case of a skill no suite names: what ``plan`` planned before suites (its scenario_id is unchanged).
DEFAULT = Case()


@dataclass(frozen=True)
class Suite:
    """A validated suite file: its cases by the skill key as written (``skill`` or ``plugin:skill``)."""

    path: Path                                          #: the suite file, resolved
    cases: Mapping[str, tuple[Case, ...]]               #: skill key -> its cases, in file order
    key_lines: Mapping[str, int]                        #: skill key -> the line it is written on (1-based)

    def cases_for(self, plugin: str, skill: str) -> tuple[Case, ...] | None:
        """The cases of ``plugin:skill`` (the ``plugin:skill`` key first, then the bare ``skill``); None when the
        suite does not name the skill."""
        return self.cases.get(f"{plugin}:{skill}") or self.cases.get(skill)

    def unknown_keys(self, known: Iterable[tuple[str, str]]) -> list[str]:
        """The suite's skill keys that name none of the ``(plugin, skill)`` pairs planned, as ``file:line key``."""
        pairs = list(known)
        names = {f"{p}:{s}" for p, s in pairs} | {s for _, s in pairs}
        return [f"{self.path}:{self.key_lines[k]} skills.{k}" for k in self.cases if k not in names]


def load_suite(path: Path) -> Suite:
    """Read and validate the suite file ``path`` (YAML, schemas/live-trials.schema.json, then the rules the schema
    cannot say: case names unique per skill, ``args`` one line, ``scenario`` and ``replay`` files (not both) and
    ``cwd`` a folder relative to the suite). Returns the :class:`Suite`. Raises :class:`RefusedInput` (code
    ``bad_suite``) naming every problem as ``<file>:<line> <key>: <what>``; nothing is read beyond the file and the
    paths it names."""
    import yaml

    path = Path(path).resolve()
    try:
        text = path.read_text(encoding="utf-8")
        root, data = _parse(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(path, [f"{path}: cannot be read ({exc})"]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise _refuse(path, [f"{path}{line}: not YAML ({getattr(exc, 'problem', None) or exc})"]) from None
    problems = _schema_problems(path, root, data)
    if problems:
        raise _refuse(path, problems)
    cases: dict[str, tuple[Case, ...]] = {}
    lines: dict[str, int] = {}
    for key, skill in data["skills"].items():
        lines[key] = _line(root, ["skills", key], key_of=True)
        seen: set[str] = set()
        built = []
        for n, raw in enumerate(skill["cases"]):
            where = ["skills", key, "cases", n]
            if raw["name"] in seen:
                problems.append(_at(path, root, where + ["name"], f"case name {raw['name']!r} is used twice"))
            ids = [c["id"] for c in raw.get("criteria") or ()]
            if len(ids) != len(set(ids)):
                problems.append(_at(path, root, where + ["criteria"], "a criterion id is used twice"))
            seen.add(raw["name"])
            case, wrong = _case(path, raw)
            problems += [_at(path, root, where + [field], why) for field, why in wrong]
            built.append(case)
        cases[key] = tuple(built)
    if problems:
        raise _refuse(path, problems)
    return Suite(path, cases, lines)


def _parse(text: str) -> tuple[Any, Any]:
    """``(node tree, data)`` of the YAML ``text``, parsed once (libyaml's safe loader when PyYAML has it: a plan reads
    the suite on every run). Raises yaml.YAMLError."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def _case(path: Path, raw: Mapping[str, Any]) -> tuple[Case, list[tuple[str, str]]]:
    """A schema-valid case as a :class:`Case`, and the ``(key, problem)`` pairs the schema cannot find."""
    wrong: list[tuple[str, str]] = []
    args = str(raw.get("args") or "")
    if "\n" in args or "\r" in args:
        wrong.append(("args", "args must be one line"))
    scenario = path.parent / raw["scenario"] if "scenario" in raw else None
    if scenario is not None and not scenario.is_file():
        wrong.append(("scenario", f"no scenario file {scenario}"))
    replay = path.parent / raw["replay"] if "replay" in raw else None
    if replay is not None and not replay.is_file():
        wrong.append(("replay", f"no tape file {replay}"))
    if replay is not None and scenario is not None:
        wrong.append(("replay", "a case is played from a scenario or from a tape, not both: drop scenario or replay"))
    cwd = path.parent / raw["cwd"] if "cwd" in raw else None
    if cwd is not None and not cwd.is_dir():
        wrong.append(("cwd", f"no fixture folder {cwd}"))
    answers = raw.get("answers")
    case = Case(name=raw["name"], args=args,
                answers=None if answers is None else tuple((a["answer"], a["kind"]) for a in answers),
                expect_gate=raw.get("expect", "PASS") == "gate",
                scenario=scenario.resolve() if scenario else None, replay=replay.resolve() if replay else None,
                stall_limit_s=raw.get("stall_limit"),
                hard_cap_s=raw.get("hard_cap"), proof=bool(raw.get("proof")), model=raw.get("model"),
                repeats=int(raw.get("repeats", 1)), max_cost_usd=raw.get("max_cost_usd"),
                cwd=cwd.resolve() if cwd else None, suite=path,
                mcp_fixtures=tuple((n, fixture_command(c, path.parent))
                                   for n, c in (raw.get("mcp_fixtures") or {}).items()),
                criteria=tuple((str(c["id"]), str(c["text"])) for c in raw.get("criteria") or ()),
                kind=str(raw.get("kind", TASK)),
                prompts=tuple(Prompt(str(p["prompt"]), bool(p["should_trigger"]), p.get("repeats"))
                              for p in raw.get("prompts") or ()),
                stop_after_trigger=bool(raw.get("stop_after_trigger")),
                then_acceptance=bool(raw.get("then_acceptance")))
    wrong += [("mcp_fixtures", problem) for problem in map(_stand_in_problem, case.mcp_fixtures) if problem]
    return case, wrong + _kind_problems(raw)


def _stand_in_problem(fixture: tuple[str, str]) -> str | None:
    """What is wrong with one ``(NAME, COMMAND)`` of a case's ``mcp_fixtures`` that can be told without the loaded
    plugins: a command that cannot be split, is empty, or names a program or script that does not exist
    (:func:`missing_program`); None when nothing is."""
    import shlex

    name, command = fixture
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"{name}: the stand-in's command cannot be split ({exc}): quote it as a shell would"
    if not words:
        return f"{name}: the stand-in's command is empty: give the command that starts the stand-in MCP server"
    missing = missing_program(words)
    return f"{name}: the stand-in's command names {missing}: fix the command" if missing else None


def _kind_problems(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(key, problem)`` pairs of a case's kind the schema cannot say (references/suite-format.md "Activation
    cases"): a task case takes no prompts; an activation case needs its prompts, each once and none a slash command
    (the CLI runs a line starting with ``/`` itself: no model chooses anything), takes no tape (one tape holds one
    session), and its acceptance keys only with ``then_acceptance``."""
    if raw.get("kind", TASK) != ACTIVATION:
        return [(key, f"{key} belongs to an activation case: add kind: activation")
                for key in ("prompts", "stop_after_trigger", "then_acceptance") if key in raw]
    wrong = []
    prompts = [str(p["prompt"]) for p in raw.get("prompts") or ()]
    if not prompts:
        wrong.append(("kind", "an activation case needs prompts: a list of {prompt, should_trigger}"))
    if len({p.strip() for p in prompts}) != len(prompts):
        wrong.append(("prompts", "a prompt is written twice: give it repeats instead"))
    wrong += [("prompts", f"prompt {n + 1} starts with /: the CLI runs a slash command itself, so it says nothing "
                          "about whether the model picks the skill") for n, p in enumerate(prompts)
              if p.lstrip().startswith("/")]
    if "replay" in raw:
        wrong.append(("replay", "an activation case runs a session per prompt, and a tape holds one session: use "
                                "scenario"))
    if not raw.get("then_acceptance"):
        wrong += [(key, f"{key} is for the acceptance trial of then_acceptance: true, which this case does not ask "
                        "for (a prompt is pasted alone)") for key in ACCEPTANCE_KEYS if key in raw]
    return wrong


#: Programs that run the script named by their first word that is no option (a stand-in's ``python3 fake_db.py``).
INTERPRETERS = frozenset({"python", "python3", "node", "bash", "sh", "ruby", "perl", "deno", "bun"})


def missing_program(words: Sequence[str]) -> str | None:
    """What of a stand-in MCP server's command (its words, ``./`` and ``../`` made absolute) does not exist, or None:
    its program (a path that is no file or not executable, or a name not on PATH), or the script an interpreter
    (:data:`INTERPRETERS`) is told to run (its first word that is no option: a path that exists, never a bare
    name, which the trial's claude would look for in the trial's own folder; none after ``-c``, ``-m`` or ``-e``),
    or the script an interpreter given no script lacks. Checked before anything is created, by ``plan`` and by
    ``run``, so a typo in the person's stand-in is refused, never started and found failing as if the plugin's
    server had (README "Stand-in MCP servers")."""
    import os
    import shlex
    import shutil

    program = words[0]
    if "/" in program:
        if not Path(program).exists():
            return f"a program file that does not exist: {program}"
        if not (Path(program).is_file() and os.access(program, os.X_OK)):
            return f"a program that is not an executable file: {program}"
    elif shutil.which(program) is None:
        return f"a program not found on PATH: {program}"
    if Path(program).name not in INTERPRETERS:
        return None
    for word in words[1:]:
        if word in ("-c", "-m", "-e", "--eval", "-p", "--print"):   # inline code or a module: no script file
            return None
        if not word.startswith("-"):
            if "/" not in word:         # started in the trial's own folder, where a file of that name is not
                return f"a script named without a folder: {word} (write ./{word} for the one in this folder)"
            if Path(word).is_file():
                return None
            return (f"a script that is not a file: {word}" if Path(word).exists()
                    else f"a script that does not exist: {word}")
    return f"an interpreter with no script to run: {shlex.join(words)}"


def fixture_command(command: str, base: Path) -> str:
    """A stand-in MCP server's ``command`` (suite ``mcp_fixtures``, ``run --mcp-fixture``) with each word that starts
    ``./`` or ``../`` made absolute from ``base`` (the suite file's folder; the current one for ``run``): the trial's
    claude starts it in the trial's own folder. A command that cannot be split is left as it is (the trial refuses
    it)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return command
    return shlex.join(str((Path(base) / w).resolve()) if w.startswith(("./", "../")) else w for w in words)


@lru_cache(maxsize=1)
def _validator() -> Any:
    """The suite schema's validator, built once per process with its local ``$ref``s inlined (the same results,
    several times faster: a plan reads the suite on every run)."""
    from jsonschema import Draft202012Validator

    from live_trial.resources import load_schema

    schema = load_schema(SCHEMA)
    return Draft202012Validator(_inlined(schema, schema.get("$defs", {})))


def _inlined(node: Any, defs: Mapping[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/x"}`` replaced by the definition (the suite schema's refs are local
    and not recursive)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: _inlined(v, defs) for k, v in node.items() if k != "$ref"}
            return {**_inlined(defs[ref[len("#/$defs/"):]], defs), **rest}
        return {k: _inlined(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inlined(v, defs) for v in node]
    return node


def _schema_problems(path: Path, root: Any, data: Any) -> list[str]:
    """Every schema error of ``data`` as ``<file>:<line> <key>: <message>``, sorted by line."""
    found = []
    for error in _validator().iter_errors(data):
        where = list(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            for key in extra:
                found.append((_line(root, where + [key], key_of=True),
                              f"{_dotted(where + [key])}: unknown key {key!r} (the keys are "
                              f"{', '.join(sorted(error.schema.get('properties', {})))})"))
            continue
        if "propertyNames" in error.absolute_schema_path:
            found.append((_line(root, where + [error.instance], key_of=True),
                          f"{_dotted(where + [error.instance])}: not a skill name ({error.message})"))
            continue
        found.append((_line(root, where), f"{_dotted(where) or '(top)'}: {error.message}"))
    return [f"{path}:{line} {what}" for line, what in sorted(found, key=lambda p: p[0])]


def _at(path: Path, root: Any, where: list[Any], why: str) -> str:
    return f"{path}:{_line(root, where)} {_dotted(where)}: {why}"


def _dotted(where: list[Any]) -> str:
    """``skills.greet.cases[0].args`` from a path of keys and indexes."""
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line(root: Any, where: list[Any], *, key_of: bool = False) -> int:
    """The 1-based line of the node at ``where`` in the composed YAML ``root`` (of its key with ``key_of``); the
    deepest node found when the path ends early."""
    import yaml

    node, line = root, (root.start_mark.line + 1 if root is not None else 1)
    for n, part in enumerate(where):
        last = n == len(where) - 1
        if isinstance(node, yaml.MappingNode):
            hit = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if hit is None:
                return line
            node, line = hit[1], (hit[0] if last and key_of else hit[1]).start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _refuse(path: Path, problems: list[str]) -> RefusedInput:
    """One refusal naming every problem (the first in the line a person reads first)."""
    many = f"{len(problems)} problems: " if len(problems) > 1 else ""
    return RefusedInput(f"the suite file is not valid: {many}{'; '.join(problems)}", code="bad_suite",
                        fix="fix the file (references/suite-format.md)", details={"problems": problems})


def suite_sha(path: Path) -> str:
    """``sha256:<hex>`` of a suite file's bytes (a plan records it; ``run --plan --suite`` compares it)."""
    import hashlib

    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_suites(roots: Iterable[Path], suite: Path | None) -> dict[Path, Suite]:
    """The suite of each plugin root: ``suite`` (``--suite FILE``) for every one when given, else each root's own
    ``live-trials.yaml`` when it has one. Raises :class:`RefusedInput` for a bad file or a ``--suite`` that is not a
    file."""
    if suite is not None:
        if not Path(suite).is_file():
            raise RefusedInput("no suite file", where=f"--suite {suite}", code="bad_suite",
                               fix="pass the path of a live-trials.yaml (references/suite-format.md)")
        one = load_suite(Path(suite))
        return {Path(r).resolve(): one for r in roots}
    return {Path(r).resolve(): load_suite(Path(r) / SUITE_FILE) for r in roots if (Path(r) / SUITE_FILE).is_file()}
