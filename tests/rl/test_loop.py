"""`webrl train` end to end on cpu-tiny: two phases, killed mid-rollout and mid-update,
resumed to completion with no lost or duplicated trajectory."""

import gzip
import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from support import train_cli  # noqa: E402

from webrl.cli.main import build_parser, main  # noqa: E402
from webrl.cli.train_cmds import loop_config  # noqa: E402
from webrl.files import read_jsonl  # noqa: E402
from webrl.rl.loop import Banner, LoopConfig, epoch_means, phase_metrics, reuse_episodes  # noqa: E402
from webrl.rl.loop_config import LOOP_PRESETS, LOOP_TRAIN, METRICS  # noqa: E402
from webrl.rl.task_stage import repeat_tasks, train_pool  # noqa: E402
from webrl.tasks.schema import save_tasks  # noqa: E402
from webrl.tasks.splits import load_split, stratified  # noqa: E402


def test_two_phases_killed_and_resumed(killed_run):
    run, sft, stdout = killed_run
    assert "resuming at step 2" in stdout

    for phase in (1, 2):
        pdir = run / f"phase-{phase:03d}"
        tasks = json.loads((pdir / "tasks.json").read_text())
        ids = [json.loads(x)["task_id"] for x in (pdir / "rollouts" / "episodes.jsonl").read_text().splitlines()]
        assert sorted(map(str, ids)) == sorted(str(t["task_id"]) for t in tasks)  # none lost, none twice
        stages = json.loads((pdir / "stages.json").read_text())
        assert set(stages) >= {"tasks", "rollout", "label", "replay", "critic", "actor", "eval"}
        assert all(v["minutes"] >= 0 for v in stages.values())  # wall time per stage
        assert (pdir / "actor" / "final" / "adapter_model.safetensors").exists()
        assert (pdir / "critic" / "value_head.pt").exists()
    gen = json.loads((run / "phase-002" / "tasks.json").read_text())
    test_intents = {t.intent for t in load_split("test")}
    assert all(t["extra"]["curriculum"]["how"] in ("same-family", "sibling") for t in gen)
    assert not test_intents & {t["intent"] for t in gen}  # the curriculum never emits a test task
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["phase"] for m in lines] == [1, 2]
    # phase 1 ran in three processes: its minutes are its clock's, saved over all three
    clock = float((run / "phase-001" / "wall_seconds").read_text())
    assert abs(lines[0]["minutes"] - clock / 60) < 0.02
    for key in ("rollout/success", "orm/positive_rate", "critic/loss", "actor/loss", "actor/kl",
                "curriculum/kept", "buffer/size", "eval/success"):  # fmt: skip
        assert key in lines[1], key
    assert set(lines[1]) - {"phase"} <= set(METRICS), set(lines[1]) - set(METRICS)  # every name documented
    assert (run / "phase-000" / "eval" / "summary.json").exists()
    if importlib.util.find_spec("tensorboardX"):  # the metrics as TensorBoard scalars too (the `tb` extra)
        from webrl.tensorboard import read_scalars

        tb = read_scalars(run / "tb")
        assert tb["eval/success"] == pytest.approx({m["phase"]: m["eval/success"] for m in lines})
        actor = [json.loads(x) for x in (run / "phase-001" / "actor" / "metrics.jsonl").read_text().splitlines()]
        got = read_scalars(run / "phase-001" / "actor" / "tb")["losses/actor"]  # over the killed and resumed fit
        assert got == pytest.approx({m["step"]: m["losses/actor"] for m in actor})
    assert train_cli(run, sft, None).returncode == 0  # a finished run resumes to a no-op


def _phase_1_of(src: Path, run: Path, **settings) -> dict:
    """A copy of finished run `src` as it stood after phase 1 (phase 2, the final eval and the
    TensorBoard folder left out, the metrics cut to phase 1), with `settings` changed in its saved
    config; returns that config. Resuming it runs phase 2 under the new settings."""
    import shutil

    shutil.copytree(src, run, ignore=lambda d, names: {"phase-002", "final", "tb"} & set(names) if Path(d) == src else set())
    cfg = {**json.loads((run / "train_config.json").read_text()), **settings}
    (run / "train_config.json").write_text(json.dumps(cfg))
    lines = [x for x in (run / "metrics.jsonl").read_text().splitlines() if json.loads(x)["phase"] == 1]
    (run / "metrics.jsonl").write_text("".join(x + "\n" for x in lines))
    return cfg


