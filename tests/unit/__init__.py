"""Unit tests, laid out like the package: ``<subpackage>/`` tests ``live_trial/<subpackage>/``, ``package/`` the
top-level modules and the rules over the whole package; ``fakes.py`` the fakes they share."""
