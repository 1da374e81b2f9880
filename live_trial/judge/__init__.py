"""The fresh evaluator (a separate ``claude -p``) and the rules its answer and evidence must meet: PASS or FAIL with
blockers and counted evidence. It never scores and never takes the session's own words as evidence.
"""
