"""Critic scorer and value head, actor loss functions, and the curriculum generators/filters."""

import random
import string
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from webrl.models.critic import Step, ValueHead, load_critic, save_critic, score_steps, values  # noqa: E402
from webrl.models.scoring import IGNORE, selected_logprobs  # noqa: E402
from webrl.rl.actor import ACTOR_LOSSES, RLExample, make_loss_fn, row_logprobs  # noqa: E402
from webrl.rl.critic import train_value_head  # noqa: E402
from webrl.rl.curriculum import (  # noqa: E402
    CONSTRAINT_PAIRS,
    constraint_partners,
    feasible,
    llm_candidates,
    offline_generate,
    out_of_reach,
    parse_instructions,
    rephrase,
    site_phrase,
    site_text,
)
from webrl.rl.loop_config import METRICS  # noqa: E402
from webrl.sites.world import WorldApp  # noqa: E402
from webrl.tasks.family import SeedDB  # noqa: E402
from webrl.tasks.registry import families as families_registry  # noqa: E402
from webrl.tasks.splits import load_split  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    from webrl.models.build import build
    from webrl.models.config import preset

    return build(preset("cpu-tiny"))


def _pack(tok, pairs):
    seqs = [tok(p).input_ids + tok(a).input_ids for p, a in pairs]
    T = max(map(len, seqs))
    ids = torch.full((len(seqs), T), tok.pad_token_id)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, IGNORE)
    for r, ((p, _), s) in enumerate(zip(pairs, seqs, strict=True)):
        ids[r, : len(s)] = torch.tensor(s)
        mask[r, : len(s)] = 1
        n = len(tok(p).input_ids)
        labels[r, n : len(s)] = torch.tensor(s[n:])
    return ids, mask, labels


PAIRS = [("Task: open the cart", 'do(action="Click", element="4")'), ("Task: price?", 'exit(message="$3")')]


def test_score_steps_matches_teacher_forcing(tiny):
    model, tok = tiny
    steps = [Step(tuple(tok(p).input_ids), tuple(tok(a).input_ids)) for p, a in PAIRS]
    feats, logp, n = score_steps(model, steps, tok.pad_token_id)
    ids, mask, labels = _pack(tok, PAIRS)
    with torch.no_grad():
        rows = row_logprobs(model, ids, mask, labels, False)
    assert logp == pytest.approx(rows, abs=1e-4)
    assert n.tolist() == [len(s.action_ids) for s in steps] and feats.shape == (2, model.config.hidden_size)
    alone, _, _ = score_steps(model, steps[:1], tok.pad_token_id)
    assert torch.allclose(alone[0], feats[0], atol=1e-4)  # padding in the batch changes nothing


def test_value_head_learns_and_roundtrips(tmp_path):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 16, generator=g)
    y = (x[:, 0] > 0).float()
    head = ValueHead(16, width=32)
    losses = train_value_head(head, x, y, epochs=60, lr=1e-2)
    assert losses[-1] < 0.5 * losses[0]
    v = values(head, x)
    assert ((v > 0.5).float() == y).float().mean() > 0.9
    save_critic(head, "runs/x/actor", tmp_path / "c")
    head2, backbone = load_critic(tmp_path / "c")
    assert backbone == "runs/x/actor" and torch.allclose(values(head2, x), v)


