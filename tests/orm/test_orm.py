"""The ORM: prompt and answer tokens, labelled data from real episodes, metrics worked out by
hand, training + resume on cpu-tiny, batched local scoring, and the judge over a real server."""

import json
import random
import re
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from webrl.agent.prompt import PromptConfig  # noqa: E402
from webrl.cli.main import main  # noqa: E402
from webrl.env.web_env import WebEnv  # noqa: E402
from webrl.files import load_jsonl, write_jsonl_atomic  # noqa: E402
from webrl.models.config import preset  # noqa: E402
from webrl.orm.data import (  # noqa: E402
    ANSWER_FROM_PAGE,
    GO_BACK,
    RANDOM_CLICK,
    REPEAT,
    SwappedOracle,
    answer_from_page,
    balance,
    dedupe,
    misread_answer,
    perturbations,
    scripted_trajectories,
    swap_partner,
    wrong_answer,
)
from webrl.orm.evidence import final_answer, on_page, task_names  # noqa: E402
from webrl.orm.metrics import auc, classification, format_report, reliability, report  # noqa: E402
from webrl.orm.model import (  # noqa: E402
    ORM_PROMPT_FILE,
    JudgeORM,
    LocalORM,
    load_orm_prompt_config,
    rewards,
    sorted_batches,
)
from webrl.orm.prompt import (  # noqa: E402
    QUESTION,
    QUESTION_WITH_TASK,
    ORMPromptConfig,
    answer_token_ids,
    fold,
    orm_prompt,
)
from webrl.orm.train import ORM_PRESETS, train_orm  # noqa: E402
from webrl.tasks.splits import load_split  # noqa: E402

PAGE = "URL: http://127.0.0.1:7770/shop/product/3\nTitle: Blue Mug\n<a id=1>Home</a>\nPrice: $12.50"


@pytest.fixture(scope="module")
def tiny():
    from webrl.models.build import build

    return build(preset("cpu-tiny"))


@pytest.fixture(scope="module")
def trajs():
    tasks = [t for t in load_split("train") if t.site == "shop"][:12]
    env = WebEnv()
    out = scripted_trajectories(tasks, env, PromptConfig(), progress=False)
    env.close()
    return out


