"""Statistics, in one place: the per-example values kept while scoring, the interval of every
metric, the bootstrap, clusters, paired tests, multiplicity, power, pass@k, agreement.

The modules that ``hopscore score`` needs for its default intervals import nothing heavy at the
top: :mod:`~hopscore.inference.values`, :mod:`~hopscore.inference.intervals` and
:mod:`~hopscore.inference.ci` are pure Python (the default intervals need neither numpy nor
scipy); :mod:`~hopscore.inference.resample` and the others import numpy and scipy where a
computation needs them. See ``docs/statistics.md``.
"""
