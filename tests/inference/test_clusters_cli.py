"""--cluster / --cluster-file through hopscore score, compare's inputs and located errors."""

from __future__ import annotations

import json

import pytest

from hopscore import benchmarks
from hopscore.analysis.scored import cluster_codes, load_scored
from hopscore.inference.clusters import ClusterSpec, read_cluster_file
from hopscore.scores.scoring import score_files
from tests.conftest import FIXTURES, run_cli

GOLD = FIXTURES / "hybridqa" / "dev_traced_small.json"
PREDICTIONS = FIXTURES / "hybridqa" / "predictions_targeted.json"


def test_score_clusters_by_a_gold_field_and_records_it(tmp_path):
    result = run_cli("score", "hybridqa", "-g", GOLD, "-p", PREDICTIONS, "-o", tmp_path,
                     "--cluster", "table_id")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["ci_settings"]["cluster"] == "table_id"
    em = metrics["ci"]["em"]
    assert em["cluster"] == "table_id" and em["clusters"] == 3 and em["method"] == "wilson"
    assert 3 <= em["effective_n"] <= 16
    rows = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [r["cluster"] for r in rows[:3]] == ["Invented_table_0", "Invented_table_1",
                                               "Invented_table_2"]
    assert "clustered by table_id (3 clusters)" in result.stdout.replace("\n", " ")
    # compare and report pick the recorded clusters up
    scored = load_scored(tmp_path)
    codes, name = cluster_codes(scored, None)
    assert name == "table_id" and len(set(codes)) == 3


def test_cluster_file_in_every_format(tmp_path):
    ids = [r["question_id"] for r in json.loads(GOLD.read_text())]
    mapping = {example_id: f"c{i % 4}" for i, example_id in enumerate(ids)}
    files = {
        "c.json": json.dumps(mapping),
        "c.jsonl": "\n".join(json.dumps({"id": k, "cluster": v}) for k, v in mapping.items()),
        "c.csv": "id,cluster\n" + "\n".join(f"{k},{v}" for k, v in mapping.items()),
    }
    results = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        assert read_cluster_file(tmp_path / name) == mapping
        report = score_files(benchmarks.get("hybridqa"), GOLD, PREDICTIONS, None,
                             clusters=ClusterSpec(file=tmp_path / name))
        results.append((report.ci["em"].low, report.ci["em"].high))
        assert report.ci["em"].details["clusters"] == 4
    assert results[0] == results[1] == results[2]


@pytest.mark.parametrize("content,message", [
    ('{"hy01": "a", "hy02": ["b"]}', "must be a string or an integer"),
    ('{"id": "hy01", "cluster": "a"}\n{"id": "hy01", "cluster": "b"}\n', "two clusters"),
    ('{"id": "hy01"}\n{"id": "hy02"}\n', "expected"),
])
def test_bad_cluster_files_are_located_errors(tmp_path, content, message):
    path = tmp_path / "clusters.json"
    path.write_text(content)
    result = run_cli("score", "hybridqa", "-g", GOLD, "-p", PREDICTIONS, "--cluster-file", path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and str(path) in result.stderr
    assert message in result.stderr


def test_a_field_no_example_has_is_an_error(tmp_path):
    reference = FIXTURES / "hybridqa" / "dev_reference_small.json"  # no table_id in this format
    result = run_cli("score", "hybridqa", "-g", reference, "-p", PREDICTIONS, "--cluster",
                     "table_id")
    assert result.returncode == 2
    assert "no example has a 'table_id' cluster" in result.stderr
    result = run_cli("score", "hybridqa", "-g", GOLD, "-p", PREDICTIONS, "--cluster", "x",
                     "--cluster-file", GOLD)
    assert result.returncode == 2 and "exclude each other" in result.stderr