class TaskWriter:
    """An LLM that answers the curriculum prompt with fixed lines for the site(s) it names: one plain
    task, one quoting an entity no site has, one out of reach, one the feasibility judge refuses;
    and, as that judge, NO to tasks that ask to admire a page, YES to the rest (the loop's LLM
    path is under test)."""

    name = "task-writer"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def generate(self, prompts, params=None):
        from webrl.agent.local_policy import Generation

        out = []
        for p in prompts:
            sites = " and ".join(re.findall(r'"(\w+)"', p.split("\n")[0]))
            text = (f'1. Open the {sites} home page and read it\n2. Find "Zyxx Quuble" on {sites}\n'
                    f"3. Email the {sites} team\n4. Open the {sites} home page and admire it")
            if p.startswith("You check tasks"):  # the feasibility judge
                text = " NO." if "admire" in p.split("Task:")[-1] else "Yes"
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            out.append(Generation(text, ids, [0.0] * len(ids), "stop", len(p)))
        return out


def test_a_phase_with_the_llm_generator_over_a_real_server(killed_run, tmp_path):
    """`--generator URL`: phase 2's tasks come from an OpenAI-compatible server (ours, serving a
    scripted writer): cross-site seeds included, the feasibility filter drops the made-up entity
    and the out-of-reach request, the LLM judge (`--feasibility-judge`, the same server) the task it
    answers NO to, the tasks (eval type "orm") are saved and read back, and the run
    finishes and resumes to a no-op."""
    from webrl.agent.server import ModelServer
    from webrl.models.build import load_tokenizer
    from webrl.tasks.schema import load_tasks

    src, sft, _ = killed_run
    run = tmp_path / "llm"
    server = ModelServer(TaskWriter(load_tokenizer(sft / "final")), "writer", port=0).start()
    try:
        # 6 candidates per phase task: every site group's prompt asks for at least 4 lines
        cfg = _phase_1_of(src, run, generator=server.url, feasibility_judge=server.url, candidates=6.0)
        done = train_cli(run, sft, None)
        again = train_cli(run, sft, None)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-3000:]
    assert again.returncode == 0, again.stderr[-3000:]  # reads the saved tasks back
    tasks = load_tasks(run / "phase-002" / "tasks.json")
    llm = [t for t in tasks if t.eval["eval_types"] == ["orm"]]
    assert llm and all(t.extra["curriculum"]["how"] == "llm" and "read it" in t.intent for t in llm)
    seeds = {str(t.task_id): t for t in load_tasks(run / "phase-001" / "tasks.json")}
    assert any(len(t.sites) > 1 for t in llm) == any(len(t.sites) > 1 for t in seeds.values())
    stages = json.loads((run / "phase-002" / "stages.json").read_text())["tasks"]
    # of each 4 lines, the rule drops 2 and the judge 1
    assert stages["curriculum/generated"] == 4 * stages["curriculum/feasible"] == 4 * stages["curriculum/judged_out"]
    assert (run / "final" / "eval" / "summary.json").exists() or not cfg.get("final_eval", True)


def test_a_resumed_run_estimates_what_is_left_from_finished_phases(killed_run, tmp_path):
    import shutil

    run, sft, _ = killed_run
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    stages = json.loads((copy / "phase-002" / "stages.json").read_text())
    del stages["eval"]  # as if killed during phase 2's eval
    (copy / "phase-002" / "stages.json").write_text(json.dumps(stages))
    lines = (copy / "metrics.jsonl").read_text().splitlines()
    (copy / "metrics.jsonl").write_text(lines[0] + "\n")
    resumed = train_cli(copy, sft, None)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    first = next(x for x in resumed.stdout.splitlines() if x.startswith("== phase 2/2"))
    assert "min left" in first  # phase 1 ran in an earlier process; its minutes still count
    assert [json.loads(x)["phase"] for x in (copy / "metrics.jsonl").read_text().splitlines()] == [1, 2]


def test_an_archived_finished_run_resumes_to_a_no_op(killed_run, tmp_path, monkeypatch):
    """A study after a lost machine adopts its archive's finished runs (no weights, gzipped episodes
    without pages): `train --resume` on one must find every stage done and change no record."""
    from webrl.eval import archive as arch

    run, sft, _ = killed_run
    monkeypatch.setattr(arch, "GZIP_OVER", 0)  # every JSONL gzipped, as a long run's large ones are
    arch.archive(run, tmp_path / "archived")
    copy = tmp_path / "archived"
    assert not list(copy.rglob("*.safetensors")) and list(copy.rglob("*.jsonl.gz"))

    def records() -> dict:
        return {p: p.read_bytes() for p in copy.rglob("*") if p.is_file() and p.name != "invocations.jsonl" and "tb" not in p.parts}

    before = records()
    resumed = train_cli(copy, sft, None)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert records() == before


