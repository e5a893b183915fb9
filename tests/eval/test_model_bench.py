"""`webrl bench model` on the cpu-tiny preset: every part runs and reports on the model's device."""

import argparse

import pytest

pytest.importorskip("transformers")

from webrl.eval.model_bench import bench_model  # noqa: E402
from webrl.models.device import default_device  # noqa: E402


def test_bench_model_reports_each_part_on_the_default_device():
    args = argparse.Namespace(checkpoint=None, preset="cpu-tiny", split="test", tasks=4, train_steps=1,
                              batches="1,2", parts="sft,prefill,agent", eval_split=None, threads=0)  # fmt: skip
    r = bench_model(args)
    assert r["device"] == str(default_device())
    assert r["sft"]["tokens_s"] > 0 and r["sft"]["bare_tokens_s"] > 0
    assert 0 < r["sft"]["padding"] <= 1
    assert r["prefill"]["flops_s"] > 0 and r["matmul"]["flops_s"] > 0
    assert set(r["agent"]["steps_s"]) == {"1", "2"} and all(v > 0 for v in r["agent"]["steps_s"].values())
    assert r["agent"]["draft_tokens"] == 4 and (r["agent"]["drafts_accepted"] is None or 0 <= r["agent"]["drafts_accepted"] <= 1)
    assert 0 < r["agent"]["prefix_reused"] < 1  # an episode's second prompt begins as its first did
