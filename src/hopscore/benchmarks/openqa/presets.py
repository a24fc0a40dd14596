"""The suites of the open-QA papers, as ``hopscore suite preset NAME`` runs them.

* ``search-r1``: Search-R1's seven datasets (README "Datasets"; the split each is evaluated on:
  ``test``, else ``dev``), laid out as FlashRAG's ``RUC-NLPIR/FlashRAG_datasets`` repository
  (``<name>/<split>.jsonl``); reported in EM, the paper's metric;
* ``r1-searcher``: R1-Searcher's four evaluation sets (``data/eval_set``: 500 dev questions of
  HotpotQA, 2Wiki and MuSiQue, Bamboogle's 125), reported in its ACC_R (cover-EM), EM and F1.
"""

from __future__ import annotations

from hopscore.benchmarks.base import SuiteDataset, SuitePreset


def _flashrag(name: str, split: str) -> SuiteDataset:
    return SuiteDataset(name, (name,), (f"{split}.jsonl",))


SEARCH_R1 = SuitePreset(
    "search-r1", "Search-R1's seven datasets, FlashRAG layout",
    (_flashrag("nq", "test"), _flashrag("triviaqa", "test"), _flashrag("popqa", "test"),
     _flashrag("hotpotqa", "dev"), _flashrag("2wikimultihopqa", "dev"),
     _flashrag("musique", "dev"), _flashrag("bamboogle", "test")),
    ("em", "sub_em", "f1", "cover_em"))

R1_SEARCHER = SuitePreset(
    "r1-searcher", "R1-Searcher's four eval sets",
    (SuiteDataset("hotpotqa", ("", "eval_set"), ("hotpotqa_500.jsonl",)),
     SuiteDataset("2wikimultihopqa", ("", "eval_set"), ("2wiki_500.jsonl",)),
     SuiteDataset("bamboogle", ("", "eval_set"), ("bamboogle.jsonl", "bamboogle_500.jsonl")),
     SuiteDataset("musique", ("", "eval_set"), ("musique_500.jsonl",))),
    ("cover_em", "r1_em", "r1_f1", "em"))

PRESETS = (SEARCH_R1, R1_SEARCHER)
