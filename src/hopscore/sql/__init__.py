"""SQL execution match: extract an agent's SQL, run it read-only, compare result tables.

Modules (import them directly; this package imports nothing so that query workers start fast):

* :mod:`hopscore.sql.sandbox`: :class:`~hopscore.sql.sandbox.SqlExecutor`, the read-only executor
  (worker processes, memory limit, deadline, hard kill) and
  :class:`~hopscore.sql.sandbox.QueryResult`;
* :mod:`hopscore.sql.grading`: one record graded inside a worker (bounded time and memory);
* :mod:`hopscore.sql.processes`, :mod:`hopscore.sql.snapshots`: worker processes, WAL copies;
* :mod:`hopscore.sql.signatures`: value signatures that prune column pairs and alignments;
* :mod:`hopscore.sql.tables`: result tables as verdicts show them (cells capped);
* :mod:`hopscore.sql.observation`: the ``run_sql`` tool's observation text;
* :mod:`hopscore.sql.extract`: the agent's final SQL from its answer or trajectory;
* :mod:`hopscore.sql.order`: whether a query's outermost SELECT is ordered;
* :mod:`hopscore.sql.table_match`: result-table comparison (reference, strict, rows, spider, bird);
* :mod:`hopscore.sql.inputs`, :mod:`hopscore.sql.records`: input lines and verdict rows;
* :mod:`hopscore.sql.evaluate`: one record graded;
* :mod:`hopscore.sql.keys`: settings-keyed resume keys;
* :mod:`hopscore.sql.match_job`: the ``hopscore sql-match`` pipeline (every line, resume);
* :mod:`hopscore.sql.summary`: the totals of an output.
"""
