"""``hopscore suite mcr``: the data folder layout, the Fermi join, one MCR-style table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hopscore import benchmarks
from hopscore.benchmarks.base import PromptInputs
from hopscore.benchmarks.fermi.realfp import join_realfp
from hopscore.run.suite import locate
from tests.conftest import FIXTURES, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, asked, load


def data_dir(root: Path) -> Path:
    """The MCR layout from the test fixtures; FEVEROUS is left out on purpose."""
    files = {
        "strategyqa/dev.json": FIXTURES / "strategyqa" / "gold.json",
        "quartz/dev.jsonl": FIXTURES / "quartz" / "dev_small.jsonl",
        "hotpotqa/hotpot_dev_distractor_v1.json": FIXTURES / "hotpotqa" / "dev_small.json",
        "2wikihop/dev.json": FIXTURES / "2wikimultihopqa" / "dev_small.json",
        "bamboogle/bamboogle_prerelease_random.csv": FIXTURES / "bamboogle" / "gold_small.csv",
    }
    for target, source in files.items():
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / target)
    fermi = json.loads((FIXTURES / "fermi" / "gold.json").read_text())
    (root / "fermi").mkdir()
    (root / "fermi" / "train_realfp.json").write_text(json.dumps(fermi[:8]))
    (root / "fermi" / "val_realfp.json").write_text(json.dumps(fermi[6:]))  # 2 repeated
    return root


def mcr_answers(data: Path, work: Path) -> dict[str, str]:
    """MCR question -> "So the answer is: <gold>." for every dataset of the folder."""
    out = {}
    for name in ("strategyqa", "fermi", "quartz", "hotpotqa", "2wikimultihopqa", "bamboogle"):
        gold = locate(data, name, work).gold
        assert gold is not None
        bench = benchmarks.get(name)
        for example in bench.load_gold(gold):
            question = bench.prompt_variables(example, PromptInputs())["mcr_question"]
            out[question.strip()] = f"Thinking. So the answer is: {bench.mcr_gold(example)}."
    return out


def test_locate_and_join(tmp_path: Path) -> None:
    data = data_dir(tmp_path / "data")
    assert locate(data, "2wikimultihopqa", tmp_path).gold == data / "2wikihop" / "dev.json"
    missing = locate(data, "feverous", tmp_path)
    assert missing.gold is None and "feverous_dev_challenges.jsonl" in missing.looked_for
    joined = join_realfp(data / "fermi" / "train_realfp.json", data / "fermi" / "val_realfp.json",
                        tmp_path / "joined.json")
    assert len(json.loads(joined.read_text())) == 14  # 8 + 8 with 2 repeated questions


def test_suite_runs_every_dataset_and_prints_one_table(tmp_path: Path) -> None:
    data = data_dir(tmp_path / "data")
    answers = mcr_answers(data, tmp_path / "scratch")
    with FakeOpenAI(lambda p, a: Reply(answers[asked(p)])) as server:
        result = run_cli("suite", "mcr", "--data-dir", data, "--model", MODEL, "--base-url",
                         server.base_url, "-o", tmp_path / "suite", "--cache-dir",
                         tmp_path / "cache", "--no-progress", "--limit", "6",
                         env={"COLUMNS": "200"})
    assert result.returncode == 1, result.stderr  # FEVEROUS is missing
    assert result.stdout.count("MCR protocol") == 1
    assert "feverous" in result.stdout and "missing: looked for" in result.stdout
    suite = load(tmp_path / "suite" / "suite.json")
    rows = {row["benchmark"]: row for row in suite["datasets"]}
    assert list(rows) == ["strategyqa", "fermi", "quartz", "hotpotqa", "2wikimultihopqa",
                          "bamboogle", "feverous"]
    for name, row in rows.items():
        if name == "feverous":
            assert row["status"] == "missing"
            continue
        assert row["status"] == "ok", row
        assert row["mcr"]["n"] == 6 and row["mcr"]["answered"] + row["mcr"]["abstained"] == 6
        assert row["mcr"]["score_answered"] == 1.0, row
        metrics = load(tmp_path / "suite" / name / "metrics.json")
        assert metrics["mcr"] == row["mcr"]
    assert len(json.loads((tmp_path / "suite" / "fermi_realfp.json").read_text())) == 14


def test_suite_directory_one_writer_and_reruns_of_other_settings(tmp_path: Path) -> None:
    """A second process on the suite directory exits 2 at once; a rerun with one flag changed
    exits 2 naming it and changes nothing, unless --resume-any."""
    from tests.fsfaults import holding

    data = data_dir(tmp_path / "data")
    answers = mcr_answers(data, tmp_path / "scratch")
    out = tmp_path / "suite"
    with FakeOpenAI(lambda p, a: Reply(answers[asked(p)])) as server:
        args = ["suite", "mcr", "--data-dir", data, "--model", MODEL, "--base-url",
                server.base_url, "-o", out, "--cache-dir", tmp_path / "cache", "--no-progress",
                "--limit", "2", "--datasets", "strategyqa,bamboogle"]
        out.mkdir()
        with holding(out) as pid:
            busy = run_cli(*args)
        assert busy.returncode == 2 and f"pid {pid}" in busy.stderr, busy.stderr
        assert server.log == [] and sorted(p.name for p in out.iterdir()) == []
        assert run_cli(*args).returncode == 0
        sent = len(server.log)
        before = (out / "strategyqa" / "samples.jsonl").read_bytes()
        typo = run_cli(*args, "--max-tokens", "64")
        assert typo.returncode == 2, typo.stderr
        assert "max_tokens: 1024 -> 64" in typo.stderr and "--resume-any" in typo.stderr
        assert len(server.log) == sent
        assert (out / "strategyqa" / "samples.jsonl").read_bytes() == before
        other = run_cli(*args, "--max-tokens", "64", "--resume-any")
        assert other.returncode == 0, other.stderr
        assert (out / "strategyqa" / "samples.other-settings.jsonl").read_bytes() == before


def test_suite_takes_max_outage(tmp_path: Path) -> None:
    """--max-outage reaches the suite's runs: an endpoint gone for good pauses the requests for
    that long only (the next dataset's check then finds it gone: exit 2)."""
    from tests.engine.test_outage import restart_after

    data = data_dir(tmp_path / "data")
    answers = mcr_answers(data, tmp_path / "scratch")
    server = FakeOpenAI(lambda p, a: Reply(answers[asked(p)]), latency=0.1).start()
    restart_after(server, 5, None, [])  # gone for good during the first dataset
    result = run_cli("suite", "mcr", "--data-dir", data, "--model", MODEL, "--base-url",
                     server.base_url, "-o", tmp_path / "suite", "--no-cache", "--no-progress",
                     "--limit", "6", "--concurrency", "1", "--fixed-concurrency",
                     "--backoff", "0.01", "--max-outage", "1")
    assert result.returncode == 2, result.stderr
    assert f"{server.base_url} is not answering" in result.stderr
    assert "for at most 1 s (--max-outage)" in result.stderr
