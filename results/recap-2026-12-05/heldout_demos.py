from pathlib import Path
from webrl.agent.prompt import load_prompt_config
from webrl.env.web_env import WebEnv
from webrl.rl.demos import collect_demonstrations, save_jsonl
from webrl.tasks.splits import load_eval_tasks
sft = "/work/demo-fc/runs/demo/sft"
tasks = load_eval_tasks(f"{sft}/heldout_tasks.json")
env = WebEnv()
demos = collect_demonstrations(tasks, env, load_prompt_config(f"{sft}/final"), progress=False)
env.close()
save_jsonl(demos, Path("/work/scratch/recap/heldout_demos.jsonl"))
print(len(tasks), "tasks,", len(demos), "demos,", sum(len(d["steps"]) for d in demos), "steps")