def test_tune_critic_trains_its_adapter_and_head_and_nothing_else():
    """critic_backbone lora: eq. 8 through the backbone lowers the BCE the warm head reached on frozen
    features, and changes only the critic adapter and the head (the actor's adapter "default", which
    the tiny model carries, and the base stay; the actor's adapter is active and trainable after)."""
    from webrl.models.build import build
    from webrl.models.config import LoraSpec, preset
    from webrl.models.lora import attach_lora, use_adapter
    from webrl.rl.critic import tune_critic

    model, tok = build(preset("cpu-tiny"))
    attach_lora(model, LoraSpec(r=4, alpha=8), "critic")
    words = ["cart", "order", "price", "review", "forum", "issue", "map", "note"]
    pairs = [(a, b) for a in words for b in words]
    prompts = [tuple(tok(f"task {a} then {b}", add_special_tokens=False)["input_ids"]) for a, b in pairs]
    y = torch.tensor([float((words.index(a) + words.index(b)) % 2) for a, b in pairs])  # a parity of two words
    steps = [Step(p, ()) for p in prompts]
    before = {n: p.detach().clone() for n, p in model.named_parameters() if ".critic." not in n}
    with use_adapter(model, "critic"):
        feats, _, _ = score_steps(model, steps, tok.pad_token_id)
        head = ValueHead(feats.shape[1], width=32)
        train_value_head(head, feats, y, epochs=10, lr=1e-2)
        warm = torch.nn.functional.binary_cross_entropy(values(head, feats), y).item()
        losses = tune_critic(model, head, prompts, y, tok.pad_token_id, epochs=8, lr=3e-3, head_lr=3e-3,
                             max_batch_tokens=256)  # fmt: skip
        feats2, _, _ = score_steps(model, steps, tok.pad_token_id)
    assert model.active_adapter == "default"  # the actor's adapter is active and trainable again
    assert all(p.requires_grad for n, p in model.named_parameters() if ".default." in n)
    assert not any(p.requires_grad for n, p in model.named_parameters() if ".critic." in n)
    tuned = torch.nn.functional.binary_cross_entropy(values(head, feats2), y).item()
    assert len(losses) == 8 and losses[-1] < losses[0] and tuned < 0.8 * warm, (warm, tuned, losses)
    assert not torch.allclose(feats, feats2)  # the backbone moved ...
    for n, p in model.named_parameters():  # ... through the critic adapter only
        if ".critic." not in n:
            assert torch.equal(p, before[n]), n
    assert any(".critic." in n and p.abs().sum() > 0 for n, p in model.named_parameters() if "lora_B" in n)
    with pytest.raises(ValueError, match="no trainable parameters"):
        tune_critic(model.get_base_model().requires_grad_(False), head, prompts, y, tok.pad_token_id)


def test_actor_loss_functions(tiny):
    model, tok = tiny
    ids, mask, labels = _pack(tok, PAIRS)
    with torch.no_grad():
        rows = row_logprobs(model, ids, mask, labels, False)
    assert rows.sum().item() == pytest.approx(selected_logprobs(model, ids, mask, labels).sum().item(), abs=1e-4)
    n_prompt = [len(tok(p).input_ids) for p, _ in PAIRS]
    # A = β·log-ratio exactly (ref = current model, A = 0): eq. 6 is 0 and so is its gradient
    batch = [RLExample(tuple(ids[r][: int(mask[r].sum())].tolist()), n_prompt[r], r, advantage=0.0,
                       ref_logp=float(rows[r])) for r in range(2)]  # fmt: skip
    loss, info = make_loss_fn("eq6", beta=1.0)(model, batch, ids, mask, labels, False)
    assert loss.item() == pytest.approx(0.0, abs=1e-6) and info["actor/kl"] == pytest.approx(0.0, abs=1e-5)
    loss, _ = make_loss_fn("eq6", beta=0.5)(model, [RLExample(b.ids, b.prompt_len, 0, advantage=1.0,
                                                              ref_logp=b.ref_logp) for b in batch], ids, mask, labels, False)  # fmt: skip
    assert loss.item() == pytest.approx(1.0, abs=1e-5)  # (0.5·0 − 1)²
    sft, _ = make_loss_fn("sft", beta=1.0)(model, batch, ids, mask, labels, False)
    n_act = torch.tensor([len(tok(a).input_ids) for _, a in PAIRS], dtype=torch.float32)
    assert sft.item() == pytest.approx(-(rows / n_act).mean().item(), abs=1e-4)
    rel, info = make_loss_fn("released", beta=1.0)(model, batch, ids, mask, labels, False)
    assert torch.isfinite(rel) and "actor/beta" in info
    for kind in ACTOR_LOSSES:  # every name a loss logs is documented in METRICS (docs/method.md)
        _, info = make_loss_fn(kind, beta=1.0)(model, batch, ids, mask, labels, False)
        assert set(info) <= set(METRICS), (kind, set(info) - set(METRICS))
    with pytest.raises(ValueError, match="unknown actor loss"):
        make_loss_fn("ppo", 1.0)


