"""The first artifact delivered to a person, their choice, the diff ticket and the improvement loop's ledger (seed 001
artifact_delivery; seed 002 diff tickets). It checks and records each step; it never judges a goal (the fresh
evaluator does), never changes a skill's files (the host session does) and never runs a trial.
"""
