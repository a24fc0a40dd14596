"""LLM judge: grade free-text answers against gold with an OpenAI-compatible model.

* :mod:`hopscore.judge.prompt`: the built-in template, ``--prompt-file`` templates, their sha256;
* :mod:`hopscore.judge.parse`: the verdict parser (and the reference reading, for audit);
* :mod:`hopscore.judge.rows`: input validation and output rows;
* :mod:`hopscore.judge.judge_config`: what a judge is and how it is asked (:class:`JudgeConfig`);
* :mod:`hopscore.judge.judge_job`: the resumable, concurrent run on :mod:`hopscore.engine`;
* :mod:`hopscore.judge.judge_summary`: the counts of a finished run (:class:`JudgeSummary`).
"""

from hopscore.judge.judge_config import JudgeConfig
from hopscore.judge.judge_job import judge_file, run_judge
from hopscore.judge.judge_summary import JudgeSummary
from hopscore.judge.parse import JudgeVerdict, parse_judge_output, reference_verdict
from hopscore.judge.prompt import DEFAULT_TEMPLATE, JudgePrompt

__all__ = [
    "DEFAULT_TEMPLATE",
    "JudgeConfig",
    "JudgePrompt",
    "JudgeSummary",
    "JudgeVerdict",
    "judge_file",
    "parse_judge_output",
    "reference_verdict",
    "run_judge",
]
