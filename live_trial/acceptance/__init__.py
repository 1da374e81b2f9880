"""What a trial's facts mean: the acceptance tier, the overall verdict table, the verdict (read once into
``VerdictFacts``, derived purely into a ``Verdict``, written as verdict.json), the plan that reuses an earlier PASS and
the split of a plan's trials over CI machines (``shard.py``). Pure decisions over data and files; it never runs a
session or a model.
"""
