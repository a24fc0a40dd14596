"""Put on PYTHONPATH for ``inspect eval`` subprocesses in the tests: inspect_ai's mockllm counts
tokens with tiktoken's o200k_base vocabulary, which tiktoken downloads from the internet on
first use. Here a whitespace split stands in for it (token counts are not what is tested)."""

try:
    import tiktoken
except ImportError:  # pragma: no cover - inspect_ai not installed
    tiktoken = None

if tiktoken is not None:

    class _Words:
        def encode(self, text, **kwargs):  # type: ignore[no-untyped-def]
            return text.split()

    tiktoken.get_encoding = lambda name: _Words()
