"""Where a Ray run's workers may go: not on the CPUs the driver's own work already uses.

Under the overlap (:mod:`hopscore.distributed.ray_pool`) the driver works on rows itself, and
for ``sql-match`` that work is CPU-bound: its sandbox keeps ``--workers`` processes busy on the
driver's machine. When that machine is also a Ray node (an embedded local Ray always; a cluster
whose head or a node runs the driver), a worker actor placed there would only share those CPUs
with the driver's sandbox, adding Ray's own cost per row and taking nothing off the driver. So
the driver holds its CPUs on its node in Ray's own accounting (a placement group of one bundle
pinned to that node), and the workers are as many as the cluster's CPUs left: Ray places them
on the other nodes. A cluster with no CPU left (one machine) gets no worker: the driver does
every row, as a local run does, and the run says why.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

#: seconds to wait for the driver's CPUs to be granted on its node (they may be taken by
#: another job): then nothing is held and the workers are placed as Ray likes
_RESERVE_S = 10.0


@dataclass(slots=True)
class Reservation:
    """The CPUs held for the driver on its node (0: none) and the placement group holding them."""

    cpus: int = 0
    group: Any = None

    def release(self, ray: Any) -> None:
        if self.group is not None:
            with contextlib.suppress(Exception):  # the cluster may be gone already
                ray.util.remove_placement_group(self.group)
            self.group = None


def driver_node(ray: Any) -> dict[str, Any] | None:
    """The live Ray node this driver runs on (None: a Ray Client driver, on no node)."""
    try:
        node_id = ray.get_runtime_context().get_node_id()
    except Exception:  # a Ray Client session has no node of its own
        return None
    return next((node for node in ray.nodes()
                 if node.get("NodeID") == node_id and node.get("Alive")), None)


async def reserve(ray: Any, cpus: int) -> Reservation:
    """Hold ``cpus`` CPUs (at most its node's) for the driver on the driver's node."""
    if cpus <= 0:
        return Reservation()
    node = await asyncio.to_thread(driver_node, ray)
    if node is None:
        return Reservation()
    take = min(cpus, int(node.get("Resources", {}).get("CPU", 0)))
    if take <= 0:
        return Reservation()
    from ray.util.placement_group import placement_group

    # every node has a resource named after its address: a bundle asking for a sliver of it
    # is placed on that node only
    pinned = {"CPU": take, f"node:{node['NodeManagerAddress']}": 0.001}
    group = placement_group([pinned], strategy="STRICT_PACK")
    held = Reservation(take, group)
    try:
        await asyncio.wait_for(_ready(group), _RESERVE_S)
    except TimeoutError:
        held.release(ray)
        return Reservation()
    return held


async def _ready(group: Any) -> None:
    await group.ready()


def workers_for(cluster_cpus: int, reserved: int, requested: int | None) -> int:
    """The worker actors (one CPU each) to make: the cluster's CPUs not held for the driver,
    at most ``requested``."""
    free = max(0, cluster_cpus - reserved)
    return min(requested, free) if requested else free


def no_room(cluster_cpus: int, reserved: int, local: bool) -> str:
    """Why no worker is made (the run's ``skipped``)."""
    where = "this machine's" if local else "the cluster's"
    return (f"{where} {cluster_cpus} Ray CPUs are all on the driver's machine, and the driver's "
            f"own work already keeps {reserved} of them busy: a worker there would only share "
            "them")
