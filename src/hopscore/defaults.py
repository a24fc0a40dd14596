"""Defaults shared by the library and the command line, in a module that imports nothing.

They live apart from :mod:`hopscore.inference` and :mod:`hopscore.judge` so that reading them
loads neither numpy nor the judge's client stack: a score without confidence intervals
(``--resamples 0``) never imports numpy, and ``hopscore --help`` imports neither.
"""

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 0
DEFAULT_LEVEL = 0.95
#: completion budget of one judge call (``hopscore judge --max-tokens``)
DEFAULT_MAX_TOKENS = 2048
#: seconds a run waits for an endpoint that stopped answering (``--max-outage``)
DEFAULT_MAX_OUTAGE = 300.0
