"""RAGAS's faithfulness metric against the loopback server (runs in bench/.venv-ragas only).

    bench/.venv-ragas/bin/python bench/ragas_faithfulness.py --base-url URL --samples FILE

Prints `RAGAS {"seconds", "tokens", "input_tokens", "output_tokens", "scores", "note"}` on its
last line. No Django, no project imports: RAGAS lives in its own virtual environment.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
import warnings
from collections import Counter


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--model", default="loopback")
    args = parser.parse_args()
    if not args.base_url.startswith("http://127.0.0.1:"):
        raise SystemExit("the RAGAS comparison only talks to a loopback server")
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no analytics calls off the machine
    warnings.filterwarnings("ignore")

    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.cost import get_token_usage_for_openai
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness
    from ragas.run_config import RunConfig

    with open(args.samples) as handle:
        samples = json.load(handle)
    dataset = EvaluationDataset.from_list(
        [
            {
                "user_input": s["user_input"],
                "response": s["response"],
                "retrieved_contexts": s["retrieved_contexts"],
            }
            for s in samples
        ]
    )
    llm = LangchainLLMWrapper(
        ChatOpenAI(
            model=args.model,
            base_url=args.base_url,
            api_key="not-needed",
            temperature=0,
            max_retries=2,
            timeout=30,
        )
    )
    failures: Counter = Counter()

    class Failures(logging.Handler):
        def emit(self, record):
            message = record.getMessage()
            if "Exception raised in Job" in message:
                failures[message.split(": ", 1)[-1].split("(")[0].strip()] += 1

    logging.getLogger().addHandler(Failures())
    started = time.perf_counter()
    result = evaluate(
        dataset,
        metrics=[Faithfulness(llm=llm)],
        llm=llm,
        run_config=RunConfig(max_workers=32, timeout=60, max_retries=1),
        token_usage_parser=get_token_usage_for_openai,
        show_progress=False,
        raise_exceptions=False,
    )
    seconds = time.perf_counter() - started
    usage = result.total_tokens()
    scores = [
        None if (v is None or (isinstance(v, float) and math.isnan(v))) else round(float(v), 3)
        for v in result.to_pandas()["faithfulness"].tolist()
    ]
    nan = sum(1 for s in scores if s is None)
    note = f"{nan} of {len(scores)} answers scored NaN" if nan else ""
    if failures:
        note += "; RAGAS errors: " + ", ".join(f"{k} ×{v}" for k, v in failures.most_common())
    print(
        "RAGAS "
        + json.dumps(
            {
                "seconds": seconds,
                "tokens": usage.input_tokens + usage.output_tokens,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "scores": scores,
                "note": note,
            }
        ),
        flush=True,
    )
    # RAGAS leaves non-daemon worker threads behind that keep the interpreter alive until
    # the server closes its connections; the result is printed, so leave now.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
