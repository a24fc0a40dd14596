"""Analysis of scored runs: loading score/run directories and judge or SQL verdict files,
paired comparison, error categories. Reads only score files, so it works on runs made elsewhere.
"""
