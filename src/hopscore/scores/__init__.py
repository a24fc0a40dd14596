"""Scores: the id policy and aggregation (scoring), what scoring produces (results), and the
score tables (display)."""
