"""LLM agents over the real env: the batched lockstep runner, the one-env agent, and
`webrl eval --agent PATH` on a cpu-tiny checkpoint."""

import json
from dataclasses import replace
from pathlib import Path

from webrl.agent.llm_agent import LLMAgent, run_batched, step_sampling
from webrl.agent.local_policy import Generation, LocalPolicy, SamplingParams
from webrl.agent.prompt import PromptConfig
from webrl.env.web_env import EnvConfig, WebEnv
from webrl.rollout.runner import run_episode
from webrl.sites.world import WorldApp
from webrl.tasks.splits import load_split


class ScriptedPolicy:
    """Answers N/A on prompts that mention 'tracking', otherwise clicks element 1 then repeats it."""

    name = "scripted"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.calls: list[int] = []

    def generate(self, prompts, params=None):
        self.calls.append(len(prompts))
        out = []
        for p in prompts:
            text = 'exit(message="N/A")' if "tracking" in p else '# Element: x\ndo(action="Click", element="1")'
            out.append(Generation(text + "\n", [1, 2], [-0.5, -0.25], "stop", len(p)))
        return out


def _tasks():
    test = load_split("test")
    infeasible = [t for t in test if t.family == "shop.order_tracking"][:1]
    return infeasible + [t for t in test if t.site == "shop"][:4]


def test_batched_runner_records_and_lockstep(tiny):
    _, tok = tiny
    tasks = _tasks()
    world = WorldApp()
    envs = [WebEnv(EnvConfig(max_steps=4, max_revisits=0), world) for _ in range(3)]  # cut by max_steps
    policy = ScriptedPolicy(tok)
    seen = []
    records = run_batched(tasks, envs, policy, PromptConfig(), SamplingParams(), on_episode=seen.append)
    assert len(records) == len(tasks) == len(seen)
    assert max(policy.calls) == 3  # three episodes in flight share each generate call
    by_id = {r["task_id"]: r for r in records}
    na = by_id[tasks[0].task_id]
    assert na["success"] and na["n_steps"] == 1 and na["answer"] == "N/A"
    other = by_id[tasks[1].task_id]
    assert other["truncated"] and other["n_steps"] == 4
    step = other["steps"][0]
    assert step["response"] == '# Element: x\ndo(action="Click", element="1")'
    assert step["logprob"] == -0.75 and step["tokens"] == 2 and step["obs"].startswith("URL:")
    assert {"difficulty", "backend_error", "agent_error"} <= set(other)


def test_one_env_agent_matches_batched(tiny):
    _, tok = tiny
    tasks = _tasks()[:2]
    env = WebEnv(EnvConfig(max_steps=4))
    single = [run_episode(env, LLMAgent(ScriptedPolicy(tok)), t) for t in tasks]
    batched = run_batched(tasks, [WebEnv(EnvConfig(max_steps=4))], ScriptedPolicy(tok), PromptConfig(), SamplingParams())
    assert [r["reward"] for r in single] == [r["reward"] for r in batched]
    assert [[s["action"] for s in r["steps"]] for r in single] == [[s["action"] for s in r["steps"]] for r in batched]


def test_policy_failure_ends_episodes_not_the_run(tiny):
    _, tok = tiny

    class Broken(ScriptedPolicy):
        def generate(self, prompts, params=None):
            raise ConnectionError("server down")

    records = run_batched(_tasks()[:2], [WebEnv()], Broken(tok), PromptConfig(), SamplingParams())
    assert len(records) == 2 and all(r["agent_error"].startswith("ConnectionError") for r in records)


