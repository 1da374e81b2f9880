"""The session transcript (JSONL): where it is, reading it without ever raising, the order its records happened
in, and the four-state classifier over them. The only code that opens transcript files; it never talks to tmux and
never decides what a trial does next.
"""
