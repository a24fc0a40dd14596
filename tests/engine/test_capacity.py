"""What a server says about how many requests it works on at once (engine/capacity.py): read
from llama.cpp's /props over HTTP from the loopback stand-in, and from the Prometheus text
SGLang and vLLM serve at /metrics."""

from __future__ import annotations

from hopscore.engine.capacity import Capacity, ask, from_metrics, from_props, from_slots, gauges
from tests.openai_server import FakeOpenAI, Reply


def test_props_total_slots_is_asked_at_the_server_root() -> None:
    with FakeOpenAI(lambda p, a: Reply("ok"), slots=4, props={"total_slots": 4}) as server:
        root = server.base_url[: -len("/v1")]
        assert ask(server.base_url) == Capacity(4, f"{root}/props")
    with FakeOpenAI(lambda p, a: Reply("ok")) as server:  # says nothing: 404 everywhere
        assert ask(server.base_url) is None


def test_the_fields_that_say_nothing() -> None:
    assert from_props('{"total_slots": 0}') is None
    assert from_props('{"total_slots": true}') is None
    assert from_props("[]") is None and from_props(None) is None and from_props("<html>") is None
    assert from_slots('[{"id": 0}, {"id": 1}]') == 2 and from_slots("[]") is None


SGLANG = """\
# HELP sglang:max_running_requests Maximum running requests
# TYPE sglang:max_running_requests gauge
sglang:max_running_requests{name="google/gemma-2-9b-it"} 4096.0
sglang:num_running_reqs{name="google/gemma-2-9b-it"} 3.0
"""

VLLM = """\
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 256.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} %s
"""


def test_metrics() -> None:
    assert from_metrics(SGLANG) == 4096
    assert from_metrics(VLLM % "12.0") == 256  # requests wait: the running ones are the most
    assert from_metrics(VLLM % "0.0") is None  # none waits: the running ones say nothing
    assert gauges('a{x="1"} 2\na{x="2"} 3\nb NaN\n# c 1\n')["a"] == 5.0


def test_a_fixed_limit_takes_no_more_items_than_it_needs() -> None:
    """A Ray driver's share of a cluster-wide limit is fixed: its batch must not take the items
    that would fill a declared 256-slot server, or the workers get none (the Ray tests saw
    200 rows on the driver, 0 on 2 workers)."""
    from hopscore.engine import batch_workers

    assert batch_workers(4, declared=False) == 5
    assert batch_workers(64, declared=False) == 72
    assert batch_workers(4) > 256  # a server that declares its slots gets them filled
