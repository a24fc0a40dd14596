"""Run lm-evaluation-harness in-process with a scripted model and write its samples file with
lm-eval's own EvaluationTracker, as ``lm_eval --log_samples`` does (the CLI's ``dummy`` model
answers "lol" to everything, which scores 0 whatever the scorer; this model gives answers worth
scoring). Usage: python lm_eval_oracle.py TASK_DIR TASK_NAME OUTPUT_DIR REPLIES.json

REPLIES.json maps a document's question to the reply the model gives.
"""

import json
import os
import sys

import lm_eval
from lm_eval.api.model import LM
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

task_dir, task_name, output_dir, replies_path = sys.argv[1:5]
with open(replies_path, encoding="utf-8") as handle:
    REPLIES = json.load(handle)


class Scripted(LM):
    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm=False):
        return [REPLIES[request.doc["question"]] for request in requests]


results = lm_eval.simple_evaluate(model=Scripted(), tasks=[task_name],
                                  task_manager=TaskManager(include_path=task_dir),
                                  log_samples=True)
os.makedirs(output_dir, exist_ok=True)
tracker = EvaluationTracker(output_path=os.path.join(output_dir, "results.json"))
samples = results.pop("samples")
tracker.save_results_aggregated(results=results, samples=samples)
tracker.save_results_samples(task_name, samples[task_name])
