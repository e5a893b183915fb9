"""SFT: demonstrations, examples (loss on the completion only), length bucketing, the
loop with checkpoints and resume, on the cpu-tiny preset."""

import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from safetensors.torch import load_file  # noqa: E402

from webrl.agent.prompt import PromptConfig  # noqa: E402
from webrl.models.config import preset  # noqa: E402
from webrl.models.training import Example, length_batches, lr_at, token_loss  # noqa: E402  # noqa: E402
from webrl.rl.demos import make_examples  # noqa: E402
from webrl.rl.sft import SFT_PRESETS, SFTConfig, select_tasks, train_sft  # noqa: E402
from webrl.tasks.schema import load_tasks  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    from webrl.models.build import build

    return build(preset("cpu-tiny"))


def test_length_batches_cover_everything_within_budget():
    lengths = [50 + (i * 37) % 400 for i in range(300)]
    batches = length_batches(lengths, 1000, seed=0)
    assert sorted(i for b in batches for i in b) == list(range(300))
    for b in batches:
        assert max(lengths[i] for i in b) * len(b) <= 1000
    padded = sum(max(lengths[i] for i in b) * len(b) for b in batches)
    assert sum(lengths) / padded > 0.9  # bucketing keeps padding low
    assert batches == length_batches(lengths, 1000, seed=0) != length_batches(lengths, 1000, seed=1)


def test_examples_put_the_loss_on_the_completion_only(tiny):
    _, tok = tiny
    demo = {"task_id": 1, "intent": "Open the cart.", "steps": [
        {"obs": "URL: http://h/shop/\nTitle: Shop\n<a id=1>Cart</a>", "response": '# Element: Cart\ndo(action="Click", element="1")'},
        {"obs": "URL: http://h/shop/cart\nTitle: Cart", "response": 'exit(message="done")'},
    ]}  # fmt: skip
    ex = make_examples([demo], tok, PromptConfig(), max_tokens=10_000)
    assert len(ex) == 2
    completion = tok.decode(list(ex[0].ids[ex[0].prompt_len :]))
    assert completion == '# Element: Cart\ndo(action="Click", element="1")<|im_end|>'
    second_prompt = tok.decode(list(ex[1].ids[: ex[1].prompt_len]))
    assert "URL: /shop/ [page omitted]" in second_prompt and 'element="1")' in second_prompt
    assert make_examples([demo], tok, PromptConfig(), max_tokens=5) == []
    assert isinstance(ex[0], Example) and ex[0].n_tokens == len(ex[0].ids)


def test_select_tasks_per_family_then_limit():
    from types import SimpleNamespace as T

    tasks = [T(task_id=i, family=f, site=s) for i, (f, s) in enumerate(
        [("a", "shop"), ("b", "map"), ("a", "shop"), ("a", "shop"), ("b", "map"), ("c", "shop")])]  # fmt: skip
    ids = lambda cfg: [t.task_id for t in select_tasks(tasks, cfg)]  # noqa: E731
    assert ids(SFTConfig()) == [0, 1, 2, 3, 4, 5]
    assert ids(SFTConfig(per_family=1)) == [0, 1, 5]
    assert ids(SFTConfig(per_family=2)) == [0, 1, 2, 4, 5]
    assert ids(SFTConfig(per_family=2, sites="shop", limit=2)) == [0, 2]


def test_family_siblings_are_held_out_tasks_of_the_same_families():
    from types import SimpleNamespace as T

    from webrl.tasks.splits import family_siblings

    tasks = [T(task_id=f"{s}{i}", site=s, family=f"{s}.f{i % 3}") for s, k in (("shop", 6), ("map", 3), ("code", 1))
             for i in range(k)]  # fmt: skip
    trained = [tasks[0], tasks[7]]  # shop.f0 and map.f1
    assert [t.task_id for t in family_siblings(trained, tasks, {"shop0", "map1"})] == ["shop3"]  # map.f1 has no other


def test_lr_schedule_warmup_cosine_and_time_budget():
    cfg = SFTConfig(lr=1.0, warmup_steps=2, min_lr_ratio=0.1)
    assert lr_at(cfg, 0, 10, 0) == pytest.approx(0.5)
    assert lr_at(cfg, 2, 10, 0) == pytest.approx(1.0)
    assert lr_at(cfg, 10, 10, 0) == pytest.approx(0.1)
    timed = replace(cfg, minutes=1.0)
    assert lr_at(timed, 3, 1000, 60.0) == pytest.approx(0.1)  # the budget is spent: end of schedule
    with pytest.raises(ValueError, match="max_batch_tokens"):
        SFTConfig(max_batch_tokens=100, max_seq_tokens=200)
    with pytest.raises(ValueError, match="clock"):
        SFTConfig(clock="sundial")


