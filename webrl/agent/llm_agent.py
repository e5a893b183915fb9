"""LLM agents: a text policy + the prompt, one env at a time (`LLMAgent`) or many in
lockstep (`run_batched`, one batched `generate` call per round of steps).

A text policy is anything with `generate(prompts, params) -> list[Generation]`:
`LocalPolicy` (this process) or `OpenAIPolicy` (any /v1/completions server).
Model output goes to the env as data (parsed with `ast`, never executed).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

from webrl.agent.local_policy import Generation, SamplingParams
from webrl.agent.prompt import PromptConfig, build_prompt, trim_response
from webrl.env.web_env import WebEnv
from webrl.tasks.schema import Task


class TextPolicy(Protocol):
    name: str
    tokenizer: object

    def generate(
        self, prompts: list[str], params: SamplingParams | list[SamplingParams] | None = None
    ) -> list[Generation]: ...


def step_sampling(sampling: SamplingParams, task_id, step: int) -> SamplingParams:
    """The sampling of step `step` (0-based) of the episode of `task_id`. With `sampling.seed` set
    and a temperature above 0, the step gets a seed of its own, a hash of (seed, task, step): an
    episode's draws then depend neither on the episodes that share its batches (how many envs or
    workers run, in what order) nor on another episode's draw (a last-digit difference in the
    arithmetic of another machine changes one episode, not every later draw of the batch).
    Greedy decoding, or no seed, returns `sampling` unchanged (the policy's own generator)."""
    if sampling.seed is None or sampling.temperature == 0:
        return sampling
    digest = hashlib.blake2b(f"{sampling.seed}/{task_id}/{step}".encode(), digest_size=8).digest()
    return replace(sampling, seed=int.from_bytes(digest, "big") >> 1)  # < 2**63: a JSON/int64 seed


class LLMAgent:
    """The `Agent` protocol (reset/act) over a text policy, for the one-env runner."""

    def __init__(self, policy: TextPolicy, prompt: PromptConfig | None = None, sampling: SamplingParams | None = None):
        self.policy = policy
        self.prompt = prompt or PromptConfig()
        self.sampling = sampling or SamplingParams()
        self.intent = ""
        self.task_id = None
        self.history: list[tuple[str, str]] = []

    def reset(self, task: Task) -> None:
        self.intent, self.task_id = task.intent, task.task_id
        self.history = []

    def act(self, obs: str, info: dict) -> str:
        text = build_prompt(self.policy.tokenizer, self.intent, self.history, obs, self.prompt)
        params = step_sampling(self.sampling, self.task_id, len(self.history))
        response = trim_response(self.policy.generate([text], params)[0].text)
        self.history.append((obs, response))
        return response


@dataclass
class _Episode:
    task: Task
    env: WebEnv
    obs: str
    t0: float
    history: list[tuple[str, str]] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    shot: str | None = None  # the screenshot of `obs` (a browser backend asked for them)


def _record(ep: _Episode, reward: float, terminated: bool, truncated: bool, answer, agent_error=None,
            backend_error=None, keep_obs: bool = True) -> dict:
    t = ep.task
    return {
        "task_id": t.task_id, "family": t.family, "site": t.site, "intent": t.intent,
        "difficulty": t.difficulty, "reward": reward, "success": reward >= 1.0, "answer": answer,
        "n_steps": len(ep.steps), "terminated": terminated, "truncated": truncated,
        "agent_error": agent_error, "backend_error": backend_error,
        "seconds": round(time.perf_counter() - ep.t0, 4), "steps": ep.steps,
        "final_obs": ep.obs if keep_obs else None,
    }  # fmt: skip


def run_batched(
    tasks: Iterable[Task],
    envs: list[WebEnv],
    policy: TextPolicy,
    prompt: PromptConfig,
    sampling: SamplingParams,
    keep_obs: bool = True,
    on_episode: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Run every task once with `len(envs)` episodes in flight; one `generate` call per round.

    Records have the eval runner's fields plus `difficulty`, `final_obs` (the page after the
    last step; None without keep_obs), and per step
    `logprob` (sum over the response's tokens), `tokens` and `prompt_tokens` (and `screenshot`, the
    PNG of the page the step acted on, when a browser backend saves them).
    """
    todo = iter(tasks)
    free = list(envs)
    active: list[_Episode] = []
    records: list[dict] = []

    def finish(rec: dict) -> None:
        records.append(rec)
        if on_episode is not None:
            on_episode(rec)

    while True:
        while free:  # fill idle envs
            task = next(todo, None)
            if task is None:
                break
            env = free.pop()
            obs, info = env.reset(options={"task": task})
            active.append(_Episode(task, env, obs, time.perf_counter(), shot=info.get("screenshot")))
        if not active:
            return records
        prompts = [build_prompt(policy.tokenizer, ep.task.intent, ep.history, ep.obs, prompt) for ep in active]
        try:
            gens = policy.generate(prompts, [step_sampling(sampling, ep.task.task_id, len(ep.steps)) for ep in active])
        except Exception as e:  # the policy failed (e.g. server down): these episodes end, the run goes on
            for ep in active:
                finish(_record(ep, 0.0, False, False, None, agent_error=f"{type(e).__name__}: {e}"))
                free.append(ep.env)
            active = []
            continue
        still: list[_Episode] = []
        for ep, gen in zip(active, gens, strict=True):
            response = trim_response(gen.text)
            obs, reward, terminated, truncated, info = ep.env.step(response)
            ep.steps.append({
                "obs": ep.obs if keep_obs else None, "response": response, "action": info.get("action_text"),
                "error": info.get("action_error"), "url": info.get("url"), "logprob": round(sum(gen.logprobs), 4),
                "tokens": len(gen.token_ids), "prompt_tokens": gen.prompt_tokens,
                **({"screenshot": ep.shot} if ep.shot else {}),
            })  # fmt: skip
            ep.history.append((ep.obs, response))
            ep.obs, ep.shot = obs, info.get("screenshot")
            if terminated or truncated:
                finish(_record(ep, reward, terminated, truncated, info.get("answer"),
                               backend_error=info.get("backend_error"), keep_obs=keep_obs))  # fmt: skip
                free.append(ep.env)
            else:
                still.append(ep)
        active = still
