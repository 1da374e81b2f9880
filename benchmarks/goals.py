"""The goals one benchmark run checks: each is recorded as met or missed as it is printed, and the run's exit status
says whether all of them held (``make bench`` names every benchmark that exits 1)."""
from __future__ import annotations


class Goals:
    """The goals of one benchmark, by name; ``label`` starts the line that names the missed ones."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.missed: list[str] = []

    def check(self, name: str, ok: bool) -> str:
        """Record whether goal ``name`` held; return the word printed after it ("met" or "NOT met")."""
        if not ok:
            self.missed.append(name)
        return "met" if ok else "NOT met"

    def exit_code(self) -> int:
        """0 when every goal held, else 1 after printing the ones missed."""
        if self.missed:
            print(f"{self.label} goals missed: {', '.join(self.missed)}")
        return 1 if self.missed else 0
