"""`webrl bench model`: throughput of the model stack, as JSON.

  load_s                 time to build the model (GGUF de-quantisation for the default)
  sft.tokens_s           training tokens/s of our SFT step (LM head on completion tokens only,
                         accelerate autocast) on length-bucketed demonstration batches
  sft.bare_tokens_s      a bare HF/PEFT loop on the same batches: model(..., labels).loss,
                         backward, AdamW
  sft.overhead           1 - ours / bare (negative: ours is faster)
  sft.padding            real / padded tokens of the training batches
  agent.steps_s[b]       env steps/s of the LLM agent with b episodes in flight (greedy)
  agent.speedup          steps_s at the largest b / steps_s at b = 1
  agent.drafts_accepted  share of the prompt-lookup draft tokens kept (greedy decoding; agent/local_policy.py)
  agent.prefix_reused    share of the prompt tokens taken from the prefix cache instead of prefilled
  prefill.flops_s        model FLOP/s in prefill (2 x non-embedding params x tokens + attention)
  matmul.flops_s         a bare matmul of the model's MLP shape on this machine, same dtype
  eval                   optional: wall time and success of a full split evaluation
  device                 where it all ran: `default_device()` (the GPU when there is one)
"""

from __future__ import annotations

import argparse
import time

import torch

from webrl.agent.local_policy import LocalPolicy, SamplingParams
from webrl.agent.prompt import PromptConfig, load_prompt_config
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.models.device import bf16_autocast, default_device
from webrl.models.training import batch_tensors, length_batches, sft_loss
from webrl.rl.demos import collect_demonstrations, make_examples
from webrl.sites.world import WorldApp
from webrl.tasks.splits import load_split


def _sync(device: torch.device) -> None:
    """Wait for the device's queued work, so wall-clock timers measure it (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _load(args: argparse.Namespace):
    from webrl.models.build import build, load_checkpoint
    from webrl.models.config import preset

    t0 = time.perf_counter()
    if args.checkpoint:
        model, tok, cfg = load_checkpoint(args.checkpoint, trainable=True)
        prompt = load_prompt_config(args.checkpoint)
    else:
        cfg = preset(args.preset)
        model, tok = build(cfg)
        prompt = PromptConfig()
    return model.to(default_device()), tok, cfg, prompt, time.perf_counter() - t0


def _time_train(model, batches, step_fns: dict, steps: int) -> dict[str, float]:
    """tokens/s of each training-step function on the same batches. Each batch is run by
    every function in turn (so shape warm-up and machine load hit them alike), after one
    untimed warm-up batch per function."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5)
    model.train()
    device = next(iter(params)).device
    tokens = dict.fromkeys(step_fns, 0)
    seconds = dict.fromkeys(step_fns, 0.0)
    for i, (ids, mask, labels) in enumerate(batches[: steps + 1]):
        for name, fn in step_fns.items():
            _sync(device)
            t0 = time.perf_counter()
            loss = fn(ids, mask, labels)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            _sync(device)
            if i > 0:
                seconds[name] += time.perf_counter() - t0
                tokens[name] += int(mask.sum())
    model.eval()
    return {name: tokens[name] / seconds[name] if seconds[name] else 0.0 for name in step_fns}


def bench_sft(model, tok, cfg, prompt: PromptConfig, demos: list[dict], steps: int) -> dict:
    from accelerate import Accelerator

    examples = make_examples(demos, tok, prompt, 1600)
    order = length_batches([e.n_tokens for e in examples], 2400, seed=0)
    device = default_device()
    batches = [tuple(t.to(device) for t in batch_tensors([examples[i] for i in b], tok.pad_token_id)) for b in order]
    real = sum(int(m.sum()) for _, m, _ in batches)
    padded = sum(m.numel() for _, m, _ in batches)
    acc = Accelerator(cpu=device.type == "cpu", mixed_precision="bf16" if cfg.autocast_bf16 else "no")

    def ours(ids, mask, labels):
        with acc.autocast():
            return sft_loss(model, ids, mask, labels)[0]

    def bare(ids, mask, labels):
        with bf16_autocast(device, cfg.autocast_bf16):
            return model(input_ids=ids, attention_mask=mask, labels=labels).loss

    speeds = _time_train(model, batches, {"ours": ours, "bare": bare}, steps)
    ours_s, bare_s = speeds["ours"], speeds["bare"]
    return {"tokens_s": round(ours_s, 1), "bare_tokens_s": round(bare_s, 1),
            "overhead": round(1 - ours_s / bare_s, 3) if bare_s else None,
            "padding": round(real / padded, 3), "batches": len(batches), "examples": len(examples),
            "mean_example_tokens": round(real / len(examples), 1)}  # fmt: skip