def test_offline_generator_grows_in_breadth_and_never_emits_test_tasks():
    train = load_split("train")
    seeds = [t for t in train if t.site == "shop"][:5] + [t for t in train if t.site == "map"][:3]
    test_intents = {t.intent for t in load_split("test")}
    db = SeedDB(WorldApp().store.snapshot)
    out = offline_generate(seeds, db, 40, seed=3, exclude=test_intents | {t.intent for t in seeds}, prefix="p2-")
    assert len(out) == 40
    intents = [t.intent for t, _ in out]
    assert len(set(intents)) == 40 and not set(intents) & test_intents
    assert not set(intents) & {t.intent for t in seeds}
    hows = {how["how"] for _, how in out}
    assert hows == {"same-family", "sibling"}
    families = {t.family: t for t in train}
    for task, how in out:
        seed = next(s for s in seeds if s.task_id == how["seed_task"])
        assert task.site == seed.site  # same site ...
        if how["how"] == "sibling":
            assert families[task.family].intent_template_id != seed.intent_template_id
        assert str(task.task_id).startswith("p2-")
    again = offline_generate(seeds, db, 40, seed=3, exclude=test_intents | {t.intent for t in seeds}, prefix="p2-")
    assert [t.intent for t, _ in again] == intents  # deterministic


def test_offline_generator_rephrases_when_asked():
    """`rephrase_share`: the same tasks (evaluator, slots) in other words; off by default, and then
    the generator's draws are those of the runs made before it."""
    train = load_split("train")
    seeds = [t for t in train if t.site == "shop"][:5] + [t for t in train if t.site == "forum"][:3]
    test_intents = {t.intent for t in load_split("test")}
    db = SeedDB(WorldApp().store.snapshot)
    plain = offline_generate(seeds, db, 24, seed=3, exclude=set(test_intents), prefix="p2-")
    words = offline_generate(seeds, db, 24, seed=3, exclude=set(test_intents), prefix="p2-", rephrase_share=1.0)
    again = offline_generate(seeds, db, 24, seed=3, exclude=set(test_intents), prefix="p2-", rephrase_share=1.0)
    assert [t.intent for t, _ in words] == [t.intent for t, _ in again]  # deterministic
    said = [(t, how) for t, how in words if how["how"].endswith(", rephrased")]
    assert len(said) >= 8 and not {t.intent for t, _ in words} & test_intents
    for t, _ in said:
        original = t.extra["original_intent"]
        assert t.intent != original and t.intent.split()[-1].rstrip(".?") == original.split()[-1].rstrip(".?")
        assert t.eval["eval_types"] and t.eval["eval_types"] != ["orm"]  # its family's evaluator, kept
    assert rephrase("What is the price of Blue Mug?", random.Random(0)) in ("Tell me the price of Blue Mug.",
                                                                           "Find out the price of Blue Mug.")  # fmt: skip
    assert rephrase("Open the cart page", random.Random(0)) in ("Go to the cart page", "Navigate to the cart page")
    assert rephrase("Rate the mug", random.Random(0)) is None
    assert plain == offline_generate(seeds, db, 24, seed=3, exclude=set(test_intents), prefix="p2-", rephrase_share=0.0)


