"""Reusable request machinery for every command that calls a model (the judge, model runs).

* :class:`ChatEngine` sends :class:`ChatRequest`s through a :class:`ChatBackend` with bounded
  concurrency, a hard per-attempt timeout, retries with exponential back-off and jitter
  (Retry-After honoured) and a persistent :class:`ResponseCache`; it returns a
  :class:`CallResult` holding a :class:`ChatResponse` or a typed :class:`CallFailure`.
* :class:`ResultLog` and :func:`run_batch` make a long run resumable: rows are appended as they
  finish, a re-run skips finished keys, and the file ends in input order, one row per item.
"""

from hopscore.engine.backend import (
    ChatBackend,
    OpenAIBackend,
    endpoint_of,
    parse_body,
    status_error,
)
from hopscore.engine.batch import BatchOutcome, RowResult, run_batch
from hopscore.engine.cache import ResponseCache, default_cache_dir
from hopscore.engine.core import ChatEngine, EngineStats
from hopscore.engine.resume import ResultLog, note_resume, run_key_of
from hopscore.engine.retry import RetryPolicy, parse_retry_after
from hopscore.engine.types import (
    RETRYABLE_KINDS,
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
    "BatchOutcome",
    "CallError",
    "CallFailure",
    "CallResult",
    "ChatBackend",
    "ChatEngine",
    "ChatRequest",
    "ChatResponse",
    "EngineStats",
    "OpenAIBackend",
    "ResponseCache",
    "ResultLog",
    "RetryPolicy",
    "RowResult",
    "Usage",
    "canonical_json",
    "default_cache_dir",
    "endpoint_of",
    "note_resume",
    "parse_body",
    "parse_retry_after",
    "run_batch",
    "run_key_of",
    "sha256_text",
    "status_error",
]
