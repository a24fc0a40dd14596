"""Integrations with other evaluation tools (optional extras): :mod:`hopscore.integrations.inspect`
registers hopscore's benchmarks as inspect_ai tasks."""
