"""What a user reads when a command goes wrong: "did you mean" for a misspelt benchmark, and
the top-level help's exit statuses as the commands use them."""

from __future__ import annotations

from tests.conftest import run_cli


def test_a_misspelt_benchmark_gets_did_you_mean(tmp_path) -> None:
    for typed, meant in (("hotpot", "hotpotqa"), ("bamboogl", "bamboogle"),
                         ("StrategyQ", "strategyqa"), ("2wiki", "2wikimultihopqa")):
        result = run_cli("score", typed, "-g", tmp_path / "g.json", "-p", tmp_path / "p.json")
        assert result.returncode == 2, result
        assert f"did you mean {meant!r}?" in result.stderr, result.stderr
    far = run_cli("score", "imagenet", "-g", tmp_path / "g.json", "-p", tmp_path / "p.json")
    assert far.returncode == 2 and "did you mean" not in far.stderr
    assert "choose one of: hotpotqa" in far.stderr


def test_the_help_lists_every_exit_status_a_command_uses() -> None:
    text = " ".join(run_cli("--help", env={"COLUMNS": "100"}).stdout.split())
    for said in ("0 on success", "1 when the command finished but its result is incomplete",
                 "requests failed", "2 on bad input", "3 on an internal error",
                 "130 when interrupted"):
        assert said in text, text


def test_swapped_files_and_a_csv_of_predictions_get_a_hint(tmp_path) -> None:
    import json

    from hopscore.benchmarks import sample_files

    found = {s.benchmark: s for s in sample_files.samples()}
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    with found["bamboogle"].paths() as (gold, predictions, _aliases):
        swapped = run_cli("score", "bamboogle", "-g", predictions, "-p", gold, env=env)
        rows = [json.loads(line) for line in predictions.read_text().splitlines()]
        csv = tmp_path / "pred.csv"
        csv.write_text("id,answer\n" + "".join(f"{r['id']},{r['answer']}\n" for r in rows))
        as_csv = run_cli("score", "bamboogle", "-g", gold, "-p", csv, env=env)
    assert swapped.returncode == 2, swapped
    assert "did you swap --gold and --predictions?" in swapped.stderr, swapped.stderr
    assert as_csv.returncode == 2 and "did you swap" not in as_csv.stderr
    assert "invalid JSON" in as_csv.stderr
    assert "(predictions for bamboogle: universal JSONL; JSON object {id: answer})" in " ".join(
        as_csv.stderr.split()), as_csv.stderr
