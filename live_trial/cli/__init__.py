"""The ``live-trial`` command: argument parsing, what a person reads (rich, ``--json``) and exit codes. The only
place that prints and exits; it never decides a trial's outcome itself.
"""