def _adapter(path):
    return load_file(str(path / "adapter_model.safetensors"))


def test_focal_token_loss_hand_checked():
    logp = torch.log(torch.tensor([0.5, 0.9])).requires_grad_()
    assert token_loss(logp).item() == pytest.approx((0.693147 + 0.105361) / 2, abs=1e-6)  # gamma 0: mean NLL
    loss = token_loss(logp, gamma=2.0)  # weights (1 - 0.5)^2 = 0.25 and (1 - 0.9)^2 = 0.01
    assert loss.item() == pytest.approx((0.25 * 0.693147 + 0.01 * 0.105361) / 2, abs=1e-6)
    loss.backward()  # the weight is a constant: d loss / d logp_t = -w_t / N
    assert logp.grad.tolist() == pytest.approx([-0.125, -0.005], abs=1e-6)
    with pytest.raises(ValueError, match="focal_gamma"):
        SFTConfig(focal_gamma=-1.0)


def test_step_weight_gives_every_example_of_an_epoch_the_same_weight(tmp_path):
    from webrl.models.training import TrainConfig, fit, step_weight

    assert step_weight(1, 4, 2) == 0.5 and step_weight(3, 4, 2) == 1.5  # 0.5 per example in both batches
    assert step_weight(2, 6, 3) == 1.0  # equal batches: unscaled

    # through `fit` on a real tiny model: a loss_fn's batch mean reaches backward scaled by step_weight
    from webrl.models.build import build
    from webrl.rl.actor import row_logprobs

    model, tok = build(preset("cpu-tiny"))
    examples = [Example(tuple(range(5, 85)), 70, "long")] + [Example(tuple(range(5, 25)), 15, f"s{i}") for i in range(3)]
    seen = []

    def loss_fn(model, batch, input_ids, mask, labels, full_forward):
        loss = -row_logprobs(model, input_ids, mask, labels, full_forward).mean()
        loss.register_hook(lambda g: seen.append((len(batch), round(g.item(), 6))))  # d(backward's loss)/d(mean)
        return loss, {}

    cfg = TrainConfig(max_steps=2, max_batch_tokens=80, max_seq_tokens=80, warmup_steps=0, save_minutes=100.0, log_every=1)
    fit(examples, cfg, model, tok, preset("cpu-tiny"), tmp_path / "fit", "actor", {}, progress=False, loss_fn=loss_fn)
    assert sorted(seen) == [(1, 0.5), (3, 1.5)]  # 2 batches, 4 examples: each example weighs 0.5


def test_a_time_budget_becomes_a_step_count_that_reproduces_the_run(tmp_path):
    """`fit` turns `minutes` into a step count at the end of warmup (plan.json); training that many
    steps without a budget, from the same start, ends with the same weights."""
    from webrl.models.build import build
    from webrl.models.training import TrainConfig, fit

    model, tok = build(preset("cpu-tiny"))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    examples = [Example(tuple(range(5, 25 + i)), 15, f"e{i}") for i in range(8)]
    cfg = TrainConfig(epochs=50.0, minutes=0.03, warmup_steps=2, max_batch_tokens=80, max_seq_tokens=80,
                      save_minutes=100.0, log_every=1)  # fmt: skip
    torch.manual_seed(0)
    line = fit(examples, cfg, model, tok, preset("cpu-tiny"), tmp_path / "budget", "sft", {}, progress=False)
    plan = json.loads((tmp_path / "budget" / "plan.json").read_text())
    n = plan["planned_steps"]
    assert plan["after_steps"] == 2 and line["planned_steps"] == n == line["step"] and n >= 2
    budget_run = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(start)
    torch.manual_seed(0)
    line = fit(examples, replace(cfg, minutes=0.0, max_steps=n), model, tok, preset("cpu-tiny"), tmp_path / "steps",
               "sft", {}, progress=False)  # fmt: skip
    assert line["step"] == n and "planned_steps" not in line
    assert all(torch.equal(v, budget_run[k]) for k, v in model.state_dict().items())


