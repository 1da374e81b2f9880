"""What a trial's facts mean: the acceptance tier, the overall verdict table, verdict.json and the plan that reuses
an earlier PASS. Pure decisions over data and files; it never runs a session or a model.
"""
