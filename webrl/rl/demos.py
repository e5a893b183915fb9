"""Oracle demonstrations through the real env, and the SFT examples made from them.

A demonstration is an episode record like the eval runner's, with each step's
response annotated for the actor (`# Element: <label>` before element actions).
Only episodes the evaluator scores as successful are kept.
"""

from __future__ import annotations

from tqdm import tqdm

from webrl.agent.policies import OracleAgent
from webrl.agent.prompt import PromptConfig, annotate, build_prompt, completion_text
from webrl.env.web_env import WebEnv
from webrl.models.training import Example
from webrl.tasks.schema import Task


def collect_demonstrations(tasks: list[Task], env: WebEnv, prompt: PromptConfig, progress: bool = True) -> list[dict]:
    """One record per task the oracle solves: task fields + steps [{obs, response}]."""
    demos = []
    for task in tqdm(tasks, desc="demonstrations", unit="task", disable=not progress, leave=False):
        agent = OracleAgent()
        obs, info = env.reset(options={"task": task})
        agent.reset(task)
        steps = []
        while True:
            action = agent.act(obs, info)
            steps.append({"obs": obs, "response": annotate(action, info, prompt)})
            obs, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        if reward >= 1.0:
            demos.append({"task_id": task.task_id, "family": task.family, "site": task.site,
                          "intent": task.intent, "steps": steps})  # fmt: skip
    return demos


def demo_steps(demos: list[dict], tokenizer, prompt: PromptConfig):
    """(demo, step index, prompt text, response) for every step, each prompt built on the
    demonstration's own history: what SFT trains on."""
    for d in demos:
        history: list[tuple[str, str]] = []
        for i, step in enumerate(d["steps"]):
            yield d, i, build_prompt(tokenizer, d["intent"], history, step["obs"], prompt), step["response"]
            history.append((step["obs"], step["response"]))


def make_examples(demos: list[dict], tokenizer, prompt: PromptConfig, max_tokens: int) -> list[Example]:
    """Every step of every demonstration as (prompt, completion); longer ones than max_tokens dropped."""
    out = []
    for d, _, text, response in demo_steps(demos, tokenizer, prompt):
        p = tokenizer(text, add_special_tokens=False)["input_ids"]
        c = tokenizer(completion_text(tokenizer, response, prompt), add_special_tokens=False)["input_ids"]
        if len(p) + len(c) <= max_tokens:
            out.append(Example(tuple(p + c), len(p), d["task_id"]))
    return out
