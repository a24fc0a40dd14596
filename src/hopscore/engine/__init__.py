"""Reusable request machinery for every command that calls a model (the judge, model runs).

* :class:`ChatEngine` sends :class:`ChatRequest`s through a :class:`ChatBackend` with a
  concurrency limit that adapts to the endpoint (:class:`ConcurrencyLimit`), a hard
  per-attempt timeout, retries with exponential back-off and jitter (Retry-After honoured up to
  a cap) within a per-request deadline, and a persistent :class:`ResponseCache` shared safely
  between processes; it returns a :class:`CallResult` holding a :class:`ChatResponse` or a typed
  :class:`CallFailure`, with an :class:`AttemptRecord` per attempt sent.
* :class:`ResultLog` and :func:`run_batch` make a long run resumable: rows are appended as they
  finish, a re-run skips finished keys, and the file ends in input order, one row per item.
* :mod:`hopscore.engine.providers` resolves ``--model`` for every command (and checks keys),
  :mod:`hopscore.engine.preflight` checks an endpoint before the first batch, and
  :mod:`hopscore.engine.failures` accounts for failed requests by class at the end.
"""

from hopscore.engine.backend import ChatBackend, OpenAIBackend, endpoint_of
from hopscore.engine.batch import BatchOutcome, RowResult, run_batch
from hopscore.engine.cache import ResponseCache, cache_for, default_cache_dir, warn_printer
from hopscore.engine.classify import error_message, error_reply, parse_body, status_error
from hopscore.engine.core import ChatEngine, EngineStats, batch_workers
from hopscore.engine.limit import ConcurrencyLimit
from hopscore.engine.resume import ResultLog, note_resume, run_key_of
from hopscore.engine.retry import RetryPolicy, parse_retry_after
from hopscore.engine.sync import run_sync
from hopscore.engine.types import (
    RETRYABLE_KINDS,
    AttemptRecord,
    CallError,
    CallFailure,
    CallResult,
    ChatRequest,
    ChatResponse,
    Usage,
    canonical_json,
    sha256_text,
)

__all__ = [
    "RETRYABLE_KINDS",
    "AttemptRecord",
    "BatchOutcome",
    "CallError",
    "CallFailure",
    "CallResult",
    "ChatBackend",
    "ChatEngine",
    "ChatRequest",
    "ChatResponse",
    "ConcurrencyLimit",
    "EngineStats",
    "OpenAIBackend",
    "ResponseCache",
    "ResultLog",
    "RetryPolicy",
    "RowResult",
    "Usage",
    "batch_workers",
    "cache_for",
    "canonical_json",
    "default_cache_dir",
    "endpoint_of",
    "error_message",
    "error_reply",
    "note_resume",
    "parse_body",
    "parse_retry_after",
    "run_batch",
    "run_key_of",
    "run_sync",
    "sha256_text",
    "status_error",
    "warn_printer",
]