def test_a_phase_wall_time_adds_up_over_the_processes_that_ran_it(tmp_path):
    from webrl.rl.stages import Stages

    fresh = Stages(tmp_path / "phase-001")
    assert fresh.wall_minutes() < 0.05 and not (tmp_path / "phase-001" / "wall_seconds").exists()
    fresh.mark("tasks")  # every mark saves the phase's time
    assert float((tmp_path / "phase-001" / "wall_seconds").read_text()) < 3
    (tmp_path / "phase-001" / "wall_seconds").write_text("120.0")  # as if earlier processes spent 2 min
    resumed = Stages(tmp_path / "phase-001")
    assert "tasks" in resumed and 2.0 <= resumed.wall_minutes() < 2.05
    resumed.tick()
    assert 120.0 <= float((tmp_path / "phase-001" / "wall_seconds").read_text()) < 123.0


def test_banner_time_left_counts_down_within_a_phase(capsys):
    import time

    banner = Banner(phases=3)
    banner(1, "tasks")
    assert "min left" not in capsys.readouterr().out  # nothing finished yet: no estimate
    banner.phase_seconds = [600.0]  # phase 1 took 10 min
    banner.phase_start = time.perf_counter() - 120  # phase 2 has run 2 of its expected 10 min
    banner(2, "actor")
    assert "~18 min left" in capsys.readouterr().out  # 2 phases x 10 min - 2 min


def test_config_validation_and_cli_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match="--orm"):
        LoopConfig(init="x")
    with pytest.raises(ValueError, match="init"):
        LoopConfig(reward="oracle")
    assert main(["train", "--run", str(tmp_path / "r"), "--reward", "orm", "--init", "x"]) == 2
    assert "ORM checkpoint" in capsys.readouterr().err
    assert main(["train", "--run", str(tmp_path / "r"), "--reward", "oracle", "--init", "x", "--temperature", "-1"]) == 2
    assert "temperature must be >= 0" in capsys.readouterr().err  # the flag reaches LoopConfig
    assert main(["train", "--run", str(tmp_path / "r"), "--reward", "oracle", "--init", "x", "--workers", "0"]) == 2
    assert "workers must be >= 1" in capsys.readouterr().err
    assert main(["train", "--run", str(tmp_path / "r"), "--reward", "oracle", "--init", "x", "--curriculum-fill", "x"]) == 2
    assert "fill must be one of nearest, train" in capsys.readouterr().err
    args = build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle", "--curriculum-fill", "train"])
    assert loop_config(args).fill == "train"
    with pytest.raises(ValueError, match="--demos"):
        LoopConfig(init="x", reward="oracle", method="sft")
    with pytest.raises(ValueError, match="feasibility_judge .* needs the LLM generator"):
        LoopConfig(init="x", reward="oracle", feasibility_judge="http://127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match="feasibility_judge must be an OpenAI-compatible URL"):
        LoopConfig(init="x", reward="oracle", generator="http://127.0.0.1:8000/v1", feasibility_judge="gpt-4")
    with pytest.raises(ValueError, match="critic_backbone must be one of head, lora"):
        LoopConfig(init="x", reward="oracle", critic_backbone="full")
    with pytest.raises(ValueError, match="constraint_share must be in"):
        LoopConfig(init="x", reward="oracle", constraint_share=1.5)
    with pytest.raises(ValueError, match="eval_split"):
        LoopConfig(init="x", reward="oracle", eval_split=str(tmp_path / "missing.json"))
    assert main(["study", "--out", str(tmp_path / "s"), "--init", "x", "--eval-split", "dev"]) == 2
    assert "eval_split must be" in capsys.readouterr().err and not (tmp_path / "s").exists()
    # every chosen config is checked before the first run: continued SFT needs the demonstrations
    assert main(["study", "--out", str(tmp_path / "s"), "--init", "org/x", "--configs", "webrl,continued_sft"]) == 2
    assert "config continued_sft" in capsys.readouterr().err and not (tmp_path / "s").exists()


def test_lam_lr_and_threshold_flags_reach_the_config():
    args = build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle", "--lam", "0",
                                      "--lr", "5e-5", "--orm-threshold", "0.8", "--critic-replay", "--gamma", "0.9"])  # fmt: skip
    cfg = loop_config(args)
    assert cfg.lam == 0.0 and cfg.train.lr == 5e-5 and cfg.orm_threshold == 0.8 and cfg.critic_replay
    assert cfg.gamma == 0.9 and loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x",
                                                                       "--reward", "oracle"])).gamma == 1.0
    assert (cfg.ppl_lo, cfg.ppl_hi) == (1 / 0.95, 2.0)  # the paper's window by default
    args = build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle", "--ppl-window", "2", "inf"])
    cfg = loop_config(args)
    assert (cfg.ppl_lo, cfg.ppl_hi) == (2.0, 1e9) and json.loads(json.dumps(cfg.to_json()))["ppl_hi"] == 1e9
    for lo, hi in (("0.5", "2"), ("2", "1.5")):  # a perplexity is >= 1; the window must not be empty
        args = build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle", "--ppl-window", lo, hi])
        with pytest.raises(ValueError, match="ppl_lo < ppl_hi"):
            loop_config(args)
    assert not loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle"])).critic_replay
    cpu = loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--orm", "o", "--preset", "cpu"]))
    gpu = loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--orm", "o", "--preset", "gpu"]))
    assert (cpu.orm_threshold, gpu.orm_threshold) == (0.7, 0.5)  # the small ORM's positives need the margin
    assert cfg.train.epochs == LoopConfig(init="x", reward="oracle").train.epochs  # the rest of the optimiser kept
    tiny = loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle",
                                                  "--preset", "cpu-tiny", "--lr", "1e-5"]))  # fmt: skip
    assert tiny.train.lr == 1e-5 and tiny.train.max_seq_tokens == LOOP_PRESETS["cpu-tiny"]["train"].max_seq_tokens
    both = loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle",
                                                  "--lr", "1e-5", "--actor-epochs", "3"]))  # fmt: skip
    assert (both.train.lr, both.train.epochs, both.train.warmup_steps) == (1e-5, 3.0, LOOP_TRAIN.warmup_steps)
    with pytest.raises(ValueError, match="epochs > 0"):
        loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle",
                                               "--actor-epochs", "0"]))  # fmt: skip
    with pytest.raises(ValueError, match=r"lam .* \[0, 1\], got 1.5"):
        loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle",
                                               "--lam", "1.5"]))  # fmt: skip
    with pytest.raises(ValueError, match=r"orm_threshold must be in \(0, 1\), got 1.0"):
        LoopConfig(init="x", orm="o", orm_threshold=1.0)
    with pytest.raises(ValueError, match="unknown preset 'big'"):
        loop_config(build_parser().parse_args(["train", "--run", "r", "--preset", "big"]))
    assert (cpu.replay_sample, cpu.replay_ratio) == (1.0, 2.0)
    more = loop_config(build_parser().parse_args(["train", "--run", "r", "--init", "x", "--orm", "o", "--preset", "cpu",
                                                  "--replay-sample", "4", "--replay-ratio", "3"]))  # fmt: skip
    assert (more.replay_sample, more.replay_ratio, more.temperature) == (4.0, 3.0, 0.5)  # the rest of the preset kept
    with pytest.raises(ValueError, match="replay_sample and replay_ratio must be >= 0"):
        LoopConfig(init="x", reward="oracle", replay_ratio=-1)