def test_offline_generator_adds_and_removes_constraints_when_asked():
    """`constraint_share`: from a seed whose family has a partner one constraint narrower or broader
    (CONSTRAINT_PAIRS), tasks of that partner; off by default, and then the draws of the runs before it."""
    fams = families_registry()
    for broad, narrow in CONSTRAINT_PAIRS:  # the table names real families; the narrow one keeps every slot
        slots = [{f for _, f, _, _ in string.Formatter().parse(fams[x].template) if f} for x in (broad, narrow)]
        assert fams[broad].sites == fams[narrow].sites and slots[0] < slots[1], (broad, narrow)
    assert constraint_partners("shop.open_category") == [("shop.category_sorted", "added constraint")]
    assert constraint_partners("map.save_with_note") == [("map.save_place", "removed constraint")]
    assert constraint_partners("shop.product_price") == []
    train = load_split("train")
    by_family = {t.family: t for t in train}
    seeds = [by_family[f] for f in ("shop.open_category", "forum.post_and_comment", "code.fork_project", "shop.product_price")]
    test_intents = {t.intent for t in load_split("test")}
    db = SeedDB(WorldApp().store.snapshot)
    plain = offline_generate(seeds, db, 16, seed=5, exclude=set(test_intents), prefix="p2-")
    out = offline_generate(seeds, db, 16, seed=5, exclude=set(test_intents), prefix="p2-", constraint_share=1.0)
    assert len(out) == 16 and not {t.intent for t, _ in out} & test_intents
    seed_family = {s.task_id: s.family for s in seeds}
    for task, how in out:
        partners = dict(constraint_partners(seed_family[how["seed_task"]]))
        if partners:  # every seed with a partner gave its partner's tasks
            assert how["how"] == partners[task.family], (task.family, how)
        else:
            assert how["how"] in ("same-family", "sibling")
    assert {how["how"] for _, how in out} >= {"added constraint", "removed constraint"}
    assert "sorted by" in next(t.intent for t, _ in out if t.family == "shop.category_sorted")
    assert plain == offline_generate(seeds, db, 16, seed=5, exclude=set(test_intents), prefix="p2-", constraint_share=0.0)


def test_llm_reply_parsing_and_feasibility_rule():
    reply = '1. Find the price of "Blue Mug".\n- Show my orders\n\n2) x\n* Show my orders\n"Open the cart page"'
    assert parse_instructions(reply, 10) == ['Find the price of "Blue Mug".', "Show my orders", "Open the cart page"]
    assert parse_instructions(reply, 1) == ['Find the price of "Blue Mug".']
    assert parse_instructions('3. Show the price of "Blue Mug"\n"Rate "Red Cup" 5 stars"', 5) == [
        'Show the price of "Blue Mug"', 'Rate "Red Cup" 5 stars']  # fmt: skip
    site = "blue mug\nred cup\n000189"
    task = load_split("train")[0]
    assert feasible(replace(task, intent='What does "Blue Mug" cost?'), site)
    assert not feasible(replace(task, intent='What does "Green Teapot" cost?'), site)
    assert feasible(replace(task, intent="Show order #000189"), site)
    assert not feasible(replace(task, intent="Show order #000777"), site)
    assert not feasible(replace(task, intent=" "), site)
    # what no site here can do: dropped, whatever it quotes; no train or test task is caught by the rule
    assert not feasible(replace(task, intent='Email the seller of "Blue Mug" about shipping'), site)
    assert not feasible(replace(task, intent='Download the invoice of order #000189'), site)
    assert not feasible(replace(task, intent='Find "Red Cup" on Amazon and compare'), site)
    assert out_of_reach("Send an e-mail to the store") == "send an e-mail"
    assert out_of_reach("What is the email of customer Ann Lee?") is None  # reading data is fine
    assert [t.intent for t in load_split("train") + load_split("test") if out_of_reach(t.intent)] == []


class ScriptedLLM:
    """A text policy that answers the curriculum prompt with fixed lines, keyed by the site names
    the prompt gives (the prompt and the parsing are what is under test, not a model)."""

    def __init__(self, replies: dict[str, str]):
        self.replies, self.prompts = replies, []

    def generate(self, prompts, params):
        from types import SimpleNamespace

        self.prompts += prompts
        return [SimpleNamespace(text=next(r for k, r in self.replies.items() if k in p)) for p in prompts]


