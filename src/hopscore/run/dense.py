"""Dense retrieval for the search agent (``--retriever dense``): exact inner-product search
(FAISS's ``Flat``) over embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

Any server that embeds through the OpenAI API serves it (vLLM, text-embeddings-inference, Ollama,
llama.cpp's server, OpenAI itself): ``POST {base_url}/embeddings`` with ``{"model", "input":
[texts]}``, answered by ``{"data": [{"index", "embedding"}]}``. A document is embedded as
``passage_prefix + title + "\\n" + text`` and a query as ``query_prefix + query`` (e5 models
want ``"passage: "`` and ``"query: "``); every vector is L2-normalised, so the score is the
cosine. The corpus is embedded once, in batches, before the first question, and kept under the
cache directory by the corpus's sha256, the model, the endpoint and the prefix, so a rerun
embeds nothing again. No extra package is needed (numpy and the standard library).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from hopscore.engine import canonical_json, sha256_text
from hopscore.errors import HopscoreError
from hopscore.run.retrieval import Corpus, Document

BATCH = 64


class EmbeddingClient:
    """``embed(texts)``: one L2-normalised row per text, from the endpoint's ``/embeddings``."""

    def __init__(self, model: str, base_url: str, api_key: str | None,
                 timeout: float = 120.0) -> None:
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        self.api_key = api_key
        self.timeout = timeout

    def embed(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise HopscoreError(f"embeddings endpoint {self.url} answered HTTP {exc.code}: "
                                f"{exc.read()[:300].decode('utf-8', 'replace')}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise HopscoreError(f"embeddings endpoint {self.url}: {exc}") from None
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise HopscoreError(f"embeddings endpoint {self.url}: expected {len(texts)} "
                                "embeddings under data")
        rows = sorted(data, key=lambda item: int(item.get("index", 0)))
        matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)


class DenseIndex:
    """The corpus's documents with their embeddings; :meth:`search` returns the best ``k``."""

    #: a search is an HTTP call: the agent runs it in a worker thread
    blocking = True

    def __init__(self, corpus: Corpus, client: EmbeddingClient, *, query_prefix: str = "",
                 passage_prefix: str = "", cache_dir: Path | None = None) -> None:
        self.path = corpus.path
        self.documents = corpus.documents
        self.sha256 = corpus.sha256
        self.client = client
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        key = sha256_text(canonical_json({"corpus": corpus.sha256, "model": client.model,
                                          "url": client.url, "prefix": passage_prefix}))
        cached = None if cache_dir is None else cache_dir / "dense" / f"{key[:32]}.npy"
        if cached is not None and cached.is_file():
            self.matrix = np.load(cached)
        else:
            texts = [f"{passage_prefix}{d.title}\n{d.text}" if d.title else
                     f"{passage_prefix}{d.text}" for d in self.documents]
            self.matrix = np.concatenate([client.embed(texts[i:i + BATCH])
                                          for i in range(0, len(texts), BATCH)])
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                np.save(cached, self.matrix)
        if self.matrix.shape[0] != len(self.documents):
            raise HopscoreError(f"{cached}: {self.matrix.shape[0]} embeddings for "
                                f"{len(self.documents)} documents (delete it to re-embed)")

    def search(self, query: str, k: int) -> list[Document]:
        if not query.strip():
            return []
        vector = self.client.embed([self.query_prefix + query])[0]
        scores = self.matrix @ vector
        k = min(k, len(self.documents))
        best = np.argsort(-scores, kind="stable")[:k]
        return [self.documents[int(i)] for i in best]

    def describe(self) -> dict[str, Any]:
        return {"retriever": "dense", "model": self.client.model, "url": self.client.url,
                "query_prefix": self.query_prefix, "passage_prefix": self.passage_prefix,
                "dimensions": int(self.matrix.shape[1])}