def test_rollouts_never_draw_a_task_of_a_train_drawn_eval_split(tmp_path):
    train = load_split("train")
    held = train[5:25]
    save_tasks(held, tmp_path / "heldout.json")
    pool = train_pool(LoopConfig(init="x", reward="oracle", eval_split=str(tmp_path / "heldout.json")))
    ids = {str(t.task_id) for t in held}
    assert not ids & {str(t.task_id) for t in pool}
    assert not {t.intent for t in held} & {t.intent for t in pool}
    assert len(pool) >= len(train) - len(held) - 5  # only the held-out tasks (and exact intent twins) go
    assert train_pool(LoopConfig(init="x", reward="oracle")) == train


def test_train_tasks_file_and_repeated_rollouts(tmp_path):
    train = load_split("train")
    save_tasks(train[:6], tmp_path / "mine.json")
    # the file is the pool, even when it is the eval split too (does the update learn its own tasks?)
    cfg = LoopConfig(init="x", reward="oracle", train_tasks=str(tmp_path / "mine.json"),
                     eval_split=str(tmp_path / "mine.json"), rollouts_per_task=3)  # fmt: skip
    pool = train_pool(cfg)
    assert [t.task_id for t in pool] == [t.task_id for t in train[:6]]
    copies = repeat_tasks(pool[:2], cfg.rollouts_per_task)
    assert [c.task_id for c in copies] == [f"{pool[0].task_id}#{i}" for i in range(3)] + [f"{pool[1].task_id}#{i}" for i in range(3)]
    assert {c.intent for c in copies} == {pool[0].intent, pool[1].intent} and repeat_tasks(pool, 1) == pool
    save_tasks(load_split("test")[:1] + train[:2], tmp_path / "leak.json")
    with pytest.raises(ValueError, match=r"leak.json: 1 task\(s\) are test-split tasks"):
        train_pool(LoopConfig(init="x", reward="oracle", train_tasks=str(tmp_path / "leak.json")))
    with pytest.raises(ValueError, match="rollouts_per_task must be >= 1"):
        LoopConfig(init="x", reward="oracle", rollouts_per_task=0)
    with pytest.raises(ValueError, match="train_tasks must be a task file"):
        LoopConfig(init="x", reward="oracle", train_tasks=str(tmp_path / "missing.json"))
    # phase 1's task stage: the file's tasks (tasks_per_phase of them), each rolled out 3 times
    from webrl.rl.stages import Stages
    from webrl.rl.task_stage import phase_tasks
    from webrl.tasks.schema import load_tasks

    small = replace(cfg, tasks_per_phase=4)
    tasks, _ = phase_tasks(small, tmp_path / "run", 1, Stages(tmp_path / "run" / "phase-001"), None, None, None, None)
    assert len(tasks) == 12 and len({str(t.task_id) for t in tasks}) == 12
    assert {str(t.task_id).split("#")[0] for t in tasks} <= {str(t.task_id) for t in train[:6]}
    assert [t.task_id for t in load_tasks(tmp_path / "run" / "phase-001" / "tasks.json")] == [t.task_id for t in tasks]
    args = build_parser().parse_args(["train", "--run", "r", "--init", "x", "--reward", "oracle",
                                      "--train-tasks", str(tmp_path / "mine.json"), "--rollouts-per-task", "2"])  # fmt: skip
    assert (loop_config(args).train_tasks, loop_config(args).rollouts_per_task) == (str(tmp_path / "mine.json"), 2)


