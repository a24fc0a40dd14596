"""The tables of MCR's methods and protocol: one chain-strategy run (``hopscore run
--strategy``) and a whole suite (``hopscore suite mcr``, and ``hopscore merge`` of a suite)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from hopscore.text.words import counted

if TYPE_CHECKING:
    from hopscore.run.suite import SuiteRow


def _pct(value: object) -> str:
    return "-" if not isinstance(value, float) else f"{100 * value:.1f}"


def _with_ci(value: object, ci: object) -> str:
    if not isinstance(value, float):
        return "-"
    if isinstance(ci, dict):
        return f"{100 * value:.1f} [{100 * ci['low']:.0f}, {100 * ci['high']:.0f}]"
    return f"{100 * value:.1f}"


def _pair_cells(pair: dict[str, Any]) -> tuple[str, str]:
    """(McNemar p, difference with its interval) of one paired comparison, in points."""
    test = pair.get("test")
    delta = f"{100 * pair['delta']:+.1f}"
    if pair.get("low") is not None and pair.get("high") is not None:
        delta += f" [{100 * pair['low']:+.0f}, {100 * pair['high']:+.0f}]"
    if test is None:
        return "", delta
    p = test["p_adjusted"] if test.get("p_adjusted") is not None else test["p"]
    return f"p={p:.3g}" + ("*" if pair.get("significant") else ""), delta


def methods_table(block: dict[str, Any], title: str) -> Table:
    """SA / SC / oracle / MCR of one chain-strategy run, both denominators, paired tests."""
    table = Table(title=f"{title}: --strategy {block['strategy']}, k={block['chains']} "
                        f"({block['metric']} in %, [95% interval]; differences in points, "
                        "Holm-adjusted p, * below 0.05)", title_justify="left")
    for column in ("method", "answered", "over answered", "over all"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for method in block["methods"].values():
        table.add_row(method["title"], f"{method['answered']}/{method['n']}",
                      _with_ci(method["score_answered"], method.get("ci_answered")),
                      _with_ci(method["score_all"], method.get("ci_all")))
    titles = {name: m["title"] for name, m in block["methods"].items()}
    for pair in block.get("pairs") or ():
        p, delta = _pair_cells(pair)
        table.add_row(f"{titles[pair['b']]}-{titles[pair['a']]}", "", p, delta, style="dim")
    return table


def mcr_line(block: dict[str, object]) -> str:
    def pct(value: object) -> str:
        return "-" if not isinstance(value, float) else f"{100 * value:.2f}"

    return (f"MCR {block['metric']}: {pct(block['score_answered'])} over {block['answered']} "
            f"answered, {pct(block['score_all'])} over all {block['n']} "
            f"({block['abstained']} abstained, {counted(_count(block['errors']), 'error')})")


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0




def suite_table(rows: list[SuiteRow], model: str) -> Table:
    table = Table(
        title=f"MCR protocol: {model} (in %; score: over answered questions, as MCR reports; "
              "all: abstentions and errors score 0)", title_justify="left",
    )
    notes = any(row.status != "ok" for row in rows)
    columns = ["dataset", "metric", "n", "answered", "abstained", "errors", "score", "all"]
    for column in [*columns, "note"] if notes else columns:
        table.add_column(column, justify="left" if column in ("dataset", "metric", "note")
                         else "right", overflow="fold", no_wrap=column != "note")

    for row in rows:
        note = [] if not notes else [row.status if row.status != "missing" or not row.detail
                                     else f"missing: {row.detail}"]
        if row.mcr is None:
            table.add_row(row.benchmark, "", "", "", "", "", "", "", *note)
            continue
        m = row.mcr
        table.add_row(row.benchmark, str(m["metric"]), str(m["n"]), str(m["answered"]),
                      str(m["abstained"]), str(m["errors"]), _pct(m["score_answered"]),
                      _pct(m["score_all"]), *([""] if notes and row.status == "ok" else note))
    return table


def suite_methods_table(rows: list[SuiteRow], model: str, strategy: str) -> Table:
    """Per dataset: each method's answered count, its score over answered questions and over
    all questions (95% intervals), then the paired differences with McNemar's test."""
    table = Table(title=f"MCR's methods: {model}, --strategy {strategy} (in %, [95% "
                  "interval]; over answered: MCR's number for MCR; over all: unanswered score "
                  "0, MCR's number for SA and SC; differences in points, Holm-adjusted p)",
                  title_justify="left")
    for column in ("dataset", "method", "answered", "over answered", "over all"):
        table.add_column(column, justify="left" if column in ("dataset", "method")
                         else "right", overflow="fold")
    for row in rows:
        if not row.methods:
            table.add_row(row.benchmark, row.status if row.status != "missing" else
                          f"missing: {row.detail}", "", "", "")
            continue
        block = row.methods
        labels = [row.benchmark, f"({block['metric']})"]
        for method in block["methods"].values():
            table.add_row(labels.pop(0) if labels else "", method["title"],
                          f"{method['answered']}/{method['n']}",
                          _with_ci(method["score_answered"], method.get("ci_answered")),
                          _with_ci(method["score_all"], method.get("ci_all")))
        titles = {name: m["title"] for name, m in block["methods"].items()}
        for pair in block.get("pairs") or ():
            p, delta = _pair_cells(pair)
            table.add_row("", f"{titles[pair['b']]}-{titles[pair['a']]}", "", p, delta,
                          style="dim")
        if row.status != "ok":
            table.add_row("", row.status, "", "", "")
    return table
