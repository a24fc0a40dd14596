"""The self-contained HTML report (``hopscore report``): template, script and styles are package
resources beside this module."""

#: Read by the command line for its defaults, so they live here and not in ``build`` (jinja2).
DEFAULT_MAX_TEXT = 4000
COMPRESS_CHOICES = ("auto", "always", "never")
