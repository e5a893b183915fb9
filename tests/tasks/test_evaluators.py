"""Each eval type with passing and failing cases (WebArena semantics)."""

import pytest

from webrl.tasks.evaluators import (
    UnsupportedEval,
    css_of_locator,
    evaluate,
    exact_match,
    fuzzy_match,
    must_include,
    program_score,
    select_text,
    string_score,
    url_score,
)
from webrl.tasks.schema import task_from_json

BASE = "http://127.0.0.1:7770"


@pytest.mark.parametrize("ref, ans, ok", [
    ("$12.50", "$12.50", 1), ("Emma Lopez", "  emma lopez. ", 1), ("N/A", '"n/a"', 1),
    ("12", "12.0", 0), ("Emma Lopez", "Emma", 0), ("N/A", "not available", 0),
])  # fmt: skip
def test_exact_match(ref, ans, ok):
    assert exact_match(ref, ans) == ok


def test_must_include_all_phrases():
    ref = {"must_include": ["Blue Mug", "$12"]}
    assert string_score(ref, "The blue mug costs $12.00") == 1.0
    assert string_score(ref, "The blue mug costs $13") == 0.0
    assert string_score(ref, None) == 0.0
    assert must_include("abc", "xxABCxx") == 1.0


def test_fuzzy_match_tokens_and_na():
    assert fuzzy_match(["delivered"], "It was Delivered.") == 1.0
    assert fuzzy_match(["order shipped"], "shipped, the order") == 1.0
    assert fuzzy_match(["order shipped"], "the order is pending") == 0.0
    assert fuzzy_match(["N/A"], "N/A") == 1.0
    assert fuzzy_match(["N/A"], "the answer is n/a but also 12") == 0.0


@pytest.mark.parametrize("ref, final, ok", [
    ("__SHOP__/category/3?sort=price_asc", f"{BASE}/shop/category/3?sort=price_asc&page=1", 1),
    ("__SHOP__/category/3?sort=price_asc", f"{BASE}/shop/category/3?sort=price_desc", 0),
    ("__SHOP__/category/3?sort=price_asc", f"{BASE}/shop/category/3", 0),
    ("__SHOP__/product/12", f"{BASE}/shop/product/12/", 1),
    ("__SHOP__/product/12", f"{BASE}/shop/product/13", 0),
    ("__SHOP__/a |OR| __SHOP__/b", f"{BASE}/shop/b", 1),
])  # fmt: skip
def test_url_match(ref, final, ok):
    assert url_score(ref, final, BASE) == ok


PAGE = """<html><head><title>t</title><script>var secret = "Blue Mug";</script></head><body>
<table id="cart"><tr><td>Blue Mug</td><td>Qty: 2</td></tr></table>
<p class="note">Thanks &amp; bye</p></body></html>"""


def test_program_html_locators():
    assert css_of_locator("document.querySelector('#cart').outerText") == "#cart"
    assert css_of_locator("") == ""
    with pytest.raises(UnsupportedEval):
        css_of_locator("func().innerText")
    assert select_text(PAGE, "#cart") == "Blue Mug Qty: 2"
    assert "secret" not in select_text(PAGE, "")
    fetch = {f"{BASE}/shop/cart": PAGE}.__getitem__
    ok = [{"url": "__SHOP__/cart", "locator": "#cart", "required_contents": {"must_include": ["blue mug", "Qty: 2"]}}]
    bad = [{"url": "__SHOP__/cart", "locator": "#cart", "required_contents": {"must_include": ["Qty: 3"]}}]
    outside = [{"url": "__SHOP__/cart", "locator": ".note", "required_contents": {"must_include": ["Blue Mug"]}}]
    exact = [{"url": "last", "locator": ".note", "required_contents": {"exact_match": "thanks & bye"}}]
    assert program_score(ok, "", fetch, BASE) == 1.0
    assert program_score(bad, "", fetch, BASE) == 0.0
    assert program_score(outside, "", fetch, BASE) == 0.0
    assert program_score(exact, f"{BASE}/shop/cart", fetch, BASE) == 1.0


def test_scores_multiply_across_types():
    task = task_from_json({
        "task_id": 7, "sites": ["shop"], "start_url": "__SHOP__/", "intent": "x",
        "eval": {"eval_types": ["string_match", "url_match"],
                 "reference_answers": {"exact_match": "5"}, "reference_url": "__SHOP__/orders"},
    })  # fmt: skip
    fetch = {}.__getitem__
    assert evaluate(task, "5", f"{BASE}/shop/orders", fetch, BASE) == 1.0
    assert evaluate(task, "5", f"{BASE}/shop/cart", fetch, BASE) == 0.0
    assert evaluate(task, "6", f"{BASE}/shop/orders", fetch, BASE) == 0.0
