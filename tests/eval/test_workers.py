"""Episodes over worker processes sharing one served model (rollout/workers.py): a real tiny model
behind `webrl serve-model`'s server on loopback, real spawned processes, a real local Ray."""

import importlib.util
import json
import socket

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from webrl.agent.local_policy import LocalPolicy, SamplingParams  # noqa: E402
from webrl.agent.server import ModelServer, ServerLimits  # noqa: E402
from webrl.env.web_env import EnvConfig  # noqa: E402
from webrl.rollout.llm import run_eval_llm  # noqa: E402
from webrl.rollout.workers import Endpoint, Workers, chunk_size  # noqa: E402
from webrl.tasks.splits import load_split  # noqa: E402

SAMPLING = SamplingParams(max_new_tokens=8)
ENV = EnvConfig(max_steps=2)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A cpu-tiny checkpoint on disk (workers load its tokenizer) served one prompt per forward pass,
    so a response never depends on which requests it was batched with."""
    from webrl.models.build import build, load_checkpoint, save_checkpoint
    from webrl.models.config import preset

    ckpt = tmp_path_factory.mktemp("ck") / "tiny"
    model, tok = build(preset("cpu-tiny"))
    save_checkpoint(model, tok, preset("cpu-tiny"), ckpt)
    model, tok, _ = load_checkpoint(ckpt)
    policy = LocalPolicy(model, tok)
    server = ModelServer(policy, str(ckpt), port=0, limits=ServerLimits(max_batch=1)).start()
    yield server, policy, ckpt
    server.close()


def _tasks(n=6):
    return [t for t in load_split("test") if t.site in ("shop", "forum")][:n]


def _outcome(records):
    return {str(r["task_id"]): (r["success"], r["n_steps"], [s["response"] for s in r["steps"]]) for r in records}


def test_chunk_size_hand_checked():
    assert chunk_size(100, 2, 16) == 50  # half each: under 4 rounds of 16 envs (64)
    assert chunk_size(1000, 2, 16) == 64  # capped at 4 rounds of a worker's envs
    assert chunk_size(3, 8, 16) == 1  # fewer tasks than workers: one each
    with pytest.raises(ValueError, match="executor"):
        Workers(2, Endpoint("http://127.0.0.1:1/v1"), executor="threads")


def test_process_workers_give_the_in_process_results_and_resume(served, tmp_path):
    server, policy, ckpt = served
    tasks = _tasks()
    local, local_records = run_eval_llm(tasks, policy, sampling=SAMPLING, n_envs=1, env_config=ENV, progress=False)
    workers = Workers(2, Endpoint(server.url, str(ckpt)))
    out = tmp_path / "eval"
    run_eval_llm(tasks[:2], policy, sampling=SAMPLING, n_envs=1, env_config=ENV, out_dir=out, progress=False,
                 workers=workers)  # fmt: skip
    summary, records = run_eval_llm(tasks, policy, sampling=SAMPLING, n_envs=1, env_config=ENV, out_dir=out,
                                    progress=False, workers=workers)  # resumes: the other 4 tasks  # fmt: skip
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(str(r["task_id"]) for r in lines) == sorted(str(t.task_id) for t in tasks)  # each once
    assert _outcome(records) == _outcome(local_records)  # greedy: the same episodes as in one process
    assert summary["episodes"] == local["episodes"] == 6 and summary["success_rate"] == local["success_rate"]
    assert json.loads((out / "config.json").read_text())["workers"] == {"n": 2, "executor": "process"}


def test_seeded_sampling_gives_the_in_process_episodes_over_workers(served):
    """At temperature 1 with a seed, each episode step sends its own seed: two workers with two envs
    each (their rows as concurrent requests) sample the episodes three envs in one process do."""
    server, policy, ckpt = served
    tasks, sampled = _tasks(4), SamplingParams(temperature=1.0, max_new_tokens=8, seed=5)
    _, local = run_eval_llm(tasks, policy, sampling=sampled, n_envs=3, env_config=ENV, progress=False)
    _, remote = run_eval_llm(tasks, policy, sampling=sampled, n_envs=2, env_config=ENV, progress=False,
                             workers=Workers(2, Endpoint(server.url, str(ckpt))))  # fmt: skip
    assert _outcome(remote) == _outcome(local)
    assert len({tuple(v[2]) for v in _outcome(local).values()}) == 4  # (sampled: no two episodes alike)


def test_a_worker_that_cannot_reach_the_model_names_its_tasks(served, tmp_path):
    _, policy, ckpt = served
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    tasks = _tasks(2)
    with pytest.raises(RuntimeError, match=f"rollout worker failed on a chunk of 1 tasks starting at task "
                                           f"({tasks[0].task_id}|{tasks[1].task_id})"):  # fmt: skip
        run_eval_llm(tasks, policy, sampling=SAMPLING, n_envs=1, env_config=ENV, out_dir=tmp_path / "e",
                     progress=False, workers=Workers(2, Endpoint(dead, str(ckpt))))  # fmt: skip
    assert (tmp_path / "e" / "episodes.jsonl").read_text() == ""  # nothing half-written


def test_ray_workers_give_the_in_process_results(served):
    pytest.importorskip("ray")
    server, policy, ckpt = served
    tasks = _tasks(4)
    _, local_records = run_eval_llm(tasks, policy, sampling=SAMPLING, n_envs=1, env_config=ENV, progress=False)
    _, records = run_eval_llm(tasks, policy, sampling=SAMPLING, n_envs=1, env_config=ENV, progress=False,
                              workers=Workers(2, Endpoint(server.url, str(ckpt)), executor="ray"))  # fmt: skip
    assert _outcome(records) == _outcome(local_records)


def test_cli_workers_serve_a_local_checkpoint_and_exit_cleanly(served, tmp_path, capsys):
    """In a process of its own, twice: the process used to abort at exit in most runs
    ("terminate called without an active exception") while the server's batcher thread was alive."""
    import subprocess
    import sys

    from webrl.cli.main import main

    _, _, ckpt = served
    args = ["eval", "--agent", str(ckpt), "--split", "test", "--sites", "forum", "--limit", "3", "--max-steps", "2",
            "--max-new-tokens", "8", "--envs", "1", "--workers", "2", "--json", "--no-progress"]  # fmt: skip
    ray = importlib.util.find_spec("ray") is not None
    for k, extra in enumerate([[], ["--ray"] if ray else []]):  # the second as Ray tasks, where Ray is installed
        out = tmp_path / f"cli{k}"
        done = subprocess.run([sys.executable, "-m", "webrl.cli.main", *args, *extra, "--out", str(out)],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        assert summary["episodes"] == 3 and len((out / "episodes.jsonl").read_text().splitlines()) == 3
        assert "POST /v1/completions" not in done.stderr  # the embedded server keeps no access log
        executor = json.loads((out / "config.json").read_text())["workers"]["executor"]
        assert executor == ("ray" if extra else "process")
    assert main(args[:-4] + ["--workers", "0"]) == 2
    assert "--workers must be >= 1" in capsys.readouterr().err
