"""The scripted model server that plays a scenario to the real CLI, the scenario language, and the isolated
configuration a rehearsal runs in. It never talks to the real API and never counts as proof of a skill.
"""
