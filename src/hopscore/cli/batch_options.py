"""``--batch`` and ``--batch-poll``: the options of a command that can send through a
provider's batch API (:mod:`hopscore.engine.batch_mode`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from hopscore.engine.batch_mode import BatchMode

PANEL = "Batch API"


@dataclass(frozen=True)
class BatchOptions:
    """Send the requests as one batch job at the provider (about half the price, within a day)."""

    batch: Annotated[bool, typer.Option(
        False, "--batch", rich_help_panel=PANEL,
        help="Send the requests through the provider's batch API (OpenAI Batch API, Anthropic "
        "Message Batches) and wait for it; its id is kept beside the output, so a rerun "
        "collects it instead of submitting again. Requests it fails are sent the normal way.",
    )]
    batch_poll: Annotated[float, typer.Option(
        30.0, "--batch-poll", metavar="SECONDS", min=0.01, rich_help_panel=PANEL,
        help="Seconds between two looks at how the batch is going.",
    )]

    def mode(self) -> BatchMode | None:
        """The batch mode asked for, or None."""
        if not self.batch:
            return None
        from hopscore.engine.batch_mode import BatchMode

        return BatchMode(poll_s=self.batch_poll)
