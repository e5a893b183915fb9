import json, random, sys, time, torch
from webrl.agent.local_policy import LocalPolicy, SamplingParams
from webrl.agent.prompt import load_prompt_config
from webrl.rl.demos import demo_steps
torch.set_num_threads(2)
ck = "runs/demo/webrl/phase-003/actor/final"
pol = LocalPolicy.from_checkpoint(ck, max_batch_tokens=8192)
cfg = load_prompt_config(ck)
demos = [json.loads(l) for l in open("runs/demo/sft/demos.jsonl")]
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
steps = list(demo_steps(random.sample(demos, 60), pol.tokenizer, cfg))
prompts = [t for _, _, t, _ in random.sample(steps, int(sys.argv[3]) if len(sys.argv) > 3 else 16)]
confs = [dict(prefill_rows=r, draft_tokens=d) for r, d in json.loads(sys.argv[1])]
res = {json.dumps(c): [] for c in confs}
pol.generate(prompts[:2], SamplingParams())
for rep in range(3):
    for c in confs:
        for k, v in c.items(): setattr(pol, k, v)
        t = time.perf_counter(); g = pol.generate(prompts, SamplingParams()); res[json.dumps(c)].append(round(time.perf_counter() - t, 2))
print(json.dumps(res))