def test_phase_metrics_count_the_orm_false_positives():
    # (training reward, evaluator reward): 2 rewarded and right, 1 rewarded and wrong, 1 missed, 1 without evaluator
    pairs = [(1.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0), (1.0, None), (0.0, 0.0)]
    labelled = [{"reward": r, "success": r >= 1.0, "true_reward": t} for r, t in pairs]
    m = phase_metrics(labelled, {}, [], {}, {}, {"success_rate": 0.0})
    assert m["orm/precision"] == round(2 / 3, 4) and m["orm/false_positives"] == 1
    assert m["orm/agreement"] == 0.6 and m["rollout/true_success"] == 0.6 and m["orm/positive_rate"] == round(4 / 6, 4)
    nothing = phase_metrics([{"reward": 0.0, "success": False, "true_reward": 0.0}], {}, [], {}, {}, {"success_rate": 0})
    assert nothing["orm/precision"] is None and nothing["orm/false_positives"] == 0


def test_actor_metrics_are_means_over_the_whole_epoch():
    # lines every 5 steps and one at the end (step 12); a resume from a step-5 checkpoint logged step 10 again
    lines = [{"step": 5, "actor/kl": -0.2, "actor/loss": 1.0, "charts/lr": 1.0},
             {"step": 10, "actor/kl": 0.4, "actor/loss": 9.0},
             {"step": 10, "actor/kl": 0.1, "actor/loss": 0.5},
             {"step": 12, "actor/kl": 0.6, "actor/loss": 0.25}]  # fmt: skip
    # kl: (5 * -0.2 + 5 * 0.1 + 2 * 0.6) / 12 = 0.7 / 12; loss: (5 * 1.0 + 5 * 0.5 + 2 * 0.25) / 12 = 8 / 12
    assert epoch_means(lines, "actor/") == {"actor/kl": round(0.7 / 12, 5), "actor/loss": round(8 / 12, 5)}


def test_final_eval_starts_from_the_last_phase_eval(tmp_path):
    src, dst = tmp_path / "phase-003" / "eval", tmp_path / "final" / "eval"
    src.mkdir(parents=True)
    eps = [{"task_id": i, "success": i == 1} for i in range(3)]
    (src / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in eps))
    assert reuse_episodes(src, dst) == 0  # an unfinished eval is not reused
    (src / "done").write_text("")
    assert reuse_episodes(src, dst) == 3
    assert [json.loads(x) for x in (dst / "episodes.jsonl").read_text().splitlines()] == eps
    (dst / "episodes.jsonl").write_text(json.dumps(eps[0]) + "\n")  # the final eval has gone on since
    assert reuse_episodes(src, dst) == 0
    assert len((dst / "episodes.jsonl").read_text().splitlines()) == 1
    # a finished final eval from `webrl archive` (episodes gzipped) is left as it is
    (dst / "episodes.jsonl").unlink()
    (dst / "episodes.jsonl.gz").write_bytes(gzip.compress(json.dumps(eps[2]).encode() + b"\n"))
    (dst / "done").write_text("")
    assert reuse_episodes(src, dst) == 0 and not (dst / "episodes.jsonl").exists()


