"""The self-contained HTML report (``hopscore report``): template, script and styles are package
resources beside this module."""