def test_the_feasibility_judge_keeps_only_a_clear_yes():
    from webrl.agent.local_policy import Generation
    from webrl.rl.curriculum import JUDGE_PROMPT, judge_feasible, judge_verdict

    assert [judge_verdict(x) for x in ("YES", " yes.", "No, it cannot", "**NO**", "Maybe", "", "Yesterday")] == [
        True, True, False, False, None, None, None]  # fmt: skip

    class Judge:  # answers from the task line only; records what it was asked
        def __init__(self):
            self.prompts = []

        def generate(self, prompts, params=None):
            self.prompts += prompts
            replies = {"a": "YES", "b": "No.", "c": "I think so"}
            return [Generation(replies[p.split("Task: ")[1][0]], [], [], "stop", 0) for p in prompts]

    train = load_split("train")
    shop = [t for t in train if t.site == "shop"][:7]
    forum = [t for t in train if t.site == "forum"][:1]
    cands = [(replace(shop[0], intent=x, task_id=f"l{i}"), {}) for i, x in enumerate(("a task", "b task", "c task"))]
    cands.append((replace(forum[0], intent="a forum task", task_id="l3"), {}))
    judge = Judge()
    assert judge_feasible(cands, judge, shop + forum) == [True, False, False, True]
    assert judge_feasible([], judge, shop) == []
    first = judge.prompts[0]
    assert first.startswith(JUDGE_PROMPT.split("{site}")[0]) and 'the site "shop"' in first
    assert sum(f"- {t.intent}" in first for t in shop) == 5 and forum[0].intent not in first  # its site's examples
    assert forum[0].intent in judge.prompts[3] and first.rstrip().endswith("Answer:")


def test_llm_candidates_check_a_cross_site_task_against_all_its_sites():
    """A cross-site seed (map + forum) once crashed the LLM generator's feasibility filter (it looked
    up a database named "cross"): its tasks are now checked against the union of their sites' data."""
    train = load_split("train")
    cross = [t for t in train if tuple(t.sites) == ("map", "forum")][:2]
    shop = [t for t in train if t.site == "shop"][:1]
    db = SeedDB(WorldApp().store.snapshot)
    place = db["map"].execute("SELECT name FROM places ORDER BY id LIMIT 1").fetchone()[0]
    title = db["forum"].execute("SELECT title FROM posts ORDER BY id LIMIT 1").fetchone()[0]
    assert place.lower() not in site_text(db["forum"]) and place.lower() not in site_text(db["shop"])
    llm = ScriptedLLM({'"map" and "forum"': f'1. Find "{place}" and post about it in "{title}"\n2. Find "Zyxx Quuble Bakery"',
                       'site "shop"': f'- Buy a gift card for "{place}"\n- Show my orders'})  # fmt: skip
    cands, ok = llm_candidates(cross + shop, llm, db, 4, exclude=set(), prefix="p2-")
    assert llm.prompts[0].startswith('You write tasks for a web agent that uses the sites "map" and "forum".')
    assert [t.intent for t, _ in cands] == [f'Find "{place}" and post about it in "{title}"', 'Find "Zyxx Quuble Bakery"',
                                            f'Buy a gift card for "{place}"', "Show my orders"]  # fmt: skip
    assert [t.intent for t, _ in ok] == [cands[0][0].intent, "Show my orders"]  # the place is not the shop's
    assert [t.sites for t, _ in cands] == [cross[0].sites, cross[1].sites, shop[0].sites, shop[0].sites]
    assert all(t.eval == {"eval_types": ["orm"]} and str(t.task_id).startswith("p2-") for t, _ in cands)
    assert site_phrase(("shopping",)) == 'the site "shop"'


def test_llm_candidates_over_a_real_server(tiny):
    """The `--generator URL` path end to end: `webrl serve-model`'s server and `OpenAIPolicy` with
    cross-site seeds (a from-scratch tiny model writes noise; nothing may crash on it)."""
    from webrl.agent.local_policy import LocalPolicy
    from webrl.agent.openai_policy import OpenAIPolicy
    from webrl.agent.server import ModelServer

    model, tok = tiny
    train = load_split("train")
    seeds = [t for t in train if t.site == "cross"][:3] + [t for t in train if t.site == "code"][:2]
    server = ModelServer(LocalPolicy(model, tok), "tiny", port=0).start()
    try:
        cands, ok = llm_candidates(seeds, OpenAIPolicy(server.url, tokenizer=tok), SeedDB(WorldApp().store.snapshot), 6,
                                   exclude=set())  # fmt: skip
    finally:
        server.close()
    assert {t.task_id for t, _ in ok} <= {t.task_id for t, _ in cands}
    assert all(t.sites in [s.sites for s in seeds] for t, _ in cands)


