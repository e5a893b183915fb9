import json, sys, time, torch
from pathlib import Path
from webrl.agent.local_policy import LocalPolicy
from webrl.agent.prompt import load_prompt_config
from webrl.eval.llm import run_eval_llm
from webrl.tasks.splits import load_split
torch.set_num_threads(2)
ck = "runs/demo/sft/final"
rows = bool(int(sys.argv[1]))  # a label only: 0 = the old code, 1 = the new (set by PYTHONPATH)
tasks = [t for t in load_split("train") if t.task_id % 7 == 0][::4][:32]
pol = LocalPolicy.from_checkpoint(ck, max_batch_tokens=8192)
G = {"gen": 0.0, "calls": 0, "prompts": 0, "fwd": 0.0, "pre": 0.0, "npre": 0, "pretok": 0}
g0 = pol.generate
def gen(prompts, *a, **k):
    t = time.perf_counter(); out = g0(prompts, *a, **k); G["gen"] += time.perf_counter() - t; G["calls"] += 1; G["prompts"] += len(prompts); return out
pol.generate = gen
f0 = pol.model.forward
def fwd(*a, **k):
    t = time.perf_counter(); out = f0(*a, **k); dt = time.perf_counter() - t; G["fwd"] += dt
    ids = k["input_ids"]
    if ids.shape[1] > 1: G["pre"] += dt; G["npre"] += 1; G["pretok"] += ids.numel()
    return out
pol.model.forward = fwd
t = time.perf_counter()
summary, recs = run_eval_llm(tasks, pol, load_prompt_config(ck), n_envs=16, progress=False)
dt = time.perf_counter() - t
steps = sum(len(r["steps"]) for r in recs)
print(json.dumps({"rows": rows, "tasks": len(tasks), "wall_s": round(dt, 1), "env_steps": steps,
                  "steps_s": round(steps / dt, 3), "success": sum(r["success"] for r in recs), **{k: round(v, 1) for k, v in G.items()}}))
json.dump([[s.get("response") for s in r["steps"]] for r in recs], open(f"responses-{int(rows)}.json", "w"))
