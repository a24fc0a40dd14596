"""``hopscore run --dry-run``: the tokens and cost of a run, estimated before anything is sent.

The prompts are rendered exactly as the run would send them (template, exemplars, context,
retrieval). Prompt tokens are counted with tiktoken's encoding of the model when tiktoken is
installed and knows the model, else estimated as a quarter of the characters of the messages'
text (about right for English with OpenAI's and Llama's tokenizers; the method is reported).
Completion tokens are ``--max-tokens`` per request (an upper bound: a reply may stop sooner;
reasoning tokens count here too), or, with ``--max-tokens 0``, :data:`NO_LIMIT_GUESS` per
request, said so. A chain strategy (``--strategy self-ask``, ``sc``, ``mcr``) sends several
requests per question whose later prompts grow: the estimate counts its first request per
chain only and says so. The cost is the estimate at the dated list prices
(:mod:`hopscore.engine.prices`): ``"unknown"`` for a model the table does not name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hopscore.engine.ledger import Tally
from hopscore.engine.prices import UNKNOWN, Price, model_name
from hopscore.run.tasks import PreparedRun

#: completion tokens assumed per request when no --max-tokens is sent
NO_LIMIT_GUESS = 1024
CHARS_PER_TOKEN = 4


def _counter(model: str) -> tuple[Callable[[str], int], str]:
    """A token counter for ``model`` and its name: tiktoken's when installed, else chars/4."""
    try:
        import tiktoken  # type: ignore[import-not-found,unused-ignore]

        encoding = tiktoken.encoding_for_model(model_name(model))
    except Exception:  # not installed, or a model tiktoken does not know
        return (lambda text: -(-len(text) // CHARS_PER_TOKEN)), "characters / 4"
    return (lambda text: len(encoding.encode(text))), f"tiktoken {encoding.name}"


def _text(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts
            parts.extend(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


def estimate(prepared: PreparedRun, max_tokens: int | None, prices: dict[str, Price]
             ) -> dict[str, Any]:
    """The dry run's estimate: requests, prompt and completion tokens, their cost."""
    model = str(prepared.spec)
    count, method = _counter(model)
    plan = prepared.plan
    chains = 1 if plan is None else max(1, plan.chains)
    prompt = sum(count(_text(task.request.messages)) for task in prepared.tasks) * chains
    requests = len(prepared.tasks) * chains
    per_reply = max_tokens if max_tokens else NO_LIMIT_GUESS
    tally = Tally(prompt_tokens=prompt, completion_tokens=per_reply * requests,
                  requests=requests)
    price = prices.get(model_name(model))
    cost: float | str = UNKNOWN if price is None else round(price.cost(tally), 6)
    notes = [f"prompt tokens counted by {method}",
             f"completion tokens: {per_reply} per request "
             + ("(--max-tokens: an upper bound)" if max_tokens else
                "(a guess: no --max-tokens is sent)")]
    if plan is not None:
        notes.append(f"--strategy {plan.strategy}: the first request of each chain only "
                     "(later steps send more)")
    return {"model": model, "requests": requests, "prompt_tokens": prompt,
            "completion_tokens": tally.completion_tokens, "cost_usd": cost,
            "price": None if price is None else price.to_json(), "notes": notes}