def bench_agent(policy: LocalPolicy, prompt: PromptConfig, tasks, sizes: list[int]) -> dict:
    from webrl.agent.llm_agent import run_batched

    world = WorldApp()
    out = {}
    drafted, accepted, reused, prefilled = policy.drafted, policy.accepted, policy.reused, policy.prefilled
    for b in sizes:
        envs = [WebEnv(EnvConfig(max_steps=2), world) for _ in range(b)]
        t0 = time.perf_counter()
        recs = run_batched(tasks[: max(b, 4)], envs, policy, prompt, SamplingParams(max_new_tokens=48), keep_obs=False)
        dt = time.perf_counter() - t0
        out[str(b)] = round(sum(r["n_steps"] for r in recs) / dt, 3)
    drafted, accepted = policy.drafted - drafted, policy.accepted - accepted
    reused, prefilled = policy.reused - reused, policy.prefilled - prefilled
    return {"steps_s": out, "speedup": round(out[str(sizes[-1])] / out[str(sizes[0])], 2) if out[str(sizes[0])] else None,
            "draft_tokens": policy.draft_tokens, "drafts_accepted": round(accepted / drafted, 3) if drafted else None,
            "prefix_reused": round(reused / (reused + prefilled), 3) if reused + prefilled else None}  # fmt: skip


def bench_prefill(model, cfg, tokens: int = 2048, batch: int = 4) -> dict:
    conf = (model.get_base_model() if hasattr(model, "get_base_model") else model).config
    n_embed = conf.vocab_size * conf.hidden_size
    n_params = sum(p.numel() for p in model.parameters()) - n_embed  # tied head: the embedding counted once
    T = tokens // batch
    device = default_device()
    ids = torch.randint(100, conf.vocab_size - 1, (batch, T), device=device)
    flops = 2 * n_params * batch * T + 2 * conf.num_hidden_layers * batch * T * T * conf.hidden_size  # causal attn
    with torch.no_grad(), bf16_autocast(device, cfg.autocast_bf16):
        model(input_ids=ids[:, :16], logits_to_keep=1)
        _sync(device)
        t0 = time.perf_counter()
        model(input_ids=ids, logits_to_keep=1)
        _sync(device)
        dt = time.perf_counter() - t0
    dtype = next(model.parameters()).dtype  # the gpu preset's weights are bf16 themselves
    a = torch.randn(tokens, conf.hidden_size, device=device, dtype=dtype)
    w = torch.randn(conf.hidden_size, conf.intermediate_size, device=device, dtype=dtype)
    with bf16_autocast(device, cfg.autocast_bf16):
        a @ w
        _sync(device)
        t0 = time.perf_counter()
        reps = 50 if device.type == "cuda" else 5
        for _ in range(reps):
            a @ w
        _sync(device)
        mm = (time.perf_counter() - t0) / reps
    mm_flops = 2 * tokens * conf.hidden_size * conf.intermediate_size / mm
    return {"prefill": {"tokens": batch * T, "seconds": round(dt, 3), "tokens_s": round(batch * T / dt, 1),
                        "flops_s": round(flops / dt / 1e9, 2), "unit": "GFLOP/s"},
            "matmul": {"shape": [tokens, conf.hidden_size, conf.intermediate_size],
                       "flops_s": round(mm_flops / 1e9, 2), "unit": "GFLOP/s"},
            "prefill_vs_matmul": round(flops / dt / mm_flops, 3)}  # fmt: skip


def bench_model(args: argparse.Namespace) -> dict:
    if args.threads:
        torch.set_num_threads(args.threads)
    model, tok, cfg, prompt, load_s = _load(args)
    tasks = load_split(args.split)[: args.tasks]
    demos = collect_demonstrations(tasks, WebEnv(), prompt, progress=False)
    result: dict = {"model": args.checkpoint or args.preset, "device": str(default_device()),
                    "threads": torch.get_num_threads(),
                    "autocast_bf16": cfg.autocast_bf16, "load_s": round(load_s, 1)}  # fmt: skip
    parts = set(args.parts.split(","))
    if "sft" in parts:
        result["sft"] = bench_sft(model, tok, cfg, prompt, demos, args.train_steps)
    if "prefill" in parts:
        result.update(bench_prefill(model, cfg))
    policy = LocalPolicy(model, tok, autocast_bf16=cfg.autocast_bf16)
    if "agent" in parts:
        sizes = [int(x) for x in args.batches.split(",")]
        result["agent"] = bench_agent(policy, prompt, load_split(args.split), sizes)
    if args.eval_split:
        from webrl.rollout.llm import run_eval_llm

        t0 = time.perf_counter()
        summary, _ = run_eval_llm(load_split(args.eval_split), policy, prompt, SamplingParams(), n_envs=16, progress=False)
        result["eval"] = {"split": args.eval_split, "wall_s": round(time.perf_counter() - t0, 1),
                          "success_rate": summary["success_rate"], "episodes": summary["episodes"]}  # fmt: skip
    return result
