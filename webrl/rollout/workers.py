"""Episodes spread over worker processes that share one OpenAI-compatible endpoint.

`run_eval_llm(..., workers=Workers(n, endpoint))` (behind `webrl eval --workers N [--ray [ADDRESS]]`)
cuts the tasks into chunks and runs each chunk in a worker: a local process (`executor="process"`)
or a Ray task (`executor="ray"`: a local Ray runtime, or the cluster at `address`, whose nodes
need `webrl` installed and a route to the endpoint). A worker builds its own world (sites and
databases, so episodes stay isolated from every other worker's) and runs `n_envs` episodes in
flight against the endpoint (`webrl serve-model`, vLLM, SGLang), whose server batches the
concurrent requests of all workers. The driver writes each chunk's episodes as the chunk
finishes, so a killed run loses at most the chunks in flight, which a resume runs again.

Sampling at temperature > 0 with a seed (`SamplingParams.seed`; the phase loop and `webrl eval
--seed` set one) sends each episode step's own seed (`step_sampling`), which our server and vLLM
honour per request: an episode's draws then depend neither on the worker count nor on which
worker's request comes first (up to a near-tie that padding can flip). Without a seed the
server's one generator serves every request in arrival order: reproducible in distribution, not
episode by episode. Greedy evaluation is exact when the server runs one prompt per forward pass;
batched with other workers' prompts, padding can flip a near-tie (README, "Serving").
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from webrl.agent.local_policy import SamplingParams
from webrl.agent.prompt import PromptConfig
from webrl.env.web_env import EnvConfig
from webrl.tasks.schema import Task

EXECUTORS = ("process", "ray")


@dataclass(frozen=True)
class Endpoint:
    """Where workers send their prompts: an OpenAI-compatible base URL, the served model id
    (None = the first served) and a local directory holding the model's tokenizer (None = the
    served model id, when that is a local path, as with `webrl serve-model`)."""

    url: str
    model: str | None = None
    tokenizer: str | None = None


@dataclass(frozen=True)
class Workers:
    """How many worker processes, on which executor (`process` | `ray`), against which endpoint."""

    n: int
    endpoint: Endpoint
    executor: str = "process"
    address: str | None = None  # ray: a cluster to join (None = start a local Ray runtime)

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"Workers.n must be >= 1, got {self.n}")
        if self.executor not in EXECUTORS:
            raise ValueError(f"Workers.executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}")


@dataclass(frozen=True)
class Chunk:
    """One worker's share: these tasks, `n_envs` in flight, with these settings."""

    endpoint: Endpoint
    tasks: tuple[Task, ...]
    prompt: PromptConfig
    sampling: SamplingParams
    env: EnvConfig
    n_envs: int
    keep_obs: bool = True


@contextlib.contextmanager
def served_workers(policy, n: int, tokenizer: str, executor: str = "process", name: str = "") -> Iterator[Workers | None]:
    """`n` workers against `policy` (a `LocalPolicy`) served on a loopback port for the block; None
    when n <= 1 (the caller runs in-process). `tokenizer`: a local directory with the model's
    tokenizer, which the workers load; `name`: the served model id (default: that directory)."""
    if n <= 1:
        yield None
        return
    from webrl.agent.server import ModelServer

    name = name or tokenizer
    server = ModelServer(policy, name, port=0, access_log=False).start()
    try:
        yield Workers(n, Endpoint(server.url, name, tokenizer), executor)
    finally:
        server.close()


def chunk_size(n_tasks: int, workers: int, n_envs: int) -> int:
    """Tasks per chunk: enough for a few rounds of a worker's envs (a chunk's tail leaves envs
    idle while its longest episode finishes), but every worker gets work."""
    return max(1, min(4 * n_envs, math.ceil(n_tasks / workers)))


_POLICIES: dict[Endpoint, object] = {}  # per worker process: one client and tokenizer per endpoint


