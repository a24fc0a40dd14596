"""Official benchmark records -> the Hugging Face layouts of their Hub copies, written by the
real ``datasets`` library (parquet, JSON Lines, save_to_disk, a local Hub-style repository
folder, and the offline cache that ``load_dataset(NAME)`` reads with HF_DATASETS_OFFLINE=1).

The features follow the dataset cards of the copies named in each function (see
docs/getting-the-data.md); this mapping is written independently of the benchmarks' layouts, in
the Hub's direction, so the tests check one against the other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

datasets = pytest.importorskip("datasets")
Features, Value, Sequence, ClassLabel = (
    datasets.Features, datasets.Value, datasets.Sequence, datasets.ClassLabel
)


def _columns(pairs: list[list[Any]], first: str, second: str) -> dict[str, list[Any]]:
    return {first: [p[0] for p in pairs], second: [p[1] for p in pairs]}


def hotpotqa(gold: list[dict[str, Any]]) -> Any:
    """hotpotqa/hotpot_qa (config distractor): id, question, answer, type, level,
    supporting_facts {title, sent_id}, context {title, sentences}."""
    features = Features({
        "id": Value("string"), "question": Value("string"), "answer": Value("string"),
        "type": Value("string"), "level": Value("string"),
        "supporting_facts": Sequence({"title": Value("string"), "sent_id": Value("int32")}),
        "context": Sequence({"title": Value("string"), "sentences": Sequence(Value("string"))}),
    })  # fmt: skip
    rows = [
        {
            "id": r["_id"], "question": r["question"], "answer": r["answer"],
            "type": r.get("type"), "level": r.get("level"),
            "supporting_facts": _columns(r["supporting_facts"], "title", "sent_id"),
            "context": _columns(r["context"], "title", "sentences"),
        }
        for r in gold
    ]  # fmt: skip
    return datasets.Dataset.from_list(rows, features=features)


def twowiki(gold: list[dict[str, Any]], *, with_ids: bool) -> Any:
    """ohjoonhee/2WikiMultihopQA: _id, type, question, context {title, content},
    supporting_facts {title, sent_id}, evidences {fact, relation, entity}, answer. With
    ``with_ids`` the data_ids fields (answer_id, entity_ids, evidences_id) are kept too."""
    triple = {"fact": Sequence(Value("string")), "relation": Sequence(Value("string")),
              "entity": Sequence(Value("string"))}
    spec: dict[str, Any] = {
        "_id": Value("string"), "type": Value("string"), "question": Value("string"),
        "context": {"title": Sequence(Value("string")),
                    "content": Sequence(Sequence(Value("string")))},
        "supporting_facts": {"title": Sequence(Value("string")),
                             "sent_id": Sequence(Value("int32"))},
        "evidences": triple, "answer": Value("string"),
    }  # fmt: skip
    if with_ids:
        spec.update(answer_id=Value("string"), entity_ids=Value("string"), evidences_id=triple)

    def columns(triples: list[list[str]]) -> dict[str, list[str]]:
        return {"fact": [t[0] for t in triples], "relation": [t[1] for t in triples],
                "entity": [t[2] for t in triples]}

    rows = []
    for r in gold:
        row = {
            "_id": r["_id"], "type": r["type"], "question": r["question"],
            "context": _columns(r["context"], "title", "content"),
            "supporting_facts": _columns(r["supporting_facts"], "title", "sent_id"),
            "evidences": columns(r["evidences"]), "answer": r["answer"],
        }  # fmt: skip
        if with_ids:
            row.update(answer_id=r["answer_id"], entity_ids=r["entity_ids"],
                       evidences_id=columns(r["evidences_id"]))
        rows.append(row)
    return datasets.Dataset.from_list(rows, features=Features(spec))


def hybridqa(gold: list[dict[str, Any]]) -> Any:
    """wenhu/hybrid_qa: question_id, question, table_id, answer_text, question_postag (its
    ``table`` struct is left out: the scorer never reads it)."""
    features = Features({name: Value("string") for name in
                         ("question_id", "question", "table_id", "answer_text", "question_postag")})
    rows = [{"question_id": r["question_id"], "question": r["question"], "table_id": r["table_id"],
             "answer_text": r["answer-text"], "question_postag": r.get("question_postag", "")}
            for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


def strategyqa(gold: list[dict[str, Any]]) -> Any:
    """havens2/strategyQA_train: qid, term, description, question, answer (bool), facts,
    decomposition (no evidence: its mixed lists have no Arrow type)."""
    features = Features({
        "qid": Value("string"), "term": Value("string"), "description": Value("string"),
        "question": Value("string"), "answer": Value("bool"),
        "facts": Sequence(Value("string")), "decomposition": Sequence(Value("string")),
    })  # fmt: skip
    rows = [{"qid": r["qid"], "term": r.get("term", ""), "description": r.get("description", ""),
             "question": r["question"], "answer": r["answer"], "facts": r.get("facts", []),
             "decomposition": r["decomposition"]} for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


def fermi(gold: list[dict[str, Any]]) -> Any:
    """The realFP records as rows (no Hub copy is known; this is what ``Dataset.from_list`` of
    the official file gives)."""
    features = Features({name: Value("string") for name in ("question", "program", "answer",
                                                            "context")})
    rows = [{name: str(r.get(name, "")) for name in features} for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


def bamboogle(gold: list[dict[str, Any]]) -> Any:
    """chiayewken/bamboogle (split test): Question, Answer."""
    features = Features({"Question": Value("string"), "Answer": Value("string")})
    rows = [{"Question": r["question"], "Answer": r["answer"]} for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


def quartz(gold: list[dict[str, Any]]) -> Any:
    """allenai/quartz: id, question (the stem), choices {text, label}, answerKey, para,
    para_id."""
    features = Features({
        "id": Value("string"), "question": Value("string"),
        "choices": Sequence({"text": Value("string"), "label": Value("string")}),
        "answerKey": Value("string"), "para": Value("string"), "para_id": Value("string"),
    })  # fmt: skip
    rows = [{"id": r["id"], "question": r["question"]["stem"],
             "choices": {"text": [c["text"] for c in r["question"]["choices"]],
                         "label": [c["label"] for c in r["question"]["choices"]]},
             "answerKey": r["answerKey"], "para": r["para"], "para_id": r.get("para_id", "")}
            for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


FEVEROUS_LABELS = ["NOT ENOUGH INFO", "SUPPORTS", "REFUTES"]


def feverous(gold: list[dict[str, Any]]) -> Any:
    """fever/feverous: id, label (a class label), claim, evidence {content}, challenge."""
    features = Features({
        "id": Value("int32"), "label": ClassLabel(names=FEVEROUS_LABELS), "claim": Value("string"),
        "evidence": {"content": Sequence(Sequence(Value("string")))},
        "challenge": Value("string"),
    })  # fmt: skip
    rows = [{"id": r["id"], "label": FEVEROUS_LABELS.index(r["label"]), "claim": r["claim"],
             "evidence": {"content": [e["content"] for e in r["evidence"]]},
             "challenge": r.get("challenge", "")} for r in gold if r.get("id") != ""]
    return datasets.Dataset.from_list(rows, features=features)


def musique(gold: list[dict[str, Any]]) -> Any:
    """bdsaglam/musique and the other copies of the official files: the official records,
    with ``paragraphs`` and ``question_decomposition`` as ``datasets`` Sequences of structs
    (stored as a struct of lists)."""
    features = Features({
        "id": Value("string"),
        "paragraphs": Sequence({"idx": Value("int64"), "title": Value("string"),
                                "paragraph_text": Value("string"),
                                "is_supporting": Value("bool")}),
        "question": Value("string"),
        "question_decomposition": Sequence({"id": Value("int64"), "question": Value("string"),
                                            "answer": Value("string"),
                                            "paragraph_support_idx": Value("int64")}),
        "answer": Value("string"), "answer_aliases": Sequence(Value("string")),
        "answerable": Value("bool"),
    })
    def struct(items: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, list[Any]]:
        return {name: [item[name] for item in items] for name in names}

    rows = [{**{name: r[name] for name in features},
             "paragraphs": struct(r["paragraphs"],
                                  ("idx", "title", "paragraph_text", "is_supporting")),
             "question_decomposition": struct(r["question_decomposition"], (
                 "id", "question", "answer", "paragraph_support_idx"))}
            for r in gold]
    return datasets.Dataset.from_list(rows, features=features)


def musique_flashrag(gold: list[dict[str, Any]]) -> Any:
    """RUC-NLPIR/FlashRAG_datasets (config musique, split dev): id, question, golden_answers
    (the answer and its aliases), metadata {answerable, question_decomposition: [{...,
    support_paragraph}]}; only the supporting paragraphs are kept."""
    rows = []
    for r in gold:
        hops = [{**hop, "support_paragraph": r["paragraphs"][hop["paragraph_support_idx"]]}
                for hop in r["question_decomposition"]]
        rows.append({"id": r["id"], "question": r["question"],
                     "golden_answers": [r["answer"], *r["answer_aliases"]],
                     "metadata": {"answerable": r["answerable"],
                                  "question_decomposition": hops}})
    return datasets.Dataset.from_list(rows)


def openqa(gold: list[dict[str, Any]]) -> Any:
    """RUC-NLPIR/FlashRAG_datasets (one config per dataset): id, question, golden_answers."""
    features = Features({"id": Value("string"), "question": Value("string"),
                         "golden_answers": Sequence(Value("string"))})
    return datasets.Dataset.from_list([{name: r[name] for name in features} for r in gold],
                                      features=features)


def frames(tsv: Path) -> Any:
    """google/frames-benchmark (split test): the TSV's columns as pandas reads them (the index
    column as ``Unnamed: 0``, empty links as nulls)."""
    import pandas as pd

    return datasets.Dataset.from_pandas(pd.read_csv(tsv, sep="\t"))


# --- writing the exports ---------------------------------------------------------------------


def quiet() -> None:
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()


def write_all(dataset: Any, folder: Path, config: str, split: str) -> dict[str, str]:
    """Every local form ``datasets`` exports, keyed by kind; values are ``--gold`` arguments."""
    quiet()
    folder.mkdir(parents=True, exist_ok=True)
    dataset.to_parquet(str(folder / f"{split}.parquet"))
    dataset.to_json(str(folder / f"{split}.jsonl"))
    dataset.save_to_disk(str(folder / "disk"))
    datasets.DatasetDict({split: dataset}).save_to_disk(str(folder / "disk_dict"))
    repo = folder / "repo"
    (repo / config).mkdir(parents=True)
    dataset.to_parquet(str(repo / config / f"{split}-00000-of-00001.parquet"))
    (repo / "README.md").write_text(textwrap.dedent(f"""\
        ---
        configs:
        - config_name: {config}
          data_files:
          - split: {split}
            path: {config}/{split}-*
        ---
        A Hub-style repository folder written by the hopscore tests.
        """), encoding="utf-8")
    return {
        "parquet": str(folder / f"{split}.parquet"),
        "jsonl": str(folder / f"{split}.jsonl"),
        "save_to_disk": str(folder / "disk"),
        "save_to_disk_dict": f"{folder / 'disk_dict'}@{split}",
        "hf_repo_folder": f"hf:{repo}:{config}@{split}",
    }


_FILL_CACHE = """
import os, shutil, sys
import datasets
from datasets.packaged_modules.parquet.parquet import Parquet
datasets.disable_progress_bars()
name, config, split, parquet = sys.argv[1:5]
builder = Parquet(dataset_name=name.split("/")[-1], config_name=config,
                  data_files={split: parquet}, hash="0000hopscoretests")
builder.download_and_prepare()
root = datasets.config.HF_DATASETS_CACHE
target = os.path.join(root, "___".join(name.split("/")), config, "0.0.0")
os.makedirs(target, exist_ok=True)
shutil.move(builder.cache_dir, os.path.join(target, "0000hopscoretests"))
"""


def fill_offline_cache(hf_home: Path, name: str, config: str, split: str, parquet: str) -> None:
    """Put a prepared dataset in ``hf_home``'s datasets cache under the Hub ``name``, where
    ``load_dataset(name, config)`` finds it in offline mode, as if it had been downloaded."""
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1"}
    subprocess.run([sys.executable, "-c", _FILL_CACHE, name, config, split, parquet],
                   check=True, env=env, capture_output=True, timeout=120)


def official_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def official_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def clean(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
