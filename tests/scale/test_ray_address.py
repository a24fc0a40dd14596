"""A RAY_ADDRESS that names nothing reachable is a clear error (exit 2) at once, also for a job
short enough that the driver alone would finish it before Ray is asked for; and how many
workers a cluster gets once the driver's own CPUs are held (no Ray needed for either)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from hopscore.distributed.placement import no_room, workers_for
from tests.conftest import run_cli
from tests.scale.test_merge_files import sql_rows
from tests.sql.dbs import build_shop


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_unreachable_ray_address_fails_a_short_job_at_once(tmp_path: Path,
                                                              address: str) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(3)))
    value = address.format(port=closed_port())
    result = run_cli("sql-match", "-i", source, "--db-root", root, "-o", tmp_path / "out.jsonl",
                     "--executor", "ray", env={"RAY_ADDRESS": value}, timeout=60)
    assert result.returncode == 2, result.stderr
    assert f"cannot reach RAY_ADDRESS={value}" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_ray_address_that_is_not_host_and_port_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in sql_rows(1)))
    result = run_cli("sql-match", "-i", source, "--db-root", root, "-o",
                     tmp_path / "out.jsonl", "--executor", "ray",
                     env={"RAY_ADDRESS": "headnode"}, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "RAY_ADDRESS=headnode is not host:port" in result.stderr


def test_workers_get_the_cpus_the_driver_does_not_hold() -> None:
    assert workers_for(2, 2, None) == 0  # one 2-CPU machine whose driver grades on both
    assert workers_for(18, 2, None) == 16  # the driver's node and a 16-CPU one
    assert workers_for(18, 2, 4) == 4  # --ray-workers caps them
    assert workers_for(3, 0, None) == 3  # a driver that holds no CPU (the judge)
    assert "2 Ray CPUs are all on the driver's machine" in no_room(2, 2, local=True)