def test_a_generator_is_offline_or_a_url():
    from webrl.rl.loop_config import LoopConfig

    LoopConfig(init="x", reward="oracle", generator="http://127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match="generator must be 'offline' or an OpenAI-compatible URL"):
        LoopConfig(init="x", reward="oracle", generator="ofline")


def test_baseline_methods_select_steps_and_weight_them(tiny):
    from webrl.rl.actor import METHODS, method_examples

    ex = [RLExample((1, 2, 3), 2, 0, advantage=a, mc_return=r) for a, r in ((0.4, 1.0), (-0.3, 1.0), (0.2, 0.0))]
    assert method_examples("filtered_bc", ex) == ex[:2]  # steps of successful trajectories
    assert method_examples("digirl", ex) == [ex[0], ex[2]]  # step-level filter A > 0
    assert method_examples("webrl", ex) == method_examples("awr", ex) == ex
    assert METHODS == {"webrl": "eq6", "filtered_bc": "sft", "awr": "awr", "digirl": "awr", "sft": "sft"}
    assert method_examples("sft", ex, "sft") == ex[:2]  # its demonstration steps carry mc_return 1 (loop.py)
    # --no-kl (the sft loss on any method) is SFT on the buffer: the failed trajectory's step is not trained
    assert method_examples("webrl", ex, "sft") == ex[:2] and method_examples("webrl", ex, "eq6") == ex
    assert method_examples("filtered_bc", ex, "eq6") == ex[:2]
    model, tok = tiny
    ids, mask, labels = _pack(tok, PAIRS)
    with torch.no_grad():
        rows = row_logprobs(model, ids, mask, labels, False)
    n_prompt = [len(tok(p).input_ids) for p, _ in PAIRS]
    batch = [RLExample(tuple(ids[r][: int(mask[r].sum())].tolist()), n_prompt[r], r, advantage=[0.5, -0.5][r])
             for r in range(2)]  # fmt: skip
    loss, info = make_loss_fn("awr", 1.0, awr_temperature=0.5)(model, batch, ids, mask, labels, False)
    n_act = torch.tensor([len(tok(a).input_ids) for _, a in PAIRS], dtype=torch.float32)
    w = torch.exp(torch.tensor([1.0, -1.0]))  # exp(A / 0.5)
    assert loss.item() == pytest.approx(-(w * rows / n_act).mean().item(), abs=1e-4)
    assert info["actor/weight"] == pytest.approx(w.mean().item(), abs=1e-4)


def test_critic_fits_on_policy_steps_unless_told_to_add_replay():
    from webrl.rl.critic import critic_targets

    # 3 new steps (a failed 2-step episode, a successful 1-step one); replay steps 0 and 2 kept
    idx, y = critic_targets([0.0, 0.0, 1.0], [0, 2], with_replay=False)
    assert idx == [0, 1, 2] and y.tolist() == [0.0, 0.0, 1.0]
    idx, y = critic_targets([0.0, 0.0, 1.0], [0, 2], with_replay=True)
    assert idx == [0, 1, 2, 3, 5] and y.tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]
    idx, y = critic_targets([], [1], with_replay=False)
    assert idx == [] and y.numel() == 0


def _episode(intent: str, responses: list[str], reward: float, phase: int | None = None) -> dict:
    ep = {"intent": intent, "reward": reward, "success": reward > 0,
          "steps": [{"obs": f"page {i} of {intent}", "response": r} for i, r in enumerate(responses)]}  # fmt: skip
    return ep if phase is None else {**ep, "phase": phase}