def test_a_shared_phase_1_is_the_one_the_run_would_have_rolled_out(killed_run, tmp_path):
    """Two configs of a seed that differ only in `UPDATE_ONLY` settings roll out the same phase 1
    (so a study shares it): webrl's and a config changing nearly all of those settings, computed
    afresh, agree episode by episode, and that config given webrl's phase 1 trains on the same data."""
    from webrl.cli.start_eval import UPDATE_ONLY, first_phase_source, share_first_phase
    from webrl.rl.loop import train

    _, sft, _ = killed_run
    base = LoopConfig(**{**LOOP_PRESETS["cpu-tiny"], "init": str(sft / "final"), "reward": "oracle",
                         "demos": str(sft / "demos.jsonl"), "phases": 1})  # fmt: skip
    awr = replace(base, method="awr", actor_loss="eq6", beta=0.3, lam=0.7, gamma=0.9, ppl_lo=1.0, ppl_hi=3.0,
                  replay_ratio=1.0, replay_sample=2.0, curriculum=False, candidates=2.0, critic_lo=0.1,
                  critic_hi=0.9, critic_replay=True, critic_epochs=2, critic_lr=3e-3, critic_backbone="lora",
                  critic_tune_epochs=2, rephrase_share=0.5, constraint_share=0.5, eval_max_steps=2,
                  eval_subset=2, train=replace(base.train, lr=5e-4))  # fmt: skip
    # left alone: phases (one is enough), the generator (an endpoint), replay/ppl_filter/fill (their
    # windows and ratio are changed instead), final_eval (off on cpu-tiny already)
    changed = {k for k in UPDATE_ONLY if getattr(awr, k) != getattr(base, k)}
    assert UPDATE_ONLY - changed == {"phases", "generator", "feasibility_judge", "replay", "ppl_filter", "fill",
                                     "final_eval"}

    def phase_1(run: Path) -> list:
        eps = read_jsonl(run / "phase-001" / "rollouts" / "episodes.jsonl")
        labels = read_jsonl(run / "phase-001" / "labels.jsonl")
        return [(e["task_id"], [s["response"] for s in e["steps"]], e["reward"]) for e in eps] + labels

    train(base, tmp_path / "webrl", progress=False)
    train(awr, tmp_path / "awr-own", progress=False)
    assert phase_1(tmp_path / "awr-own") == phase_1(tmp_path / "webrl") and phase_1(tmp_path / "webrl")

    def episodes(run: Path) -> list:
        return sorted((str(e["task_id"]), [s["response"] for s in e["steps"]])
                      for e in read_jsonl(run / "phase-001" / "rollouts" / "episodes.jsonl"))  # fmt: skip

    # the same settings' run that was killed after two rollouts and resumed sampled the same episodes
    # (each step draws from its own seed: T = 1 here), though its batches held other episodes
    assert base.temperature > 0 and episodes(killed_run[0]) == episodes(tmp_path / "webrl")
    assert first_phase_source([tmp_path / "webrl"], awr) == tmp_path / "webrl"
    assert share_first_phase(tmp_path / "webrl", tmp_path / "awr")
    line = train(awr, tmp_path / "awr", progress=False)
    assert line["phase"] == 1 and phase_1(tmp_path / "awr") == phase_1(tmp_path / "webrl")
    stages = json.loads((tmp_path / "awr" / "phase-001" / "stages.json").read_text())
    assert stages["label"]["shared_from"] == str(tmp_path / "webrl") and "actor" in stages
    own = [json.loads(x) for x in (tmp_path / "awr-own" / "phase-001" / "examples.jsonl").read_text().splitlines()]
    got = [json.loads(x) for x in (tmp_path / "awr" / "phase-001" / "examples.jsonl").read_text().splitlines()]
    assert got == own  # the update that follows sees the same data


def test_stratified_subset_spreads_over_sites():
    tasks = load_split("test")
    sub = stratified(tasks, 48, seed=0)
    assert len(sub) == 48 and len({t.site for t in sub}) == 6
    assert sub == stratified(tasks, 48, seed=0)
    assert stratified(tasks, 0, seed=0) == tasks


