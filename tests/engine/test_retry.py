"""Back-off delays and Retry-After parsing."""

from __future__ import annotations

import email.utils
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.engine import RetryPolicy, parse_retry_after


def test_retry_after_seconds_ms_and_dates() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": " 1.5 "}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(7.0)
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0
    for bad in ("soon", "", "-3", "nan", "inf"):
        assert parse_retry_after({"Retry-After": bad}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    rng = random.Random(0)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 8.0), (50, 8.0)]:
        for _ in range(20):
            assert ceiling / 2 <= policy.delay(retry, rng=rng) <= ceiling


def test_retry_after_sets_a_floor_capped_by_max_retry_wait() -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0, max_retry_wait=30.0)
    assert policy.delay(1, retry_after=5.0) == 5.0
    assert policy.delay(1, retry_after=100000.0) == 30.0
    assert policy.delay(1, retry_after=0.0) <= 0.1
    # the cap bounds back-off too, and the default cap is 60 s
    assert RetryPolicy(base_delay=100.0, max_delay=100.0, max_retry_wait=2.0).delay(3) == 2.0
    assert RetryPolicy().delay(1, retry_after=100000.0) == 60.0


def test_deadline_defaults_to_every_attempt_running_to_its_timeout() -> None:
    assert RetryPolicy(max_retries=5).deadline_for(5.0) == 30.0
    assert RetryPolicy(deadline=7.0).deadline_for(5.0) == 7.0
    with pytest.raises(ValueError):
        RetryPolicy(deadline=0)


@given(
    st.integers(1, 100), st.floats(0, 10), st.floats(0, 100),
    st.one_of(st.none(), st.floats(0, 1e6)),
)
def test_delay_is_always_within_bounds(
    retry: int, base: float, cap: float, after: float | None
) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap, max_retry_wait=60.0)
    wait = policy.delay(retry, after)
    assert 0.0 <= wait <= 60.0


def test_invalid_policy() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