def test_sft_runs_checkpoints_and_resumes_exactly(tmp_path):
    cfg = replace(SFT_PRESETS["cpu-tiny"], limit=2, sites="shop", max_steps=3, save_minutes=0.0)
    torch.set_num_threads(1)
    line = train_sft(cfg, preset("cpu-tiny"), tmp_path / "a", progress=False)
    a = tmp_path / "a"
    assert line["step"] == 3 and (a / "final" / "adapter_model.safetensors").exists()
    assert (a / "final" / "prompt_config.json").exists() and (a / "final" / "webrl_model.json").exists()
    metrics = [json.loads(x) for x in (a / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3]
    assert all(m["losses/sft"] > 0 and 0 < m["charts/padding"] <= 1 for m in metrics)
    demos = [json.loads(x) for x in (a / "demos.jsonl").read_text().splitlines()]
    assert len(demos) == 2 and any(s["response"].startswith("# Element:") for d in demos for s in d["steps"])
    trained = load_tasks(a / "trained_tasks.json")  # the 2 tasks trained on; held-out: same families, not trained on
    assert [t.task_id for t in trained] == [d["task_id"] for d in demos]
    heldout = load_tasks(a / "heldout_tasks.json")
    assert {t.family for t in heldout} <= {t.family for t in trained}
    assert not {t.task_id for t in heldout} & {t.task_id for t in trained}

    # a run killed after step 2 resumes from ckpt-2 and ends where the uninterrupted one did
    b = tmp_path / "b"
    b.mkdir()
    for name in ("demos.jsonl", "sft_config.json", "ckpt-2"):
        src = a / name
        if src.is_dir():
            import shutil

            shutil.copytree(src, b / name)
        else:
            (b / name).write_bytes(src.read_bytes())
    saved = json.loads((b / "sft_config.json").read_text())
    del saved["detach_context"]  # written by an older version, before that setting existed: still resumes
    (b / "sft_config.json").write_text(json.dumps(saved))
    line_b = train_sft(cfg, preset("cpu-tiny"), b, progress=False)
    assert line_b["step"] == 3
    wa, wb = _adapter(a / "final"), _adapter(b / "final")
    assert all(torch.allclose(wa[k], wb[k], atol=1e-6) for k in wa)
    with pytest.raises(ValueError, match=r"different sft_config.json \(lr\)"):
        train_sft(replace(cfg, lr=0.5), preset("cpu-tiny"), b, progress=False)


def test_sft_cli_prompt_and_lora_flags_reach_the_checkpoint(tmp_path, capsys):
    from webrl.cli.main import main

    out = tmp_path / "s"
    args = ["sft", "--preset", "cpu-tiny", "--limit", "2", "--sites", "shop", "--max-steps", "2", "--out", str(out),
            "--top-layers", "1", "--max-rounds", "2", "--max-prompt-tokens", "900", "--recap", "--detach-context",
            "--focal-gamma", "2", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    assert "context run without autograd" in capsys.readouterr().out
    saved = json.loads((out / "sft_config.json").read_text())
    assert saved["detach_context"] is True and saved["focal_gamma"] == 2.0
    for m in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()):
        assert 0 < m["losses/sft_focal"] < m["losses/sft"]  # (1 - p)^2 < 1: the focal loss is the smaller
    prompt = json.loads((out / "final" / "prompt_config.json").read_text())
    assert prompt["max_rounds"] == 2 and prompt["max_prompt_tokens"] == 900 and prompt["recap"] is True
    assert json.loads((out / "final" / "webrl_model.json").read_text())["lora"]["top_layers"] == 1
    assert all(".layers.1." in k for k in _adapter(out / "final"))  # cpu-tiny has 2 layers: the top one only
    assert main(["sft", "--preset", "gpu", "--out", str(tmp_path / "g"), "--top-layers", "2"]) == 2


def test_epoch_batches_cover_each_epoch_once_when_epochs_differ_in_batch_count():
    from webrl.models.training import EpochBatches

    lengths = [40 + (i * 53) % 300 for i in range(90)]
    counts = [len(length_batches(lengths, 500, seed)) for seed in range(6)]
    assert len(set(counts)) > 1  # the case that broke the old step -> (epoch, k) arithmetic
    sched = EpochBatches(lengths, 500, seed=0)
    step = 0
    for epoch in range(6):
        seen = []
        for _ in range(counts[epoch]):
            seen += sched.at(step)
            step += 1
        assert sorted(seen) == list(range(90)) and sched.epoch == epoch
    assert EpochBatches(lengths, 500, seed=0).at(step - 1) == sched.at(step - 1)  # a resumed run agrees
    assert sched.at(0) == length_batches(lengths, 500, 0)[0]


def test_demo_match_report_hand_checked():
    from webrl.eval.demo_match import match_report

    rows = [{"task_id": 1, "family": "shop.a", "step": 0, "target": "A"},
            {"task_id": 1, "family": "shop.a", "step": 1, "target": "B"},
            {"task_id": 2, "family": "shop.b", "step": 0, "target": "C"}]  # fmt: skip
    rep = match_report(rows, ["A\ndo(x)", "  B  ", 'D\ndo(action="Click", element="1")\nmore'])
    # "A\ndo(x)" has no complete action line, so it is compared whole: a miss; "  B  " matches once stripped
    assert rep["overall"] == {"match": round(1 / 3, 4), "steps": 3}
    assert rep["per_step"] == {"0": {"match": 0.0, "steps": 2}, "1": {"match": 1.0, "steps": 1}}
    assert rep["per_family"]["shop.a"] == {"match": 0.5, "steps": 2}
    assert [m["task_id"] for m in rep["mismatches"]] == [1, 2] and rep["mismatches"][1]["response"].startswith("D")
    with pytest.raises(ValueError, match="2 responses for 3"):
        match_report(rows, ["A", "B"])


def test_fit_summary_hand_checked():
    from webrl.eval.demo_match import fit_summary

    rows = [{"task_id": 1, "family": "f", "step": 0}, {"task_id": 1, "family": "f", "step": 1},
            {"task_id": 2, "family": "g", "step": 0}]  # fmt: skip
    lps = [[-0.1, -1.0, -0.1], [-0.01, -0.01], [-2.0]]  # response NLLs 1.2, 0.02, 2.0; 6 tokens
    toks = [["a", "Write", "b"], ["c", "d"], ["exit"]]
    f = fit_summary(rows, lps, toks, worst=2)
    assert f["steps"] == 3 and f["mean_token_nll"] == pytest.approx(3.22 / 6, abs=1e-4)
    assert f["mean_response_nll"] == pytest.approx(3.22 / 3, abs=1e-4)
    assert f["p_response_over_half"] == pytest.approx(1 / 3, abs=1e-4)  # only exp(-0.02) > 0.5
    assert f["worst_token_share"] == pytest.approx((1.0 / 1.2 + 0.5 + 1.0) / 3, abs=1e-4)
    assert [(w["token"], w["nll"]) for w in f["worst_tokens"]] == [("exit", 2.0), ("Write", 1.0)]
    with pytest.raises(ValueError, match="2 scored responses for 3"):
        fit_summary(rows, lps[:2], toks[:2])


def test_eval_demos_cli_on_an_sft_run(tmp_path, capsys):
    from webrl.cli.main import main

    run = tmp_path / "s"
    assert main(["sft", "--preset", "cpu-tiny", "--limit", "2", "--sites", "shop", "--max-steps", "1",
                 "--out", str(run), "--no-progress"]) == 0  # fmt: skip
    demos = [json.loads(x) for x in (run / "demos.jsonl").read_text().splitlines()]
    out = tmp_path / "m.json"
    assert main(["eval-demos", "--agent", str(run / "final"), "--demos", str(run / "demos.jsonl"),
                 "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    rep = json.loads(out.read_text())
    assert rep["overall"]["steps"] == sum(len(d["steps"]) for d in demos) and rep["tasks"] == 2
    assert sum(v["steps"] for v in rep["per_step"].values()) == rep["overall"]["steps"]
    fit = rep["fit"]  # the demonstrated responses scored: an untrained tiny model finds them unlikely
    assert fit["steps"] == rep["overall"]["steps"] and fit["mean_response_nll"] > fit["mean_token_nll"] > 0
    assert 0 < fit["worst_token_share"] <= 1 and fit["worst_tokens"][0]["nll"] >= fit["worst_tokens"][-1]["nll"]
    out_text = capsys.readouterr().out
    assert "demonstration steps" in out_text and "teacher-forced: NLL" in out_text
    one = tmp_path / "one.json"
    one.write_text(json.dumps([{"task_id": demos[1]["task_id"]}]))
    assert main(["eval-demos", "--agent", str(run / "final"), "--demos", str(run / "demos.jsonl"), "--tasks", str(one),
                 "--no-fit", "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    rep = json.loads(out.read_text())
    assert rep["tasks"] == 1 and rep["overall"]["steps"] == len(demos[1]["steps"]) and "fit" not in rep
    one.write_text(json.dumps([{"task_id": -5}]))
    assert main(["eval-demos", "--agent", str(run / "final"), "--demos", str(run / "demos.jsonl"), "--tasks", str(one)]) == 2
    assert "no demonstration" in capsys.readouterr().err
    assert main(["eval-demos", "--agent", str(run / "final"), "--demos", str(tmp_path / "none.jsonl")]) == 2
    (tmp_path / "bad.jsonl").write_text('{"x": 1}\n')
    assert main(["eval-demos", "--agent", str(run / "final"), "--demos", str(tmp_path / "bad.jsonl")]) == 2
    assert "line 1 is not a demonstration" in capsys.readouterr().err
