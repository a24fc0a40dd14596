"""``--batch`` and ``--batch-poll``: the options of a command that can send through a
provider's batch API (:mod:`hopscore.engine.batch_mode`); ``run`` adds ``--dry-run``."""

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

    def mode(self, max_cost: float | None = None, max_tokens_total: int | None = None
             ) -> BatchMode | None:
        """The batch mode asked for, or None; refused beside a cost or token budget, which
        cannot stop a batch once the provider has it."""
        if not self.batch:
            return None
        if max_cost is not None or max_tokens_total is not None:
            from hopscore.errors import HopscoreError

            raise HopscoreError(
                "--batch does not go with --max-cost or --max-tokens-total: the provider runs "
                "a submitted batch whole, so a budget cannot stop it midway (--dry-run "
                "estimates a run's cost before anything is sent)")
        from hopscore.engine.batch_mode import BatchMode

        return BatchMode(poll_s=self.batch_poll)


@dataclass(frozen=True)
class SendOptions(BatchOptions):
    """``hopscore run``'s: the batch options, and ``--dry-run`` (send nothing at all)."""

    dry_run: Annotated[bool, typer.Option(
        False, "--dry-run", rich_help_panel="Output",
        help="Render the prompts, estimate the run's tokens and cost at list prices, send "
        "and write nothing.",
    )]