def test_two_phases_with_a_fully_fine_tuned_actor(tmp_path):
    """The `gpu` presets' shape on cpu-tiny: no LoRA, every weight trained. Phase 2's curriculum
    scores its tasks with phase 1's critic, whose backbone is then a whole checkpoint. Rollouts and
    evals run in 2 worker processes against the actor served on loopback."""
    from webrl.models.build import build, save_checkpoint
    from webrl.models.config import TINY, ModelConfig
    from webrl.rl.loop import LOOP_PRESETS, LoopConfig, train

    mcfg = ModelConfig(base=TINY, autocast_bf16=False, lora=None)
    model, tok = build(mcfg)
    save_checkpoint(model, tok, mcfg, tmp_path / "init")
    cfg = LoopConfig(**{**LOOP_PRESETS["cpu-tiny"], "init": str(tmp_path / "init"), "reward": "oracle", "workers": 2,
                        "fill": "train", "critic_lo": 0.999, "critic_hi": 1.0})  # a window no tiny critic reaches
    line = train(cfg, tmp_path / "run", progress=False)
    assert line["phase"] == 2 and "curriculum/generated" in line
    # --curriculum-fill train: what the critic window left short of a full phase are unused train tasks
    p1, p2 = (json.loads((tmp_path / "run" / f"phase-00{k}" / "tasks.json").read_text()) for k in (1, 2))
    fill = [t for t in p2 if t["extra"]["curriculum"]["how"] == "fill: train"]
    assert len(p2) == cfg.tasks_per_phase and line["curriculum/filled"] == len(fill) > 0
    assert line["curriculum/used"] - len(fill) == min(line["curriculum/kept"], cfg.tasks_per_phase)
    train_ids = {str(t.task_id) for t in load_split("train")}
    assert {str(t["task_id"]) for t in fill} <= train_ids - {str(t["task_id"]) for t in p1}
    for folder in ("phase-001/rollouts", "phase-002/rollouts", "phase-002/eval"):  # over 2 worker processes
        config = json.loads((tmp_path / "run" / folder / "config.json").read_text())
        assert config["workers"] == {"n": 2, "executor": "process"}, folder
        assert len((tmp_path / "run" / folder / "episodes.jsonl").read_text().splitlines()) == config["tasks"]
    actor = tmp_path / "run" / "phase-002" / "actor" / "final"
    assert (actor / "model.safetensors").exists() and not (actor / "adapter_config.json").exists()


def test_two_phases_with_a_critic_whose_backbone_is_trained(killed_run, tmp_path, capsys):
    """--critic-backbone lora: phase 1's critic is its own LoRA adapter (from π_ref's, trained with the
    head), saved as a checkpoint that phase 2's curriculum filter scores its candidates with; the
    actor's adapter is not the critic's."""
    from safetensors.torch import load_file

    from webrl.rl.loop import train

    _, sft, _ = killed_run
    cfg = LoopConfig(**{**LOOP_PRESETS["cpu-tiny"], "init": str(sft / "final"), "reward": "oracle",
                        "demos": str(sft / "demos.jsonl"), "critic_backbone": "lora", "critic_tune_epochs": 2})  # fmt: skip
    line = train(cfg, tmp_path / "run", progress=False)
    assert line["phase"] == 2 and "curriculum/generated" in line
    p1 = tmp_path / "run" / "phase-001"
    meta = json.loads((p1 / "critic" / "critic.json").read_text())
    assert meta["backbone"] == str(p1 / "critic" / "backbone")
    weights = [load_file(d / "adapter_model.safetensors") for d in (sft / "final", p1 / "critic" / "backbone",
                                                                    p1 / "actor" / "final")]  # fmt: skip
    assert set(weights[0]) == set(weights[1]) == set(weights[2])  # one adapter shape, three different weights
    for a, b in ((0, 1), (1, 2), (0, 2)):  # the critic trained, and so did the actor after it
        assert any(not torch.equal(weights[a][k], weights[b][k]) for k in weights[a]), (a, b)
    metrics = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert all(m["critic/tune_loss"] >= 0 for m in metrics if m.get("phase") in (1, 2) and "critic/loss" in m)
    tasks = json.loads((tmp_path / "run" / "phase-002" / "tasks.json").read_text())
    assert all(0.0 <= t["extra"]["critic_value"] <= 1.0 for t in tasks if "critic_value" in t["extra"])
    assert any("critic_value" in t["extra"] for t in tasks)
    from webrl.cli.train_cmds import check_inputs
    from webrl.models.build import build, save_checkpoint
    from webrl.models.config import TINY, ModelConfig

    full = ModelConfig(base=TINY, autocast_bf16=False, lora=None)  # a fully fine-tuned actor: refused up front
    save_checkpoint(*build(full), full, tmp_path / "full")
    with pytest.raises(ValueError, match="not a LoRA checkpoint"):
        check_inputs(replace(cfg, init=str(tmp_path / "full")))
    # `webrl study --configs all` from such an actor leaves critic_lora out (and says so) before it
    # checks the other configs' inputs (here: demonstrations that do not exist)
    args = ["study", "--out", str(tmp_path / "study"), "--init", str(tmp_path / "full"), "--configs", "all",
            "--demos", str(tmp_path / "none.jsonl")]  # fmt: skip
    assert main(args) == 2
    out = capsys.readouterr()
    assert "--configs all leaves critic_lora out" in out.out and "error: config webrl: --demos" in out.err


