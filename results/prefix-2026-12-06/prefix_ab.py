"""Prefix-cache A/B on real episode prompt sequences (oracle demonstrations of train tasks).

16 episodes step in lockstep, as the eval's envs do: at step i one `generate` call takes the i-th
prompt of every episode that has one (built on the demonstration's own history). Arms alternate
within one process: prefix cache off (prefix_cache_tokens 0) and on (the default budget).
Weights: the `cpu` preset's SmolLM2 with fresh LoRA (= the base model), merged, bf16, as
`LocalPolicy.from_checkpoint` runs a trained actor; greedy, 32 new tokens at most.
Usage: python prefix_ab.py [n_episodes] [reps]   (prints JSON)
"""

import json
import random
import sys
import time

import torch

from webrl.agent.local_policy import LocalPolicy, SamplingParams
from webrl.env.web_env import WebEnv
from webrl.models.build import build
from webrl.models.config import preset
from webrl.models.lora import merged_for_inference
from webrl.rl.demos import collect_demonstrations, demo_steps
from webrl.rl.sft import SFT_PRESETS
from webrl.tasks.splits import load_split

torch.set_num_threads(2)
n_eps = int(sys.argv[1]) if len(sys.argv) > 1 else 16
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
cfg = preset("cpu")
model, tok = build(cfg)
model = merged_for_inference(model)
prompt_cfg = SFT_PRESETS["cpu"].prompt  # what the demo's actor is trained and evaluated with
tasks = random.Random(0).sample(load_split("train"), n_eps)
env = WebEnv()
demos = collect_demonstrations(tasks, env, prompt_cfg, progress=False)
env.close()
print(f"{len(demos)} demonstrations", file=sys.stderr, flush=True)
episodes: dict[int, list[str]] = {}
for d, i, text, _ in demo_steps(demos, tok, prompt_cfg):
    episodes.setdefault(id(d), []).append(text)
seqs = list(episodes.values())
rounds = [[s[i] for s in seqs if len(s) > i] for i in range(max(len(s) for s in seqs))]
params = SamplingParams(max_new_tokens=32)
res: dict = {"episodes": len(seqs), "prompts": sum(map(len, seqs)),
             "prompt_tokens": sum(len(tok(p, add_special_tokens=False)["input_ids"]) for s in seqs for p in s)}
out: dict = {}
for rep in range(reps):
    for budget in (0, 16384):
        pol = LocalPolicy(model, tok, max_batch_tokens=8192, autocast_bf16=True, bf16_weights=rep == 0 and budget == 0,
                          prefix_cache_tokens=budget)
        t0 = time.perf_counter()
        gens = [g.token_ids for r in rounds for g in pol.generate(r, params)]
        dt = time.perf_counter() - t0
        print(f"rep {rep} budget {budget}: {dt:.1f} s, prefilled {pol.prefilled}, reused {pol.reused}",
              file=sys.stderr, flush=True)
        o = out.setdefault(str(budget), {"seconds": [], "prefilled": pol.prefilled, "reused": pol.reused})
        o["seconds"].append(round(dt, 2))
        o.setdefault("tokens", gens)
same = sum(a == b for a, b in zip(out["0"]["tokens"], out["16384"]["tokens"]))
for o in out.values():
    o.pop("tokens")
res.update(arms=out, same_responses=same)
print(json.dumps(res))
