"""One whole trial, start to end: inputs, workdir and its typed state (``TrialState``), the trial's own working
folder (fresh, a private copy, or in place under a lock) and what its session changed there, the runner and its poll
loop (observe, then decide), the STALL table, collect, resume and the finishing sequence. It drives the lower floors
and never prints: the CLI does.
"""
