from __future__ import annotations

import sys

from live_trial.cli.main import main

sys.exit(main())
