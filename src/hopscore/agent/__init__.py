"""The agent machinery: task files, prediction validation, a baseline tool-calling
agent, and end-to-end grading (LLM judge for SQL2S and Parallel, execution match for S2SQL).

Modules (import them directly):

* task records, the release JSONL and category files and the v2 overlay are read by
  :mod:`hopscore.benchmarks.agent_tasks`, through the task loader the agent benchmark declares;
* :mod:`hopscore.agent.benchmark`: the benchmark the agent runs on (the registry's one whose
  runner is ``"agent"``);
* :mod:`hopscore.agent.world`: the world that benchmark bundles;
* :mod:`hopscore.agent.validate`: ``hopscore validate-predictions``;
* :mod:`hopscore.agent.knowledge`: the LiveSQLBench knowledge-base tools;
* the search backends (local BM25 corpus, generic JSON over HTTP) are
  :mod:`hopscore.run.search`, shared with the chain strategies;
* :mod:`hopscore.agent.tools`: tool schemas and the per-task toolset;
* :mod:`hopscore.agent.loop`: the tool-calling loop of one attempt;
* :mod:`hopscore.agent.grade`: grading attempts with the judge and SQL execution match;
* :mod:`hopscore.agent.agent_job`: the agent command (``hopscore agent``).
"""