def test_resume_refuses_flags_that_would_change_the_saved_run(killed_run, capsys):
    """`--resume` continues with the saved train_config.json: a flag that differs from it is an error
    naming the field (it used to be ignored silently); a flag equal to the saved value is fine."""
    from webrl.cli.train_cmds import resume_conflicts

    run, _, _ = killed_run
    cfg = LoopConfig.from_json(json.loads((run / "train_config.json").read_text()))
    before = (run / "train_config.json").read_text()
    args = build_parser().parse_args(["train", "--run", str(run), "--resume", "--beta", "3", "--no-replay",
                                      "--lr", "0.5", "--seed", str(cfg.seed)])  # fmt: skip
    assert [c.split("=")[0] for c in resume_conflicts(args, cfg)] == ["beta", "train.lr", "replay"]
    same = build_parser().parse_args(["train", "--run", str(run), "--resume", "--seed", str(cfg.seed),
                                      "--beta", str(cfg.beta), "--lr", str(cfg.train.lr)])  # fmt: skip
    assert resume_conflicts(same, cfg) == []
    # a preset is a bundle of settings: the run's own (cpu-tiny) passes, another is named (it used to be ignored)
    tiny = build_parser().parse_args(["train", "--run", str(run), "--resume", "--preset", "cpu-tiny",
                                      "--lr", str(cfg.train.lr)])  # fmt: skip
    assert resume_conflicts(tiny, cfg) == []
    cpu = build_parser().parse_args(["train", "--run", str(run), "--resume", "--preset", "cpu"])
    assert resume_conflicts(cpu, cfg) == ["preset='cpu' (its tasks_per_phase, eval_subset, replay_sample, temperature, "
                                          "orm_threshold differ from the run's; --resume needs no --preset)"]
    assert main(["train", "--run", str(run), "--resume", "--beta", "3", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "beta=3.0" in err and f"the run has {cfg.beta!r}" in err and "start a new --run" in err
    assert (run / "train_config.json").read_text() == before
    assert main(["train", "--run", str(run), "--resume", "--no-kl", "--actor-loss", "eq6"]) == 2
    assert "contradicts --actor-loss eq6" in capsys.readouterr().err


def test_the_whole_split_start_and_final_evals(killed_run, tmp_path):
    """`final_eval` (on for the cpu and gpu presets, off for cpu-tiny): phase 0 evaluates the whole
    eval split, the phases a subset of it, and the final eval reuses the last phase's subset
    episodes (same actor, greedy) and runs the rest; the study reads the final eval as the result."""
    from webrl.eval.study import final_summary
    from webrl.rl.loop import train
    from webrl.tasks.schema import save_tasks

    _, sft, _ = killed_run
    split = tmp_path / "six.json"
    test = load_split("test")
    save_tasks([next(t for t in test if t.site == s) for s in ("shop", "forum", "map", "code", "admin", "cross")], split)
    cfg = LoopConfig(**{**LOOP_PRESETS["cpu-tiny"], "init": str(sft / "final"), "reward": "oracle",
                        "demos": str(sft / "demos.jsonl"), "phases": 1, "final_eval": True, "eval_split": str(split),
                        "eval_subset": 3, "eval_max_steps": 2})  # fmt: skip
    run = tmp_path / "run"
    train(cfg, run, progress=False)

    def eps(folder: str) -> dict:
        return {str(e["task_id"]): [s["response"] for s in e["steps"]] for e in read_jsonl(run / folder / "episodes.jsonl")}

    start, subset, final = eps("phase-000/eval"), eps("phase-001/eval"), eps("final/eval")
    assert len(start) == 6 and len(subset) == 3 and set(final) == set(start)
    assert all(final[k] == v for k, v in subset.items())  # the subset's episodes, reused as they were
    assert final_summary(run) == run / "final" / "eval" / "summary.json"
    assert json.loads((run / "final" / "eval" / "summary.json").read_text())["episodes"] == 6
    before = (run / "final" / "eval" / "episodes.jsonl").read_text()
    train(cfg, run, progress=False)  # finished: a no-op that leaves the final eval alone
    assert (run / "final" / "eval" / "episodes.jsonl").read_text() == before


def test_no_curriculum_draws_phase_2_from_the_train_split(killed_run, tmp_path):
    """`--no-curriculum` (the ablation): from phase 2 on the tasks are a fresh site-stratified draw
    of train-split tasks, not generated ones."""
    from webrl.tasks.schema import load_tasks

    src, sft, _ = killed_run
    run = tmp_path / "nocur"
    _phase_1_of(src, run, curriculum=False)
    done = train_cli(run, sft, None)
    assert done.returncode == 0, done.stderr[-3000:]
    train_ids = {str(t.task_id) for t in load_split("train")}
    tasks = load_tasks(run / "phase-002" / "tasks.json")
    assert tasks and all(str(t.task_id) in train_ids and "curriculum" not in t.extra for t in tasks)
    assert {str(t.task_id) for t in tasks} != {str(t.task_id) for t in load_tasks(run / "phase-001" / "tasks.json")}
    assert json.loads((run / "phase-002" / "stages.json").read_text())["tasks"]["curriculum/generated"] == 0
