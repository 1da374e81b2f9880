"""One whole trial, start to end: inputs, workdir, the runner and its poll loop, the STALL table, collect, resume
and the final judgement. It drives the lower floors and never prints: the CLI does.
"""