def test_cli_eval_with_a_checkpoint(tiny, tmp_path, capsys):
    from webrl.cli.main import main
    from webrl.models.build import save_checkpoint
    from webrl.models.config import preset

    model, tok = tiny
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    out = tmp_path / "eval"
    args = ["eval", "--agent", str(tmp_path / "ck"), "--split", "test", "--sites", "forum", "--limit", "2",
            "--max-steps", "2", "--max-new-tokens", "8", "--envs", "2", "--out", str(out), "--json", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["episodes"] == 2 and set(summary["errors"]["counts"]) >= {"wrong_page", "stuck_midway"}
    assert "per_step_bucket" in summary
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["steps"][0]["prompt_tokens"] > 0
    assert main(args) == 0  # resumes: nothing left to run
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 2


def test_eval_wall_time_adds_up_over_a_resume(tiny, tmp_path):
    from webrl.rollout.llm import run_eval_llm
    from webrl.rollout.wallclock import WALL_FILE

    _, tok = tiny
    tasks, out = _tasks()[:3], tmp_path / "eval"
    summary, _ = run_eval_llm(tasks[:2], ScriptedPolicy(tok), n_envs=2, env_config=EnvConfig(max_steps=2),
                              out_dir=out, progress=False)  # fmt: skip
    first = float((out / WALL_FILE).read_text())  # up to its last episode
    assert first > 0 and abs(summary["wall_minutes"] - first / 60) < 0.05
    # a killed invocation's time is kept: the resumed one adds to it (pretend the first took 10 min)
    (out / WALL_FILE).write_text("600.0")
    resumed, _ = run_eval_llm(tasks, ScriptedPolicy(tok), n_envs=2, env_config=EnvConfig(max_steps=2),
                              out_dir=out, progress=False)  # fmt: skip
    assert resumed["episodes"] == 3 and 10.0 <= resumed["wall_minutes"] < 10.5
    assert 600.0 < float((out / WALL_FILE).read_text()) < 630.0


def test_cli_eval_of_a_checkpoint_in_chromium_with_screenshots_and_its_viewer(tiny, tmp_path):
    """`webrl eval --agent CKPT --backend chromium --screenshots`: the LLM agent in a real browser
    (a context per env) takes the same steps as on `http`, each step's PNG is saved, and `webrl
    report` on the eval folder puts the screenshots into the trajectory viewer."""
    import pytest

    from webrl.cli.main import main
    from webrl.env.chromium_engine import chromium_available
    from webrl.models.build import save_checkpoint
    from webrl.models.config import preset

    if not chromium_available():
        pytest.skip("needs Chromium and playwright (`make test` installs both)")
    model, tok = tiny
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    common = ["eval", "--agent", str(tmp_path / "ck"), "--split", "test", "--sites", "forum", "--limit", "2",
              "--max-steps", "2", "--max-new-tokens", "8", "--envs", "2", "--no-progress"]  # fmt: skip
    assert main([*common, "--backend", "chromium", "--screenshots", "--workers", "2", "--out", str(tmp_path / "x")]) == 2
    assert main([*common, "--screenshots", "--out", str(tmp_path / "x")]) == 2  # http has no screenshots
    browser, http = tmp_path / "browser", tmp_path / "http"
    assert main([*common, "--backend", "chromium", "--screenshots", "--base-url", "http://127.0.0.1:0",
                 "--out", str(browser)]) == 0  # fmt: skip
    assert main([*common, "--out", str(http)]) == 0
    seen = {r["task_id"]: r for r in map(json.loads, (browser / "episodes.jsonl").read_text().splitlines())}
    want = {r["task_id"]: r for r in map(json.loads, (http / "episodes.jsonl").read_text().splitlines())}
    assert set(seen) == set(want) and len(seen) == 2
    for tid, r in seen.items():
        assert [s["action"] for s in r["steps"]] == [s["action"] for s in want[tid]["steps"]]
        assert r["success"] == want[tid]["success"] and r["backend_error"] is None
        shots = [s["screenshot"] for s in r["steps"]]
        assert all(Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)
    assert json.loads((browser / "config.json").read_text())["backend"] == "chromium"
    report = tmp_path / "report.html"
    assert main(["report", str(browser), "--out", str(report)]) == 0
    data = report.with_name("report-viewer.html").read_text().split('type="application/json">')[1].split("</script>")[0]
    viewed = json.loads(data)
    assert len(viewed) == 2 and all(e["source"] == "browser · final eval" for e in viewed)
    assert all(s["screenshot"] for e in viewed for s in e["steps"])


def test_cli_eval_through_a_served_checkpoint_equals_the_local_one(tiny, tmp_path):
    """`webrl eval --agent http://…/v1 --tokenizer CKPT` (our server, the openai client) gives the
    local checkpoint's greedy episodes, step for step."""
    from webrl.agent.local_policy import LocalPolicy
    from webrl.agent.server import ModelServer
    from webrl.cli.main import main
    from webrl.models.build import save_checkpoint
    from webrl.models.config import preset

    model, tok = tiny
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    common = ["eval", "--split", "test", "--sites", "shop,map", "--limit", "4", "--max-steps", "3", "--max-new-tokens",
              "12", "--envs", "2", "--no-progress"]  # fmt: skip
    assert main([*common, "--agent", str(tmp_path / "ck"), "--out", str(tmp_path / "local")]) == 0
    server = ModelServer(LocalPolicy.from_checkpoint(tmp_path / "ck"), "ck", port=0).start()
    try:
        assert main([*common, "--agent", server.url, "--tokenizer", str(tmp_path / "ck"), "--out", str(tmp_path / "remote")]) == 0
    finally:
        server.close()

    def episodes(folder):
        rows = (tmp_path / folder / "episodes.jsonl").read_text().splitlines()
        return {r["task_id"]: ([s["response"] for s in r["steps"]], r["success"]) for r in map(json.loads, rows)}

    assert episodes("remote") == episodes("local") and len(episodes("local")) == 4


def test_step_sampling_gives_each_seeded_step_a_seed_of_its_own():
    base = SamplingParams(temperature=0.5, seed=3)
    unseeded, greedy = SamplingParams(temperature=0.5), SamplingParams(seed=3)
    assert step_sampling(unseeded, "t1", 0) is unseeded and step_sampling(greedy, "t1", 4) is greedy
    seeds = {step_sampling(replace(base, seed=s), t, k).seed for s in (3, 4) for t in ("t1", "t2") for k in (0, 1)}
    assert len(seeds) == 8 and all(0 <= x < 2**63 for x in seeds)
    assert step_sampling(base, "t1", 1) == replace(base, seed=step_sampling(base, "t1", 1).seed)  # only the seed moves
    # blake2b-64 of "3/shop-1/2", shifted right once (hashlib, by hand): the value is part of what a seed
    # means, so a change here changes every seeded run
    assert step_sampling(base, "shop-1", 2).seed == 7369529835383681664


def test_a_seeded_episode_does_not_depend_on_its_batch_mates(tiny):
    """At temperature 1 with a seed, a task's episode takes the same steps alone, beside others in
    any order, with any policy-level generator, and in the one-env agent; another seed differs, and
    so do two copies of one task (ids TASK#0, TASK#1: a seed of their own, not the run's seed)."""
    model, tok = tiny
    forum = [t for t in load_split("test") if t.site == "forum"]
    tasks = forum[:2] + [replace(forum[2], task_id=f"{forum[2].task_id}#{k}") for k in range(2)]
    sampling = SamplingParams(temperature=1.0, max_new_tokens=8, seed=11)
    world = WorldApp()

    def responses(ts, n_envs, params=sampling, policy_seed=0):
        envs = [WebEnv(EnvConfig(max_steps=3, max_revisits=0), world) for _ in range(n_envs)]
        recs = run_batched(ts, envs, LocalPolicy(model, tok, seed=policy_seed), PromptConfig(), params)
        return {r["task_id"]: [s["response"] for s in r["steps"]] for r in recs}

    together = responses(tasks, 3)
    assert all(len(v) == 3 for v in together.values())
    assert together[tasks[2].task_id] != together[tasks[3].task_id]  # the copies draw apart
    assert responses(tasks[2:3], 1, policy_seed=99) == {tasks[2].task_id: together[tasks[2].task_id]}
    assert responses(tasks[::-1], 2) == together
    assert responses(tasks, 3, replace(sampling, seed=12)) != together
    env = WebEnv(EnvConfig(max_steps=3, max_revisits=0), world)
    one = run_episode(env, LLMAgent(LocalPolicy(model, tok, seed=7), sampling=sampling), tasks[1])
    assert [s["response"] for s in one["steps"]] == together[tasks[1].task_id]