def test_demo_sample_takes_whole_demonstrations_until_the_step_budget():
    from webrl.rl.replay import demo_sample

    demos = [_episode(f"demo {k}", ["a"] * (k + 1), 1.0, phase=0) for k in range(4)]  # 1+2+3+4 steps
    buffer = demos + [_episode("won in phase 1", ["b", "c"], 1.0, phase=1)]
    got = demo_sample(buffer, 5, seed=0)
    assert all(e["phase"] == 0 for e in got)  # never a rollout's success
    steps = [len(e["steps"]) for e in got]
    assert sum(steps) >= 5 and sum(steps[:-1]) < 5  # whole episodes, stops once the budget is met
    assert demo_sample(buffer, 5, seed=0) == got  # seeded
    assert len(demo_sample(buffer, 100, seed=0)) == 4 and demo_sample(buffer[4:], 3, seed=0) == []


def test_continued_sft_trains_webrls_budget_of_demonstration_steps(tiny, tmp_path):
    """`--method sft`: the critic stage yields as many examples as `webrl`'s would, all of them
    demonstration steps (never a rollout's), with their π_ref log-probs for the KL metric."""
    from webrl.agent.prompt import PromptConfig
    from webrl.models.config import preset
    from webrl.rl.critic_stage import critic_stage
    from webrl.rl.loop_config import LoopConfig
    from webrl.rl.stages import Stages

    model, tok = tiny
    rollouts = [_episode("find the cart", ['do(action="Click", element="4")', 'exit(message="3")'], 0.0),
                _episode("price of tea?", ['exit(message="$3")'], 1.0)]  # fmt: skip
    demos = [_episode(f"demo {k}", ['do(action="Click", element="7")', f'exit(message="{k}")'], 1.0, phase=0)
             for k in range(12)]  # fmt: skip
    got = {}
    for name, method, loss in (("webrl", "webrl", ""), ("sft", "sft", ""), ("no_kl", "webrl", "sft")):
        cfg = LoopConfig(init="unused", reward="oracle", method=method, actor_loss=loss, demos="passed as the buffer",
                         ppl_filter=False, critic_epochs=2)  # fmt: skip
        pdir = tmp_path / name
        pdir.mkdir()
        got[name], _ = critic_stage(cfg, rollouts, demos, model, tok, preset("cpu-tiny"), PromptConfig(),
                                    "unused", pdir, Stages(pdir), False)  # fmt: skip
    webrl, sft = got["webrl"], got["sft"]
    # --no-kl, SFT on the buffer: the rewarded rollout's step and the replayed ones, not the failed rollout's two
    assert len(got["no_kl"]) == 1 + 6 and all(e.mc_return > 0 for e in got["no_kl"])
    assert not any('element="4"' in tok.decode(e.ids[e.prompt_len:]) for e in got["no_kl"])
    assert len(webrl) == 3 + 6  # 3 new steps + replay_ratio (2) x 3 replayed ones
    assert len(sft) == len(webrl)
    assert all(e.task_id.startswith("demo-") and e.mc_return == 1.0 for e in sft)
    demo_texts = {tok.decode(e.ids[e.prompt_len:]) for e in sft}
    assert not any("$3" in t or 'element="4"' in t for t in demo_texts)  # no rollout action is trained on
    assert all(e.ref_logp < 0 for e in sft)


def test_each_phase_draws_its_own_replay_and_demonstration_sample(tiny, tmp_path):
    """The replay sample and continued SFT's demonstrations are drawn afresh each phase (the seed
    carries the phase number), and the same phase draws the same again."""
    from webrl.agent.prompt import PromptConfig
    from webrl.models.config import preset
    from webrl.rl.critic_stage import critic_stage
    from webrl.rl.loop_config import LoopConfig
    from webrl.rl.stages import Stages, phase_seed

    assert phase_seed(3, tmp_path / "phase-002") == 2003 and phase_seed(3, tmp_path / "x") == 3
    model, tok = tiny
    rollouts = [_episode("find the cart", ['do(action="Click", element="4")', 'exit(message="3")'], 0.0),
                _episode("price of tea?", ['exit(message="$3")'], 1.0)]  # fmt: skip
    demos = [_episode(f"demo {k}", ['do(action="Click", element="7")', f'exit(message="{k}")'], 1.0, phase=0)
             for k in range(12)]  # fmt: skip

    def drawn(method: str, folder: str) -> set[str]:
        cfg = LoopConfig(init="unused", reward="oracle", method=method, demos="passed as the buffer", ppl_filter=False,
                         critic_epochs=1)  # fmt: skip
        pdir = tmp_path / method / folder
        examples, _ = critic_stage(cfg, rollouts, demos, model, tok, preset("cpu-tiny"), PromptConfig(), "unused",
                                   pdir, Stages(pdir), False)  # fmt: skip
        return {tok.decode(e.ids[e.prompt_len:]) for e in examples if e.mc_return > 0}

    for method in ("webrl", "sft"):
        one, two = drawn(method, "a/phase-001"), drawn(method, "a/phase-002")
        assert one != two, method  # phase 2 is not phase 1's sample again
        assert drawn(method, "b/phase-002") == two  # seeded: a rerun of the phase draws the same


