"""One whole trial, start to end: inputs, workdir, the trial's own working folder (fresh, a private copy, or in place
under a lock) and what its session changed there, the runner and its poll loop, the STALL table, collect, resume
and the final judgement. It drives the lower floors and never prints: the CLI does.
"""