def run_chunk(chunk: Chunk) -> list[dict]:
    """Run a chunk's episodes in this process (the worker side); returns their records."""
    from webrl.agent.llm_agent import run_batched
    from webrl.agent.openai_policy import OpenAIPolicy
    from webrl.env.web_env import WebEnv
    from webrl.sites.world import WorldApp

    ep = chunk.endpoint
    if ep not in _POLICIES:
        tok = None
        if ep.tokenizer:
            from webrl.models.build import load_tokenizer

            tok = load_tokenizer(ep.tokenizer)
        _POLICIES[ep] = OpenAIPolicy(ep.url, model=ep.model, tokenizer=tok)
    world = WorldApp()
    envs = [WebEnv(chunk.env, world) for _ in range(max(1, min(chunk.n_envs, len(chunk.tasks))))]
    try:
        return run_batched(list(chunk.tasks), envs, _POLICIES[ep], chunk.prompt, chunk.sampling, keep_obs=chunk.keep_obs)
    finally:
        for env in envs:
            env.close()


class _ProcessPool:
    def __init__(self, n: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, chunk: Chunk):
        return self.pool.submit(run_chunk, chunk)

    def wait_one(self, handles: list):
        from concurrent.futures import FIRST_COMPLETED, wait

        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        return next(iter(done))

    def result(self, handle) -> list[dict]:
        return handle.result()

    def close(self, failed: bool) -> None:
        if failed:  # a failed or interrupted run: stop the chunks in flight (their episodes are not kept)
            for proc in list(getattr(self.pool, "_processes", {}).values()):  # no public way before 3.14
                proc.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)


class _RayPool:
    def __init__(self, n: int, address: str | None):
        try:
            import ray
        except ImportError as e:
            raise RuntimeError("the ray executor needs Ray: pip install 'webrl[dist]' (or ray)") from e
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            kw = {"address": address} if address else {"num_cpus": n, "include_dashboard": False}
            ray.init(ignore_reinit_error=True, logging_level="ERROR", **kw)
        self.fn = ray.remote(num_cpus=1, max_retries=0)(run_chunk)
        self.pending: set = set()

    def submit(self, chunk: Chunk):
        handle = self.fn.remote(chunk)
        self.pending.add(handle)
        return handle

    def wait_one(self, handles: list):
        (handle,), _ = self.ray.wait(handles, num_returns=1)
        return handle

    def result(self, handle) -> list[dict]:
        self.pending.discard(handle)
        return self.ray.get(handle)

    def close(self, failed: bool) -> None:
        if failed:
            for handle in self.pending:
                self.ray.cancel(handle, force=True)
        if self.started:
            self.ray.shutdown()


def run_distributed(tasks: list[Task], template: Chunk, workers: Workers, on_episode: Callable[[dict], None]) -> None:
    """Run every task once over `workers`, `template`'s settings for each chunk; `on_episode(rec)`
    for each record, chunk by chunk as chunks finish (in the driver process)."""
    if not tasks:
        return
    size = chunk_size(len(tasks), workers.n, template.n_envs)
    chunks = iter([tuple(tasks[i : i + size]) for i in range(0, len(tasks), size)])
    pool = _RayPool(workers.n, workers.address) if workers.executor == "ray" else _ProcessPool(workers.n)
    pending: dict = {}
    failed = True
    try:
        for part in chunks:
            pending[pool.submit(replace(template, tasks=part))] = part
            if len(pending) == workers.n:
                break
        while pending:
            handle = pool.wait_one(list(pending))
            part = pending.pop(handle)
            try:
                records = pool.result(handle)
            except Exception as e:  # a worker died or its chunk raised: say which tasks (finished chunks are kept)
                raise RuntimeError(f"a rollout worker failed on a chunk of {len(part)} tasks starting at task "
                                   f"{part[0].task_id}: {type(e).__name__}: {e}") from e  # fmt: skip
            for rec in records:
                on_episode(rec)
            part = next(chunks, None)
            if part is not None:
                pending[pool.submit(replace(template, tasks=part))] = part
        failed = False
    finally:
        pool.close(failed)
