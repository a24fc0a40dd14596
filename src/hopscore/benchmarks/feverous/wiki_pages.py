"""The FEVEROUS wiki as a model run reads it (``--wiki-db``): the elements an open-book prompt
shows, and a chain strategy's evidence for a follow-up question (:class:`Wiki`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore.benchmarks.feverous.wiki import FeverousWiki, rank_units, render


class WikiPages:
    """:class:`hopscore.benchmarks.base.Wiki` over a ``feverous_wikiv1.db``."""

    def __init__(self, path: Path, pages: int = 5) -> None:
        self.wiki = FeverousWiki(path)
        #: pages looked up per follow-up question and per claim, for chain evidence
        self.pages = pages

    def describe(self) -> dict[str, Any]:
        return self.wiki.describe()

    def shown(self, question: str, pages: int, elements: int) -> list[dict[str, Any]]:
        return render(self.wiki.retrieve(question, pages, elements), self.wiki)

    def evidence(self, query: str, question: str) -> tuple[str, str, str] | None:
        titles = self.wiki.find_pages(query, self.pages)
        titles += [t for t in self.wiki.find_pages(question, self.pages) if t not in titles]
        pool = [unit for title in titles for unit in self.wiki.units(title)]
        best = rank_units(pool, query, 1)
        if not best:
            return None
        return best[0].page, best[0].text, best[0].ids[0]
