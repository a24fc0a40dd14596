"""Bamboogle's error categories: the short-answer ones (the outcome, and how a wrong answer
relates to the gold one)."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import short_answer_dimensions as dimensions

__all__ = ["dimensions"]