def test_curriculum_critic_values_with_a_fully_fine_tuned_actor(tmp_path):
    """The `gpu` preset fine-tunes the whole model (no LoRA): the critic's backbone is then a whole
    checkpoint, scored as its own model (it used to be loaded as an adapter and crash in phase 2)."""
    from webrl.agent.prompt import PromptConfig
    from webrl.models.build import build, load_checkpoint, save_checkpoint
    from webrl.models.config import TINY, ModelConfig
    from webrl.rl.loop_config import LOOP_PRESETS, LoopConfig
    from webrl.rl.task_stage import critic_values

    mcfg = ModelConfig(base=TINY, autocast_bf16=False, lora=None)
    model, tok = build(mcfg)
    save_checkpoint(model, tok, mcfg, tmp_path / "ref")
    head = ValueHead(model.config.hidden_size, 16)
    save_critic(head, tmp_path / "ref", tmp_path / "critic")
    tasks = load_split("train")[:3]
    got = critic_values(LoopConfig(**{**LOOP_PRESETS["cpu-tiny"], "reward": "oracle", "init": str(tmp_path / "ref")}), tmp_path / "critic", tasks, model, tok, mcfg, PromptConfig(), WorldApp())
    ref, _, _ = load_checkpoint(tmp_path / "ref")
    assert len(got) == 3 and all(0 < v < 1 for v in got)
    assert got == pytest.approx(values(head, critic_features(ref, tok, tasks)).tolist(), abs=1e-5)


def critic_features(model, tok, tasks):
    """Start-page features of `tasks` under `model`, the way the curriculum filter builds them."""
    from webrl.agent.prompt import PromptConfig, build_prompt
    from webrl.env.web_env import WebEnv

    env = WebEnv(world=WorldApp())
    steps = []
    for t in tasks:
        obs, _ = env.reset(options={"task": t})
        steps.append(Step(tuple(tok(build_prompt(tok, t.intent, [], obs, PromptConfig()), add_special_tokens=False)["input_ids"]), ()))
    env.close()
    return score_steps(model, steps, tok.pad_token_id)[0]


def test_a_rollout_begun_before_seeds_per_step_resumes_under_its_own_rule(tmp_path):
    """A rollout stage whose saved config has no sampling seed (code before `step_sampling`) and has
    episodes finishes with seed None (one generator, as it began); a fresh or greedy stage as shown."""
    import json

    from webrl.rl.stages import rollout_seed

    saved = tmp_path / "config.json"
    assert rollout_seed(7, 0.5, saved, 0) == 7  # fresh: the phase's seed
    assert rollout_seed(7, 0.0, saved, 0) is None  # greedy: no seed
    saved.write_text(json.dumps({"sampling": {"temperature": 0.5, "seed": None}}))
    assert rollout_seed(7, 0.5, saved, 2) is None  # begun under the old rule: kept
    assert rollout_seed(7, 0.5, saved, 0) == 7  # nothing on disk yet: the new rule
    saved.write_text(json.dumps({"sampling": {"temperature": 0.5, "seed": 7}}))
    assert rollout_seed(7, 0.5, saved, 2) == 7
