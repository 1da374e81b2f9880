"""Reading past trials: one trial as a self-contained page (``report.html``), the list, one trial's summary and next
step, what CI reads of a run (JUnit XML, GitHub job summary and annotations) and the merge of shards' eval-logs.
Reads what trials left; never runs a session, never judges and never changes a trial's records (it only adds
``report.html``; ``merge`` copies whole trials, as they are, into another eval-log).
"""
