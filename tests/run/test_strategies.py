"""``hopscore run --strategy self-ask|sc|mcr`` end to end on the built-in samples, against a
loopback server scripted per prompt; SC's majority and MCR's abstention handling checked
against hand-computed cases."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks import sample_files
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.chain_script import Plan, parse_call, scripted_chains
from tests.run.helpers import MODEL, load, rows

SEED = 100
STEPS = [("What is asked first?", "the first fact"), ("What follows?", "the second fact")]


def sample_gold(name: str) -> Path:
    sample = sample_files.require(name)
    return Path(str(sample.folder / sample.gold))


QUESTIONS = [
    "Could a hot-air balloon fly over Mount Everest?",  # gold True
    "Can a goldfish live in sea water?",  # False
    "Would a library card let you borrow a book from a bakery?",  # False
    "Would a snowman last through a summer afternoon in Madrid?",  # False
    "Can a bicycle be ridden on a frozen lake?",  # True
]
#: question -> final answer of chain 0, 1, 2 in round 0 (None: the chain never finishes)
ROUND0: dict[str, list[str | None]] = {
    QUESTIONS[0]: ["Yes", "No", "No"],  # SA right, SC wrong, oracle right
    QUESTIONS[1]: ["Yes", "no", "No"],  # SA wrong, SC right (lower-cased votes)
    QUESTIONS[2]: ["No", "No", "No"],
    QUESTIONS[3]: [None, "No", "Yes"],  # SA is chain 1; SC: a tie goes to the first seen
    QUESTIONS[4]: ["Yes", "Yes", "Yes"],
}
#: the meta-reasoner's answer per question, unless the facts conflict (then "Unknown")
META = {QUESTIONS[0]: "Yes", QUESTIONS[1]: "No", QUESTIONS[2]: "No",
        QUESTIONS[3]: "Yes", QUESTIONS[4]: "Yes"}


def plans(question: str, seed: int | None) -> Plan | str:
    assert seed is not None, "the tests pass --seed so chains are told apart by their seed"
    index, round_ = (seed - SEED) % 1000, (seed - SEED) // 1000
    if question not in ROUND0:  # the Bamboogle sample: chains 0 and 2 answer the first gold
        return STEPS, "Jonas Arden" if index != 1 else "Anna Arden"
    final = ROUND0[question][index]
    if round_ > 0 and question == QUESTIONS[1]:
        final = "No"  # resampled chains agree in the retry round
    if final is None:  # keeps asking: never reaches a final answer within 5 calls
        return "Intermediate answer: still unsure\nFollow up: And then?"
    steps = STEPS if final != "no" else STEPS[:1]
    if question == QUESTIONS[1] and index == 1 and round_ == 0:
        steps = [("Is there a CONFLICT?", "CONFLICT")]
    return steps, final


def meta(question: str, facts: list[str]) -> str:
    if any("CONFLICT" in fact for fact in facts):
        return "The chains contradict each other. So the answer is: Unknown."
    return f"The facts support it. So the answer is: {META.get(question, 'Jonas Arden')}."


def cot_reply(call: Any) -> str:
    return "Thinking.\nAnswer: yes"


def run_strategy(tmp_path: Path, strategy: str, *extra: str, protocol: str = "mcr",
                 log: list[Any] | None = None, out: Path | None = None) -> tuple[Any, Path]:
    responder = scripted_chains(plans, meta, cot_reply, log)
    out = out or tmp_path / strategy
    with FakeOpenAI(body_responder=responder) as server:
        result = run_cli("run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model",
                         MODEL, "--base-url", server.base_url, "-o", out, "--cache-dir",
                         tmp_path / "cache", "--no-progress", "--resamples", "50", "--seed",
                         str(SEED), "--strategy", strategy, "--protocol", protocol, *extra)
        sent = len(server.log)
    return result, out, sent  # type: ignore[return-value]


def methods_of(out: Path) -> dict[str, Any]:
    return load(out / "metrics.json")["methods"]["methods"]


def test_sc_and_mcr_match_the_hand_computed_scores(tmp_path: Path) -> None:
    log: list[Any] = []
    result, out, sent = run_strategy(tmp_path, "mcr", "--chains", "3", "--num-retries", "0",
                                     log=log)
    assert result.returncode == 0, result.stderr
    methods = methods_of(out)
    # SA [1,0,1,1,1]; SC [0,1,1,1,1]; oracle all right; MCR abstains on Q2, wrong on Q4
    assert methods["sa"]["score_all"] == pytest.approx(0.8)
    assert methods["sc"]["score_all"] == pytest.approx(0.8)
    assert methods["oracle"]["score_all"] == pytest.approx(1.0)
    assert methods["mcr"]["answered"] == 4
    assert methods["mcr"]["score_answered"] == pytest.approx(0.75)  # MCR's own number
    assert methods["mcr"]["score_all"] == pytest.approx(0.6)
    samples_rows = {row["question"]: row for row in rows(out / "samples.jsonl")}
    tie = samples_rows[QUESTIONS[3]]
    assert tie["methods"]["sa"]["chain"] == 1  # chain 0 never answered
    assert tie["methods"]["sc"]["votes"] == {"no": 1, "yes": 1}
    assert tie["methods"]["sc"]["answer"] == "no"  # the tie goes to the first answer seen
    q2 = samples_rows[QUESTIONS[1]]
    assert q2["methods"]["sc"]["answer"] == "no" and q2["methods"]["sc"]["score"] == 1.0
    assert q2["abstained"] and q2["methods"]["mcr"]["abstained"]
    # every chain, its evidence and the meta-reasoner's input and output are in the row
    first = samples_rows[QUESTIONS[0]]
    (round0,) = first["rounds"]
    assert [c["answer"] for c in round0["chains"]] == ["Yes", "No", "No"]
    assert [c["temperature"] for c in round0["chains"]] == [0.0, 0.7, 0.7]
    chain = round0["chains"][0]
    assert chain["text"].endswith("So the final answer is: Yes.")
    assert [s["question"] for s in chain["steps"]] == [q for q, _ in STEPS] + [None]
    assert "What is asked first? the first fact" in round0["meta"]["input"][-1]["content"]
    assert round0["meta"]["output"].endswith("So the answer is: Yes.")
    # a chain that never reaches a final answer stops after MCR's budget of 5 calls
    unfinished = tie["rounds"][0]["chains"][0]
    assert len(unfinished["calls"]) == 5 and not unfinished["finished"]
    assert [len(c["calls"]) for c in round0["chains"]] == [3, 3, 3]
    assert len([c for c in log if c.kind == "meta"]) == 5 and sent == len(log)
    metrics = load(out / "metrics.json")
    assert metrics["mcr"]["answered"] == 4 and metrics["mcr"]["abstained"] == 1
    assert metrics["metrics"]["mcr_answered"] == pytest.approx(0.75)
    # methods/<m>/ are score directories: hopscore compare reads them
    compared = run_cli("compare", out / "methods" / "sa", out / "methods" / "mcr",
                       "--resamples", "200")
    assert compared.returncode == 0, compared.stderr
    assert "mcr_all" in compared.stdout
    assert "MCR-SC" in result.stdout and "SA" in result.stdout


def test_num_retries_resamples_abstained_questions(tmp_path: Path) -> None:
    log: list[Any] = []
    result, out, _ = run_strategy(tmp_path, "mcr", "--chains", "3", log=log)  # default: 2
    assert result.returncode == 0, result.stderr
    q2 = next(r for r in rows(out / "samples.jsonl") if r["question"] == QUESTIONS[1])
    assert len(q2["rounds"]) == 2 and q2["rounds"][0]["abstained"]
    assert not q2["abstained"] and q2["answer"] == "No"
    # chain 0 is greedy again (the same request: from the cache); 1 and 2 are resampled
    again = q2["rounds"][1]["chains"]
    assert [c["seed"] for c in again] == [SEED, SEED + 1 + 1000, SEED + 2 + 1000]
    assert again[0]["calls"][0]["cached"] is True
    methods = methods_of(out)
    assert methods["mcr"]["answered"] == 5 and methods["mcr"]["score_all"] == pytest.approx(0.8)
    assert load(out / "metrics.json")["methods"]["retried"] == 1
    config = load(out / "config.json")
    assert config["strategy"]["num_retries"] == 2 and config["strategy"]["chains"] == 3


@pytest.mark.parametrize("strategy", ["cot", "self-ask", "sc"])
def test_every_strategy_runs_and_rows_show_their_chains(tmp_path: Path, strategy: str) -> None:
    extra = ["--chains", "3"] if strategy == "sc" else []
    result, out, _ = run_strategy(tmp_path, strategy, *extra, protocol="default")
    assert result.returncode == 0, result.stderr
    metrics = load(out / "metrics.json")
    table = rows(out / "samples.jsonl")
    assert len(table) == 5
    if strategy == "cot":
        assert "methods" not in metrics and "rounds" not in table[0]
        return
    assert all(len(r["rounds"][-1]["chains"]) == (3 if strategy == "sc" else 1) for r in table)
    methods = methods_of(out)
    if strategy == "self-ask":
        # one greedy chain: right on Q1, Q3, Q5; wrong on Q2; no answer on Q4
        assert list(methods) == ["sa"] and methods["sa"]["score_all"] == pytest.approx(0.6)
        assert methods["sa"]["answered"] == 4
        assert metrics["metrics"]["accuracy"] == pytest.approx(0.6)
    else:  # default protocol: votes over the mapped yes/no answers
        assert list(methods) == ["sa", "sc", "oracle"]
        assert methods["sc"]["score_all"] == pytest.approx(0.8)
        assert metrics["metrics"]["accuracy"] == pytest.approx(0.8)


def test_rerun_is_free_and_a_failed_question_is_retried(tmp_path: Path) -> None:
    out = tmp_path / "run"
    failing = {"on": True}
    base = scripted_chains(plans, meta)

    def flaky(body: dict[str, Any], attempt: int) -> Reply:
        call = parse_call(body)
        if failing["on"] and call.question == QUESTIONS[2] and call.kind == "chain":
            return Reply(status=500)
        return base(body, attempt)

    args = ["run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model", MODEL,
            "-o", out, "--cache-dir", tmp_path / "cache", "--no-progress", "--resamples", "0",
            "--seed", str(SEED), "--strategy", "sc", "--chains", "2", "--max-retries", "0"]
    with FakeOpenAI(body_responder=flaky) as server:
        first = run_cli(*args, "--base-url", server.base_url)
        assert first.returncode == 1, first.stderr
        failed = [r for r in rows(out / "samples.jsonl") if r["error"] is not None]
        assert [r["question"] for r in failed] == [QUESTIONS[2]]
        failing["on"] = False
        before = len(server.log)
        second = run_cli(*args, "--base-url", server.base_url)
        assert second.returncode == 0, second.stderr
        asked = {parse_call(e.body).question for e in server.log[before:]}
        assert asked == {QUESTIONS[2]}  # only the failed question is asked again
        before = len(server.log)
        third = run_cli(*args, "--base-url", server.base_url)
        assert third.returncode == 0 and len(server.log) == before  # nothing left to do
    assert re.search(r"samples this run / already done +│ +0 / 5 │", third.stdout)


def test_self_ask_retrieves_from_the_corpus_for_every_follow_up(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in [
        {"id": "d1", "title": "Hot-air balloon", "text": "Balloons have flown above 21,000 m."},
        {"id": "d2", "title": "First fact", "text": "The first fact is asked first."},
        {"id": "d3", "title": "Second fact", "text": "What follows is the second fact."},
    ]))
    log: list[Any] = []
    result, out, _ = run_strategy(tmp_path, "self-ask", "--corpus", str(corpus), log=log)
    assert result.returncode == 0, result.stderr
    row = next(r for r in rows(out / "samples.jsonl") if r["question"] == QUESTIONS[0])
    chain = row["rounds"][0]["chains"][0]
    assert [c["source"] for c in chain["contexts"]] == ["d1", "d2", "d3"]
    assert [s["evidence"]["source"] for s in chain["steps"][:2]] == ["d2", "d3"]
    assert row["retrieved"] == ["d1", "d2", "d3"]
    last = [c for c in log if c.kind == "chain" and c.question == QUESTIONS[0]][-1]
    assert last.block.startswith("Context1: Hot-air balloon: Balloons have flown")


def test_strategy_options_are_checked(tmp_path: Path) -> None:
    gold = sample_gold("strategyqa")
    for extra, message in [
        (["--strategy", "best"], "--strategy must be one of"),
        (["--strategy", "self-ask", "--chains", "3"], "use --strategy sc or mcr"),
        (["--chains", "3"], "--chains is for --strategy sc or mcr"),
        (["--strategy", "mcr", "--meta-facts", "evidence"], "needs retrieval"),
        (["--strategy", "sc", "--search-backend", "http"], "needs --search-url"),
    ]:
        result = run_cli("run", "strategyqa", "--gold", gold, "--model", MODEL, "--base-url",
                         "http://127.0.0.1:9/v1", "-o", tmp_path / "x", *extra)
        assert result.returncode == 2, (extra, result.stderr)
        assert message in " ".join(result.stderr.split()), (extra, result.stderr)


def test_suite_mcr_prints_sa_sc_and_mcr_side_by_side(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "strategyqa").mkdir(parents=True)
    (data / "strategyqa" / "dev.json").write_bytes(sample_gold("strategyqa").read_bytes())
    (data / "bamboogle").mkdir()
    (data / "bamboogle" / "bamboogle_prerelease_random.csv").write_bytes(
        sample_gold("bamboogle").read_bytes())
    responder = scripted_chains(plans, meta)
    with FakeOpenAI(body_responder=responder) as server:
        result = run_cli("suite", "mcr", "--data-dir", data, "--model", MODEL, "--base-url",
                         server.base_url, "-o", tmp_path / "suite", "--cache-dir",
                         tmp_path / "cache", "--no-progress", "--seed", str(SEED),
                         "--datasets", "strategyqa,bamboogle", "--strategy", "mcr",
                         "--chains", "3", "--num-retries", "0")
    assert result.returncode == 0, result.stderr
    table = " ".join(result.stdout.split())
    for needed in ("over answered", "over all", "SA", "SC", "oracle@k", "MCR-SC",
                   "p=", "strategyqa", "bamboogle", "EM", "F1"):
        assert needed in table, needed
    suite = load(tmp_path / "suite" / "suite.json")
    assert suite["strategy"] == "mcr"
    blocks = {d["benchmark"]: d["methods"] for d in suite["datasets"]}
    assert blocks["strategyqa"]["methods"]["mcr"]["score_answered"] == pytest.approx(0.75)
    assert blocks["strategyqa"]["methods"]["sc"]["score_all"] == pytest.approx(0.8)
    # MCR's evaluators: StrategyQA em, Bamboogle's set F1 (only the first question is right)
    assert blocks["bamboogle"]["metric"] == "F1"
    assert blocks["bamboogle"]["methods"]["sa"]["score_all"] == pytest.approx(1 / 5)
    pairs = {(p["a"], p["b"]): p for p in blocks["strategyqa"]["pairs"]}
    assert pairs[("sc", "mcr")]["test"]["name"] == "mcnemar-exact"  # em is 0/1
    assert pairs[("sc", "mcr")]["test"]["p_adjusted"] >= pairs[("sc", "mcr")]["test"]["p"]
    assert pairs[("sa", "sc")]["delta"] == pytest.approx(0.0)
