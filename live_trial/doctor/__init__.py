"""The doctor: plays a short rehearsal probe on an installed ``claude`` and says, one line per assumption, whether
each screen marker, transcript record and output format the harness relies on still holds on that CLI.
It uses the harness's own functions (boot, screen, send, transcript, plugin_check, the evaluator's ``-p`` call) and
never changes the harness's behaviour, the user's configuration or anything outside its own temporary folder.
"""
