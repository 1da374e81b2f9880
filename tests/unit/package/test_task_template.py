"""task.md carries the five contract items of seed 001 ("task.md 契約")."""
from __future__ import annotations

from live_trial.resources import read_reference


def test_template_has_the_five_contract_items():
    t = read_reference("task-template.md")
    assert 'Skill({skill: "{{TARGET_SKILL}}", args: "{{ARGS}}"})' in t          # 1 literal Skill call
    assert "exactly one completion marker" in t and "{{MARKER_PATH}}" in t      # 2 one marker
    assert "DONE: <status>" in t                                                 # 3 one-line report
    assert "Do not ask a human anything" in t                                    # 4 run on its own
    assert "Do not add steps of your own, skip steps" in t                       # 5 no own additions
