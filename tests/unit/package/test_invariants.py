"""ARCHITECTURE.md invariants that a source scan can hold: one tmux boundary, one transcript reader, a quiet core."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[3] / "live_trial"
#: Every module but the command line (cli/ prints and exits by design) and ``__main__``.
CORE = sorted(p for p in PKG.rglob("*.py") if p.name != "__main__.py" and p.relative_to(PKG).parts[0] != "cli")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def _calls(path: Path, name: str) -> list[int]:
    tree = ast.parse(path.read_text())
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def test_only_session_backend_imports_libtmux():
    users = {p.relative_to(PKG).as_posix() for p in PKG.rglob("*.py") if "libtmux" in _imports(p)}
    assert users == {"session/backend.py"}


def test_the_core_never_prints():
    offenders = {p.relative_to(PKG).as_posix(): _calls(p, "print") for p in CORE if _calls(p, "print")}
    assert offenders == {}


def test_only_transcript_opens_transcript_files():
    """Every other module goes through live_trial.transcript (read_records, copy_transcript, transcript_sha256)."""
    offenders = []
    for p in CORE:
        if p.relative_to(PKG).parts[0] == "transcript":
            continue
        text = p.read_text()
        for lineno in _calls(p, "open"):
            line = text.splitlines()[lineno - 1]
            if "transcript" in line or "jsonl" in line:
                offenders.append(f"{p.relative_to(PKG)}:{lineno}")
    assert offenders == []


def _words_of_an_enum(tree: ast.AST) -> set[int]:
    """The ids of the assignments that are members of an enumeration and hold no number (the poll's exit word
    ``HARD_CAP``, the stop reason ``hard_cap``): a word, not a loop bound."""
    out = set()
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef) and any(getattr(b, "id", "").endswith("Enum") for b in cls.bases):
            for node in cls.body:
                if isinstance(node, ast.Assign) and not any(
                        isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) for c in ast.walk(node.value)):
                    out.add(id(node))
    return out


def test_loop_bounds_are_not_hard_coded_outside_policy():
    """The policy numbers' names appear as literals only in policy.py (they come from convergence-policy.json)."""
    for p in CORE:
        if p.relative_to(PKG).as_posix() == "policy.py":
            continue
        tree = ast.parse(p.read_text())
        words = _words_of_an_enum(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and id(node) not in words:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        assert t.id.upper() not in ("NUDGE_MAX", "STALL_LIMIT_S", "HARD_CAP_S", "STALL_LIMIT",
                                                    "HARD_CAP"), f"{p.relative_to(PKG)}:{node.lineno}"


def test_the_core_never_exits():
    """Only the command line turns an outcome into an exit code (ARCHITECTURE invariant 3). The one other process
    entry point is the pane's holder (session/holder.py, ``python -m``): its exit status is the held program's."""
    offenders = []
    for p in CORE:
        if p.relative_to(PKG).as_posix() == "session/holder.py":
            continue
        tree = ast.parse(p.read_text())
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("exit", "_exit") \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in ("sys", "os"):
                offenders.append(f"{p.relative_to(PKG)}:{n.lineno}")
    assert offenders == []