@pytest.mark.parametrize("layout", ["near", "paper"])
def test_prompt_layout_and_truncation_keep_task_and_question(tiny, layout):
    _, tok = tiny
    cfg = ORMPromptConfig(max_prompt_tokens=100_000, layout=layout)
    responses = ['# Element: [Blue Mug](3)\ndo(action="Click", element="3")', 'exit(message="$12.50")']
    intent = "What does the blue mug cost?"
    text = orm_prompt(tok, intent, responses, PAGE, cfg)
    question = QUESTION_WITH_TASK.format(intent=intent) if layout == "near" else QUESTION
    assert text.endswith(question)
    actions = "Actions:\n1. # Element: [Blue Mug](3) | do("
    if layout == "paper":
        assert text.startswith(f"Task: {intent}\n\n{actions}") and text.index("[Home](1)") > text.index(actions)
    else:  # page first, then the actions, the last one right before the question
        assert text.startswith(f"Task: {intent}\n\nFinal page:\nURL:") and text.index("[Home](1)") < text.index(actions)
        assert text.endswith('2. exit(message="$12.50")\n\n' + question)
    assert '2. exit(message="$12.50")' in text and "[Home](1)" in text
    many = [f'do(action="Click", element="{i}")' for i in range(40)]
    big = PAGE + "\n" + "\n".join(f"- row {i}" for i in range(300))
    n = len(tok(orm_prompt(tok, "t", many, big, cfg))["input_ids"])
    cut = orm_prompt(tok, "t", many, big, ORMPromptConfig(max_prompt_tokens=n // 3, keep_actions=3, layout=layout))
    assert len(tok(cut)["input_ids"]) <= n // 3
    q = QUESTION_WITH_TASK.format(intent="t") if layout == "near" else QUESTION
    assert cut.startswith("Task: t") and cut.endswith(q) and "[page cut]" in cut
    assert "40. do(" in cut and "38. do(" in cut and "earlier actions omitted]" in cut
    assert fold("# a\n\n do(x) \n") == "# a | do(x)"
    with pytest.raises(ValueError, match="layout"):
        ORMPromptConfig(layout="sideways")


def test_legacy_orm_prompt_config_reads_as_the_paper_layout(tmp_path):
    (tmp_path / ORM_PROMPT_FILE).write_text(json.dumps({"max_prompt_tokens": 640, "keep_actions": 3, "compact": True}))
    assert load_orm_prompt_config(tmp_path) == ORMPromptConfig(max_prompt_tokens=640, layout="paper")


def test_answer_tokens_are_distinct(tiny):
    _, tok = tiny
    yes, no = answer_token_ids(tok)
    assert yes != no


def test_wrong_answer_and_perturbations_hand_checked():
    import random

    rng = random.Random(0)
    assert wrong_answer("", [], rng) is None
    assert wrong_answer("red mug", [], rng) == "N/A"
    assert wrong_answer("N/A", ["Home", "N/A"], rng) == "Home"
    shifted = wrong_answer("$12.50", [], rng)
    assert shifted != "$12.50" and len(shifted) == len("$12.50") and shifted.startswith("$")
    acts = ['do(action="Search", argument="mug", element="2")', 'do(action="Click", element="9")', 'exit(message="$1")']
    p = perturbations(acts, ["Home"], seed=1)
    # the answer is read: stopping early or after a detour answers from the page it ends on
    assert p["early"] == [acts[0], ANSWER_FROM_PAGE]
    assert p["detour"] == [acts[0], RANDOM_CLICK, ANSWER_FROM_PAGE]
    assert p["answer"][:2] == acts[:2] and p["answer"][2] != acts[2]
    unread = perturbations(acts, [], seed=1, answer_checked=False)
    assert "answer" not in unread and "echo" not in unread
    assert unread["early"] == [acts[0], acts[2]] and unread["detour"] == [acts[0], RANDOM_CLICK, acts[2]]
    assert "echo" not in p  # no intent given: no name to echo
    e = perturbations(acts, [], seed=1, intent='What does the "Blue Mug" cost?')["echo"]
    assert e == acts[:2] + ['exit(message="Blue Mug")']
    na = acts[:2] + ['exit(message="N/A")']  # "N/A" is right or wrong whatever the page shows
    assert perturbations(na, [], seed=1)["early"] == [acts[0], na[2]]
    assert "give_up" not in perturbations(na, [], seed=1)  # "N/A" is the oracle's own answer
    for seed in range(8):  # a prefix before the last two actions, at most one random click, then N/A
        g = perturbations(acts, [], seed=seed, answer_checked=False)["give_up"]
        k = next((i for i, a in enumerate(g) if a != acts[i]), len(g))
        assert k <= 1 and g[-1] == 'exit(message="N/A")' and g[k:-1] in ([], [RANDOM_CLICK])
    assert "echo" not in perturbations(acts[:2] + ['exit(message="Blue Mug")'], [], 1, intent='Which is "Blue Mug"?')
    k = p["loop"].index(RANDOM_CLICK)
    assert k <= 1 and p["loop"][:k] == acts[:k] and p["loop"][k + 1 :] == [REPEAT] * 8
    for seed in range(8):  # the oracle's actions with a random click and a step back before one of them
        w = perturbations(acts, [], seed=seed)["wander"]
        k = w.index(RANDOM_CLICK)
        assert k <= 2 and w[:k] + w[k + 2 :] == acts[:2] + [ANSWER_FROM_PAGE] and w[k + 1] == GO_BACK
    assert perturbations(na, [], seed=1)["wander"][-1] == na[2]  # "N/A" is the oracle's answer: kept
    assert p["overstay"] == acts[:2] + [REPEAT] * 8  # the goal reached, the last action repeated, no exit
    assert "overstay" not in perturbations(acts[:2], [], seed=1)  # an oracle that never exits: nothing to skip
    assert "linger" not in p  # its exit reads an answer: none may outlive the page that showed it
    for seed in range(8):  # the goal reached, one to three random clicks, then the oracle's exit
        g = perturbations(na, [], seed=seed)["linger"]
        assert g[:2] == na[:2] and g[-1] == na[2] and 1 <= len(g) - 3 <= 3 and set(g[2:-1]) == {RANDOM_CLICK}
    assert perturbations(acts, [], seed=1, answer_checked=False)["linger"][-1] == acts[2]  # not read: kept
    assert "misread" not in p  # no final page given: nothing to misread
    page = "URL: /shop/p/1\n[Cart (0)](4)\n# Blue Mug\nPrice: $1 · In stock: 40 · 4.5 stars\n[Red Mug](9) $7"
    p = perturbations(acts, ["Home"], seed=1, final_page=page)
    assert p["misread"] == acts[:2] + ['exit(message="$7")']  # the only other price below the heading


def test_answer_from_page_says_what_the_page_shows():
    import random

    page = "URL: /shop/p/1\n[Cart (0)](4)\n# Blue Mug\nPrice: $1 · In stock: 40\n[Red Mug](9) $7"
    rng = random.Random(0)
    assert answer_from_page("$1", page, rng) == "$1"  # shown: the agent reads it
    assert answer_from_page("$3", page, rng) in ("$1", "$7")  # not shown: another price of the page
    assert answer_from_page("HK-HEA-0042", page, rng) == "N/A"  # nothing of its kind


def test_misread_answer_takes_a_value_of_the_same_kind_from_the_page_content():
    import random

    page = ("URL: /x\n[Cart (3)](4) [Sign in](5)\n# Order #000123\nPlaced 2023-10-15 · Total: $87.00\n"
            "Shipped 2023-10-19 · Items: 3 · SKU HK-HEA-0042\n[Blue Mug](12) [Red Mug](13)")
    rng = random.Random(0)
    assert misread_answer("2023-10-15", page, rng) == "2023-10-19"
    assert misread_answer("$87.00", page, rng) is None  # no other price on the page
    assert misread_answer("3", page, rng) == "000123"  # whole numbers only: not the date's or the price's digits
    assert misread_answer("HK-HEA-0042", page, rng) is None
    assert misread_answer("Blue Mug", page, rng) == "Red Mug"  # a link of the content, not "Sign in"
    assert misread_answer("N/A", page, rng) is None and misread_answer("", page, rng) is None


def test_loop_behaviour_repeats_one_click_until_truncated(trajs):
    loops = [t for t in trajs if t["behaviour"] == "loop"]
    assert loops
    for t in loops:
        assert not t["responses"][-1].startswith("exit(")  # truncated, never exited
        assert len({r.splitlines()[-1] for r in t["responses"][-3:]}) == 1  # the same click, repeated


def test_scripted_trajectories_are_labelled_by_the_evaluators(trajs):
    by = {}
    for t in trajs:
        by.setdefault(t["behaviour"], []).append(t)
    assert all(t["label"] for t in by["oracle"]) and not any(t["label"] for t in by["wrong"])
    assert not any(t["label"] for t in by["answer"])  # an answer the evaluator reads, changed
    assert {"early", "detour", "echo"} <= set(by)
    assert not any(t["label"] for t in by["echo"])
    assert by["give_up"] and not any(t["label"] for t in by["give_up"])  # N/A where the site has the answer
    assert sum(t["label"] for t in by["wander"]) > len(by["wander"]) / 2  # the long way round, still a success
    assert any(GO_BACK in r for t in by["wander"] for r in t["responses"])
    for t in trajs:  # every success that ends in a text answer shows that answer on its final page
        msg = final_answer(t["responses"])
        if t["label"] and msg and msg.strip().upper() != "N/A" and t["behaviour"] != "oracle":
            assert on_page(msg, t["final_obs"]), (t["behaviour"], msg)
    t = by["oracle"][0]
    assert t["label_source"] == "evaluator" and t["final_obs"].startswith("URL: ")
    assert any(r.startswith("# Element: [") for r in t["responses"])  # written like the actor's responses
    assert dedupe(trajs + trajs) == dedupe(trajs)
    bal = balance(trajs, seed=0)
    assert sum(t["label"] for t in bal) * 2 == len(bal) > 0


def test_overstay_reaches_the_goal_and_never_exits(trajs):
    assert "overstay" not in {t["behaviour"] for t in trajs}  # opt-in: not in the default set
    tasks, seen = [], set()
    for task in load_split("train"):  # one task of each shop family
        if task.site == "shop" and task.family not in seen:
            seen.add(task.family)
            tasks.append(task)
    env = WebEnv()
    out = scripted_trajectories(tasks, env, PromptConfig(), behaviours=("overstay",), progress=False)
    env.close()
    assert len(out) == len(tasks) and {t["behaviour"] for t in out} == {"overstay"}
    for t in out:
        actions = [r.splitlines()[-1] for r in t["responses"]]
        assert not any(a.startswith("exit(") for a in actions)  # cut off for repeating itself
        assert len(set(actions[-3:])) == 1, actions
    by_family = {t["family"]: t["label"] for t in out}
    assert by_family["shop.category_sorted"] and not by_family["shop.product_price"]  # goal page kept / no answer


def test_linger_keeps_a_change_of_state_and_loses_a_page_left_behind():
    tasks = [t for t in load_split("train") if t.family in ("shop.add_to_cart", "shop.open_product")][:6]
    assert {t.family for t in tasks} == {"shop.add_to_cart", "shop.open_product"}
    env = WebEnv()
    out = scripted_trajectories(tasks, env, PromptConfig(), behaviours=("linger",), progress=False)
    env.close()
    assert len(out) == len(tasks) and {t["behaviour"] for t in out} == {"linger"}
    for t in out:  # the oracle's exit after the random clicks
        assert t["responses"][-1].startswith("exit(") and len(t["responses"]) >= 3
    labels = {f: {t["label"] for t in out if t["family"] == f} for f in ("shop.add_to_cart", "shop.open_product")}
    assert labels["shop.add_to_cart"] == {True}  # the item stays in the cart whatever is clicked after
    assert False in labels["shop.open_product"]  # a click off the product page fails a navigation task


def test_swap_plays_another_familys_oracle_under_this_tasks_intent():
    train = load_split("train")
    cart = next(t for t in train if t.family == "shop.add_to_cart")
    product = next(t for t in train if t.family == "shop.open_product")
    review = next(t for t in train if t.site == "shop" and t.family == "shop.write_review")
    assert swap_partner(cart, [cart, product], random.Random(0)) is product
    assert swap_partner(cart, [cart], random.Random(0)) is None  # no other family on the site
    # one naming the same item is preferred
    item = task_names(cart.intent)[-1]
    same = replace(review, task_id="same", intent=f"Write a review of {item}.")
    assert {swap_partner(cart, [cart, product, review, same], random.Random(s)).task_id for s in range(5)} == {"same"}
    env = WebEnv()
    out = scripted_trajectories([cart, product], env, PromptConfig(), behaviours=("swap",), progress=False)
    alone = scripted_trajectories([product], env, PromptConfig(), behaviours=("oracle",), progress=False)
    env.close()
    assert [(t["task_id"], t["behaviour"], t["intent"]) for t in out] == [
        (cart.task_id, "swap", cart.intent), (product.task_id, "swap", product.intent)]
    def labels(t):  # the elements acted on (their ids depend on the page the task starts from)
        return [re.sub(r'\(\d+\)|element="\d+"', "", r) for r in t["responses"]]

    assert labels(out[0]) == labels(alone[0])  # the product task's oracle, played for the cart task
    assert [t["label"] for t in out] == [False, False]  # no item in the cart; the cart is not the product page


def test_swap_says_done_where_the_other_script_cannot_go_on():
    train = load_split("train")
    browse = next(t for t in train if t.family == "shop.category_extreme")  # starts signed out
    buy = next(t for t in train if t.family == "shop.buy_two")  # its script adds to the cart: a sign-in page
    env = WebEnv()
    obs, info = env.reset(options={"task": browse})
    agent = SwappedOracle(buy)
    agent.reset(browse)
    actions = []
    for _ in range(env.config.max_steps):
        actions.append(agent.act(obs, info))
        obs, _, terminated, truncated, info = env.step(actions[-1])
        if terminated or truncated:
            break
    env.close()
    assert "/login" in info["url"] and actions[-1] == 'exit(message="Done")' and len(actions) > 1


def test_balance_drops_the_policy_rollouts_last():
    def t(i, site, label, behaviour):
        return {"task_id": i, "site": site, "label": label, "behaviour": behaviour}

    trajs = ([t(i, "shop", True, "oracle") for i in range(3)] + [t(10 + i, "shop", False, "wrong") for i in range(5)]
             + [t(20 + i, "shop", False, "policy_t1") for i in range(2)] + [t(30, "map", True, "policy_t0")]
             + [t(31 + i, "map", False, "loop") for i in range(4)])  # fmt: skip
    for seed in range(5):
        bal = balance(trajs, seed=seed)
        ids = {x["task_id"] for x in bal}
        assert {0, 1, 2, 20, 21, 30} <= ids and len(ids & set(range(10, 15))) == 1 and len(ids & {31, 32, 33, 34}) == 1
        assert [x["task_id"] for x in bal] == sorted(ids)  # order kept
    many = [t(40 + i, "code", False, "policy_t0") for i in range(4)] + [t(50, "code", True, "oracle")]
    assert len({x["task_id"] for x in balance(many, 0)} & set(range(40, 44))) == 1  # more policy rows than needed


def test_ending_kinds():
    from webrl.orm.evidence import ending

    assert ending(['exit(message="Done")']) == "none" and ending(["exit()"]) == "none"
    assert ending(['exit(message="N/A")']) == "n/a" and ending(['exit(message="$3")']) == "text"
    assert ending(["click('4')"]) == "no stop" and ending([]) == "no stop"


def test_sorted_batches_hand_checked():
    # sorted: 1 (len 2), 3 (3), 0 (5), 2 (9); budget 10: [1, 3] pads to 6, adding 0 would pad to 15
    assert sorted_batches([5, 2, 9, 3], 10) == [[1, 3], [0], [2]]
    assert sorted_batches([50, 4], 10) == [[1], [0]]  # an over-long item goes alone
    assert sorted_batches([], 10) == []


def test_metrics_hand_computed():
    probs = [0.9, 0.8, 0.3, 0.6, 0.1, 0.2]
    labels = [True, True, True, False, False, False]  # tp 2, fn 1, fp 1, tn 2
    m = classification(probs, labels)
    assert m["confusion"] == {"tp": 2, "fp": 1, "tn": 2, "fn": 1}
    assert m["accuracy"] == pytest.approx(4 / 6, abs=1e-4)
    assert m["precision"] == pytest.approx(2 / 3, abs=1e-4) and m["recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["f1"] == pytest.approx(2 / 3, abs=1e-4) and m["false_positive_rate"] == pytest.approx(1 / 3, abs=1e-4)
    # pairs (success, failure) ranked right: 0.9 beats all 3, 0.8 all 3, 0.3 beats 0.1 and 0.2 -> 8 of 9
    assert m["auc"] == pytest.approx(8 / 9, abs=1e-4)
    assert auc([0.5, 0.5, 0.2], [True, False, False]) == pytest.approx(0.75)  # a tie counts half
    assert auc([0.1, 0.9], [False, False]) is None
    rows = reliability([0.05, 0.15, 0.95, 1.0], [False, True, True, True], bins=10)
    assert rows[0] == {"bin": "[0.0,0.1)", "n": 1, "mean_p": 0.05, "observed": 0.0}
    assert rows[-2]["n"] == 2 and rows[-2]["observed"] == 1.0
    assert rows[-1]["ece"] == pytest.approx((0.05 + 0.85 + 0.025 * 2) / 4, abs=1e-4)
    rep = report(probs, [{"label": y, "site": "s", "behaviour": "b"} for y in labels])
    assert rep["per_site"]["s"] == rep["overall"] and rep["threshold"] == 0.5
    # at 0.7 only 0.9 and 0.8 are positives: tp 2, fn 1, fp 0 (0.6 now a true negative), tn 3
    m7 = classification(probs, labels, threshold=0.7)
    assert m7["confusion"] == {"tp": 2, "fp": 0, "tn": 3, "fn": 1}
    assert m7["accuracy"] == pytest.approx(5 / 6, abs=1e-4) and m7["false_positive_rate"] == 0.0
    assert m7["precision"] == 1.0 and m7["auc"] == m["auc"]
    rep7 = report(probs, [{"label": y, "site": "s", "behaviour": "b"} for y in labels], threshold=0.7)
    assert rep7["threshold"] == 0.7 and rep7["per_behaviour"]["b"] == m7 and "P > 0.7" in format_report(rep7)
    assert rewards([0.51, 0.5, 0.2]) == [1.0, 0.0, 0.0]
    assert rewards([0.51, 0.71, 0.7], threshold=0.7) == [0.0, 1.0, 0.0]


def test_train_resume_and_batched_scoring(trajs, tmp_path):
    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, balance(trajs, 0))
    cfg = replace(ORM_PRESETS["cpu-tiny"], data=str(data), max_steps=2, save_minutes=0.0)
    line = train_orm(cfg, preset("cpu-tiny"), tmp_path / "run", progress=False)
    assert line["step"] == 2 and "losses/orm" in line
    assert train_orm(cfg, preset("cpu-tiny"), tmp_path / "run", progress=False)["step"] == 2  # resumed: done
    with pytest.raises(ValueError, match="different orm_config.json"):
        train_orm(replace(cfg, lr=0.5), preset("cpu-tiny"), tmp_path / "run", progress=False)
    orm = LocalORM.from_checkpoint(tmp_path / "run" / "final")
    sample = trajs[:6]
    together = orm.prob_success(sample)
    alone = [orm.prob_success([t])[0] for t in sample]
    assert all(0.0 <= p <= 1.0 for p in together)
    assert together == pytest.approx(alone, abs=2e-3)  # batching (with padding) changes nothing


def test_judge_over_a_real_openai_compatible_server(tiny, trajs):
    from webrl.agent.local_policy import LocalPolicy
    from webrl.agent.server import ModelServer, ServerLimits

    model, tok = tiny
    server = ModelServer(LocalPolicy(model, tok), "tiny", port=0, limits=ServerLimits(max_prompt_tokens=8000)).start()
    try:
        judge = JudgeORM(server.url, tokenizer=tok, prompt=ORMPromptConfig(max_prompt_tokens=3000))
        probs = judge.prob_success(trajs[:4])
    finally:
        server.close()
    assert len(probs) == 4 and all(0.0 <= p <= 1.0 for p in probs)
    assert judge.unparsed == sum(p == 0.0 for p in probs)  # a from-scratch model rarely says yes/no


def test_cli_data_train_eval(tmp_path, capsys):
    train = tmp_path / "train.jsonl"
    assert main(["orm", "data", "--split", "train", "--sites", "forum", "--limit", "6", "--out", str(train),
                 "--no-progress"]) == 0  # fmt: skip
    stats = json.loads(train.with_suffix(".stats.json").read_text())  # natural ratio: fewer successes
    assert stats["total"] == len(load_jsonl(train)) and 0 < stats["positive"] * 2 < stats["total"]
    assert stats["balanced"] is False
    bal = tmp_path / "bal.jsonl"
    assert main(["orm", "data", "--split", "train", "--sites", "forum", "--limit", "6", "--balance", "--out", str(bal),
                 "--no-progress"]) == 0  # fmt: skip
    stats = json.loads(bal.with_suffix(".stats.json").read_text())
    assert stats["positive"] * 2 == stats["total"] == len(load_jsonl(bal))
    test = tmp_path / "test.jsonl"
    assert main(["orm", "data", "--split", "test", "--sites", "forum", "--limit", "3",
                 "--out", str(test), "--no-progress"]) == 0  # fmt: skip
    assert main(["orm", "train", "--data", str(test), "--out", str(tmp_path / "x"), "--preset", "cpu-tiny"]) == 2
    assert "test-split task" in capsys.readouterr().err
    run = tmp_path / "orm"
    assert main(["orm", "train", "--data", str(train), "--out", str(run), "--preset", "cpu-tiny", "--max-steps", "1",
                 "--layout", "near", "--no-progress"]) == 0  # fmt: skip
    assert load_orm_prompt_config(run / "final").layout == "near"  # eval reads the layout it was trained with
    assert main(["orm", "eval", "--data", str(test), "--orm", str(run / "final"), "--out", str(tmp_path / "ev"),
                 "--no-progress"]) == 0  # fmt: skip
    rep = json.loads((tmp_path / "ev" / "orm_eval.json").read_text())
    assert rep["overall"]["n"] == len(load_jsonl(test)) and rep["throughput"]["trajectories_per_s"] > 0
    assert main(["orm", "data", "--behaviours", "policy", "--out", str(tmp_path / "p.jsonl")]) == 2
    assert main(["orm", "eval", "--data", str(test)]) == 2


def test_demo_orm_test_data_takes_the_sft_eval_episodes(tmp_path):
    """`webrl demo` builds the ORM's held-out data from scripted behaviours on the test split plus
    the SFT eval's greedy episodes (as policy_t0), without rolling the policy out again."""
    from webrl.cli.demo_cmds import _orm_data

    task = load_split("test")[0]
    eps = tmp_path / "episodes.jsonl"
    write_jsonl_atomic(eps, [{"task_id": task.task_id, "site": task.site, "family": task.family, "intent": task.intent,
                              "reward": 0.0, "steps": [{"obs": PAGE, "response": 'exit(message="no idea")'}], "final_obs": PAGE},
                             {"task_id": task.task_id, "site": task.site, "family": task.family, "intent": task.intent,
                              "reward": 0.0, "steps": [], "backend_error": "browser died"}])  # fmt: skip
    out = tmp_path / "test.jsonl"
    _orm_data("test", out, tmp_path / "no-checkpoint", 0, False, extra=eps)
    trajs = load_jsonl(out)
    policy = [t for t in trajs if t["behaviour"] == "policy_t0"]
    assert len(policy) == 1 and policy[0]["responses"] == ['exit(message="no idea")'] and not policy[0]["label"]
    assert {t["behaviour"] for t in trajs} >= {"oracle", "wrong", "loop"}
    assert all(str(t["task_id"]) in {str(x.task_id) for x in load_split("test")} for t in trajs)
    assert json.loads(out.with_suffix(".stats.json").read_text())["total"] == len(trajs)


def test_orm_data_rolls_a_checkpoint_out_at_two_temperatures(tiny, tmp_path):
    """`orm data --behaviours policy --policy CKPT`: the policy's greedy and T=1 episodes become
    labelled trajectories beside the scripted behaviours' (the demo builds its own; this is the CLI)."""
    from webrl.models.build import save_checkpoint

    model, tok = tiny
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    out = tmp_path / "p.jsonl"
    assert main(["orm", "data", "--behaviours", "oracle,policy", "--policy", str(tmp_path / "ck"), "--split", "train",
                 "--sites", "forum", "--limit", "3", "--policy-tasks", "2", "--max-steps", "2", "--envs", "2",
                 "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    rows = load_jsonl(out)
    by = {b: [r for r in rows if r["behaviour"] == b] for b in ("oracle", "policy_t0", "policy_t1")}
    assert len(by["oracle"]) == 3 and all(r["label"] for r in by["oracle"])
    assert 1 <= len(by["policy_t0"]) <= 2 and 1 <= len(by["policy_t1"]) <= 2  # (identical ones deduplicated)
    assert not any(r["label"] for r in by["policy_t0"] + by["policy_t1"])  # a from-scratch model solves nothing


def test_cli_orm_eval_with_a_judge_endpoint(tiny, trajs, tmp_path):
    """`webrl orm eval --judge URL --tokenizer CKPT`: any OpenAI-compatible judge, scored and reported
    like a trained ORM (our server with a from-scratch model: it rarely answers yes or no)."""
    from webrl.agent.local_policy import LocalPolicy
    from webrl.agent.server import ModelServer, ServerLimits
    from webrl.models.build import save_checkpoint

    model, tok = tiny
    save_checkpoint(model, tok, preset("cpu-tiny"), tmp_path / "ck")
    data = tmp_path / "test.jsonl"
    write_jsonl_atomic(data, trajs[:4])
    server = ModelServer(LocalPolicy(model, tok), "judge", port=0, limits=ServerLimits(max_prompt_tokens=8000)).start()
    try:
        assert main(["orm", "eval", "--data", str(data), "--judge", server.url, "--tokenizer", str(tmp_path / "ck"),
                     "--out", str(tmp_path / "ev"), "--no-progress"]) == 0  # fmt: skip
    finally:
        server.close()
    rep = json.loads((tmp_path / "ev" / "orm_eval.json").read_text())
    assert rep["overall"]["n"] == 4 and rep["scorer"] == server.url and "per_site" in rep
