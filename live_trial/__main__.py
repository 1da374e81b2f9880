"""``python -m live_trial``: the ``live-trial`` command line; exits with the code :func:`live_trial.cli.main.main`
returns."""
from __future__ import annotations

import sys

from live_trial.cli.main import main

sys.exit(main())
