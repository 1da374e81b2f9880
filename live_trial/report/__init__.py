"""Reading past trials: one trial as a self-contained page (``report.html``), the list of trials, one trial's summary,
reasons, evidence and next step. Reads what a trial left in its workdir; never runs a session, never judges and
never changes a trial's records (it only adds ``report.html``).
"""
