"""The package's layout holds (ARCHITECTURE "Layout"; README "How the code is laid out"): no two modules and no two
subpackages import each other (directly or around a longer circle), the floor order of ``live_trial/__init__.py``
is the order the imports follow, only ``session/backend`` talks to tmux, and every subpackage says what it owns. The
unit tests are laid out like the package, and no test reaches a private name of it.

Imports are read with :mod:`ast`, function-level imports included: a lazy import is still an arrow.
"""
from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

import live_trial

PKG = Path(live_trial.__file__).resolve().parent
TOP_LEVEL = {"clock", "errors", "jsonfile", "policy", "resources", "stop_reasons", "workdir_files"}
#: Subpackages from the bottom floor up (live_trial/__init__.py); top-level modules are below them all, cli and
#: pytest_plugin above them all.
FLOORS = [["transcript", "closure"], ["session", "rehearsal"], ["judge", "tape"], ["acceptance", "doctor"], ["notices"],
          ["trial"], ["report"], ["delivery"], ["cli"]]


def module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = PKG) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    return {module_name(p): p for p in sorted(root.rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The package modules ``path`` imports (``from live_trial.x import y`` counts ``live_trial.x.y`` when that is a
    module, else ``live_trial.x``); relative imports are resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
            if not base.startswith("live_trial"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known}


def graph(root: Path = PKG) -> dict[str, set[str]]:
    """Module import graph of the package under ``root`` (self-arrows and arrows to ``live_trial`` itself dropped:
    the package docstring module holds only constants)."""
    mods = modules(root)
    known = set(mods)
    return {m: imports_of(p, known) - {m, "live_trial"} for m, p in mods.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative): each is an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def room(module: str) -> str:
    """The subpackage a module lives in, or the module itself at the top level."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def room_graph(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for src, dsts in edges.items():
        rooms.setdefault(room(src), set()).update(room(d) for d in dsts if room(d) != room(src))
    return rooms


def test_no_module_circle():
    assert circles(graph()) == []


def test_no_subpackage_circle():
    assert circles(room_graph(graph())) == []


def test_imports_follow_the_floor_order():
    """A module imports only modules of its own room, of a lower floor, or the bottom (clock, errors, jsonfile, policy,
    resources, stop_reasons, workdir_files). The order is the one written in live_trial/__init__.py."""
    floor = {name: i + 1 for i, names in enumerate(FLOORS) for name in names}
    floor.update({name: 0 for name in TOP_LEVEL})
    floor.update({"pytest_plugin": len(FLOORS) + 1, "__main__": len(FLOORS) + 1})
    upward = []
    for src, dsts in graph().items():
        for dst in dsts:
            a, b = room(src), room(dst)
            if a != b and floor[b] >= floor[a] and not (floor[a] == floor[b] == 0):
                upward.append(f"{src} -> {dst}")
    assert upward == []


def test_the_floor_order_is_written_in_the_package_docstring():
    doc = live_trial.__doc__ or ""
    positions = [doc.find(f"``{name}/``") for names in FLOORS for name in names]
    assert -1 not in positions, "every subpackage is named in the package docstring as ``name/``"
    by_floor = [[doc.find(f"``{name}/``") for name in names] for names in FLOORS]
    assert all(max(a) < min(b) for a, b in zip(by_floor, by_floor[1:]))


def test_every_subpackage_says_what_it_owns_and_what_it_never_does():
    for init in sorted(PKG.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert 2 <= len([ln for ln in doc.splitlines() if ln.strip()]) <= 4, init
        assert re.search(r"\bnever\b", doc), f"{init}: say what the subpackage never does"


def test_at_most_ten_modules_at_the_top_level_and_none_too_long():
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= 10, top
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert long == {}


def _runs_tmux(path: Path) -> list[int]:
    """Lines where ``path`` starts a process whose argv begins with "tmux" (subprocess, os.exec*, libtmux)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, (ast.List, ast.Tuple)) and first.elts and isinstance(first.elts[0], ast.Constant) \
                    and first.elts[0].value == "tmux":
                lines.append(node.lineno)
    return lines


def test_only_session_backend_imports_libtmux_or_runs_tmux():
    users = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "libtmux" for a in node.names):
                users.append(name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "libtmux":
                users.append(name)
        if _runs_tmux(path):
            users.append(name)
    assert sorted(set(users)) == ["live_trial.session.backend"]


# ----------------------------------------------------------------- the checks can fail

def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture()
def toy(tmp_path: Path, monkeypatch) -> Path:
    """A copy-sized package named live_trial with two rooms, to show the checks catch what they claim to."""
    root = tmp_path / "live_trial"
    _write(root, "__init__.py", "")
    _write(root, "errors.py", "")
    _write(root, "a/__init__.py", "")
    _write(root, "a/one.py", "from live_trial.b import two\n")
    _write(root, "b/__init__.py", "")
    _write(root, "b/two.py", "def f():\n    from live_trial.a.one import x\n")
    _write(root, "b/three.py", "import subprocess\nsubprocess.run(['tmux', 'ls'])\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", root)
    return root


def test_a_deliberate_circle_is_found(toy):
    assert circles(graph(toy)) == [["live_trial.a.one", "live_trial.b.two"]]
    assert circles(room_graph(graph(toy))) == [["a", "b"]]


def test_a_module_running_tmux_is_found(toy):
    assert _runs_tmux(toy / "b" / "three.py") == [2]


def test_no_function_takes_an_untyped_trial():
    """The steps of a trial say what they are given (``trial: TrialContext``), never a bare ``trial``."""
    untyped = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                untyped += [f"{name}.{node.name}" for a in args if a.arg == "trial" and a.annotation is None]
    assert untyped == []


LONGEST_FUNCTION_LINES = 80   # CONVENTIONS aims at 60; the two busiest rooms are held to this


@pytest.mark.parametrize("room_name", ["trial", "acceptance"])
def test_no_function_of_the_busiest_rooms_is_longer_than_80_lines(room_name):
    """A function of ``trial/`` or ``acceptance/`` reads in one screen (poll, the verdict, the finishing sequence)."""
    long = []
    for name, path in modules().items():
        if room(name) != room_name:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST_FUNCTION_LINES:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert long == []


# ----------------------------------------------------------------- the tests

TESTS = Path(__file__).resolve().parents[2]
UNIT = TESTS / "unit"
#: Folders of tests/unit that hold what the real CLI showed and wrote (read by the tests of several subpackages).
DATA_FOLDERS = {"screens", "transcripts", "validator"}
#: The folder of the tests of the top-level modules, of the whole package and of the suite itself.
PACKAGE_WIDE = "package"
#: Private names of the package a test may reach: none (a test checks behaviour through public names).
PRIVATE_ALLOWED: set[str] = set()
ATTRIBUTE_CALLS = {"setattr", "getattr", "delattr", "hasattr"}


def test_every_folder_of_the_unit_tests_is_named_after_a_subpackage():
    """tests/unit/<name>/ holds the tests of live_trial/<name>/; besides those, only the data folders and
    ``package/``. Every test file is in one of them, and every test folder is a package (the tests import
    ``tests.unit.fakes``)."""
    subpackages = {init.parent.name for init in PKG.glob("*/__init__.py")}
    folders = {p.name for p in UNIT.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders - DATA_FOLDERS - {PACKAGE_WIDE} - subpackages == set()
    assert sorted(p.name for p in UNIT.glob("test_*.py")) == []
    assert sorted(name for name in folders - DATA_FOLDERS if not (UNIT / name / "__init__.py").is_file()) == []
    assert sorted(str(p.relative_to(UNIT)) for name in DATA_FOLDERS for p in (UNIT / name).rglob("*.py")) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_module(dotted: str) -> bool:
    try:
        importlib.import_module(dotted)
    except ImportError:
        return False
    return True


def private_reaches(path: Path, in_strings: bool = True) -> list[tuple[int, str]]:
    """Where the test file ``path`` reaches a private name of the package, as ``(line, dotted name)``:
    ``from live_trial.x import _y``, ``mod._y`` where ``mod`` is an imported live_trial module,
    ``setattr(mod, "_y", ...)`` (also ``getattr``, ``delattr``, ``hasattr``, ``monkeypatch.setattr``) and a dotted
    ``"live_trial.x._y"`` as a call's first argument; the same inside a string that is Python code importing
    live_trial (what a test runs with ``python -c``) unless ``in_strings`` is False. Dunder names are not private. A private attribute of an
    *instance* (``checks._by_name``) is beyond what the syntax tells and not found."""
    return reaches_in(path.read_text(encoding="utf-8"), in_strings=in_strings)


def code_importing_live_trial(text: str) -> ast.Module | None:
    """``text`` parsed, when it is Python code with an import of live_trial (else None)."""
    if "live_trial" not in text or "import" not in text:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return tree if any("live_trial" in ast.unparse(n) for n in imports) else None


def reaches_in(source: str, first_line: int = 1, in_strings: bool = True) -> list[tuple[int, str]]:
    """:func:`private_reaches` of Python ``source`` whose first line is line ``first_line`` of its file."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "live_trial":
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if _private(alias.name) or any(_private(part) for part in node.module.split(".")):
                    found.add((node.lineno, f"{node.module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "live_trial":
                    bound[alias.asname or "live_trial"] = alias.name if alias.asname else "live_trial"
                    if any(_private(part) for part in alias.name.split(".")):
                        found.add((node.lineno, alias.name))

    def dotted(expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Name):
            return bound.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = dotted(expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = dotted(node.value)
            if base and _is_module(base):
                found.add((node.lineno, f"{base}.{node.attr}"))
        elif isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and re.fullmatch(r"live_trial(\.\w+)+", first.value) \
                    and any(_private(part) for part in first.value.split(".")):
                found.add((node.lineno, first.value))
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ATTRIBUTE_CALLS and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and _private(node.args[1].value):
                base = dotted(first)
                if base and _is_module(base):
                    found.add((node.lineno, f"{base}.{node.args[1].value}"))
        elif in_strings and isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and code_importing_live_trial(node.value) is not None:
            found |= {(line + node.lineno - 1, name) for line, name in reaches_in(node.value)}
    return sorted((line + first_line - 1, name) for line, name in found)


def test_no_test_reaches_a_private_name_of_the_package():
    """A test goes through what the package offers (a private helper worth testing on its own gets a public name),
    so a rename inside a module never breaks a test. The allow-list names only what some test still reaches. This
    file's toy test reaches private names in a string on purpose."""
    here = Path(__file__).resolve()
    reached = {(str(path.relative_to(TESTS.parent)), line, name) for path in sorted(TESTS.rglob("*.py"))
               for line, name in private_reaches(path, in_strings=path.resolve() != here)}
    assert sorted(r for r in reached if r[2] not in PRIVATE_ALLOWED) == []
    assert PRIVATE_ALLOWED - {name for _, _, name in reached} == set(), "no test reaches these any more: remove them"


def test_a_test_reaching_a_private_name_is_found(tmp_path):
    path = tmp_path / "test_toy.py"
    path.write_text("import live_trial\n"
                    "import live_trial.trial.poll as P\n"
                    "from live_trial.transcript.status import _classify, classify\n"
                    "from live_trial.notices import resend as nr\n"
                    "from live_trial.session.backend import Backend\n"
                    "def test_x(monkeypatch):\n"
                    "    P._epoch('x'); nr.__name__; Backend._run; classify([])\n"
                    "    live_trial.judge.answer._hidden\n"
                    "    monkeypatch.setattr(nr, '_iso_z', str)\n"
                    "    monkeypatch.setattr('live_trial.notices.webhook._post_once', None)\n"
                    "    getattr(nr, '__doc__'); setattr(Backend, '_run', None)\n"
                    "    code = \"\"\"\n"
                    "from live_trial.cli import plan_run\n"
                    "plan_run._report([], json_mode=True)\n"
                    "\"\"\"\n"
                    "    words = 'import the live_trial notes. _x'\n")
    assert private_reaches(path) == [
        (3, "live_trial.transcript.status._classify"), (7, "live_trial.trial.poll._epoch"),
        (8, "live_trial.judge.answer._hidden"), (9, "live_trial.notices.resend._iso_z"),
        (10, "live_trial.notices.webhook._post_once"), (14, "live_trial.cli.plan_run._report")]
