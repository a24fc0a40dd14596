"""Statistical inference: intervals, paired tests, multiplicity, power, pass@k, agreement.

The modules import nothing heavy at the top: :mod:`~hopscore.inference.ci` is pure Python (the
default intervals of ``hopscore score`` need neither numpy nor scipy), and the others import
numpy and scipy where a computation needs them. See ``docs/statistics.md``.
"""
