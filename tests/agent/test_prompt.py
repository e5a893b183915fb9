"""The actor prompt: layout, placeholders, truncation, completions, end of action."""

import json
from dataclasses import asdict, replace

import pytest

from webrl.agent.prompt import (
    PromptConfig,
    annotate,
    build_messages,
    build_prompt,
    completion_text,
    count_tokens,
    element_label,
    end_of_action,
    load_prompt_config,
    placeholder,
    save_prompt_config,
    trim_response,
)

PAGE = "URL: http://127.0.0.1:7770/shop/cart\nTitle: Cart\n<a id=1>Home</a> <button id=2>Checkout</button>"
CLICK = 'do(action="Click", element="2")'


def test_placeholder_keeps_path_and_error():
    pc = PromptConfig()
    assert placeholder(PAGE, pc) == "URL: /shop/cart [page omitted]"
    err = "URL: http://h:1/forum/\nTitle: x\n[Error: element 99 does not exist on this page]\nbody"
    assert placeholder(err, pc) == "URL: /forum/ [page omitted]\n[Error: element 99 does not exist on this page]"


def test_messages_layout():
    pc = PromptConfig()
    msgs = build_messages("Buy a mug", [(PAGE, CLICK)], PAGE.replace("cart", "checkout"), pc)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert 'exit(message="N/A")' in msgs[0]["content"]  # impossible tasks: answer N/A
    assert msgs[1]["content"] == "Task: Buy a mug\n\nURL: /shop/cart [page omitted]"
    assert msgs[2]["content"] == CLICK  # past responses are kept
    # compact view, then the intent again next to where the answer starts
    assert msgs[3]["content"] == "URL: /shop/checkout\nTitle: Cart\n[Home](1) [Checkout](2)\n\nTask: Buy a mug"
    raw = build_messages("Buy a mug", [], PAGE, PromptConfig(compact=False, repeat_intent=False))
    assert raw[-1]["content"].endswith(PAGE)  # the env's own rendering when compact is off
    assert build_messages("t", [], PAGE, PromptConfig(system=None))[0]["role"] == "user"


def test_recap_lists_the_kept_rounds_actions_after_the_intent():
    typed = '# Element: [qty](7)\ndo(action="Type", argument="2", element="7")'
    history = [(PAGE, '# Element: [Checkout](2)\n' + CLICK), (PAGE, typed), (PAGE, "garbage")]
    last = build_messages("Buy a mug", history, PAGE, PromptConfig(recap=True))[-1]["content"]
    assert last.endswith('\n\nTask: Buy a mug\nDone so far: Click [Checkout]; Type "2" in [qty]; Invalid: garbage')
    assert build_messages("Buy a mug", [], PAGE, PromptConfig(recap=True))[-1]["content"].endswith("Task: Buy a mug")
    # the omitted rounds are not recapped: the recap follows the rounds the prompt keeps
    kept = build_messages("Buy a mug", history[1:], PAGE, PromptConfig(recap=True), omitted=1)[-1]["content"]
    assert kept.endswith('Done so far: Type "2" in [qty]; Invalid: garbage')
    assert "Done so far" not in build_messages("Buy a mug", history, PAGE, PromptConfig())[-1]["content"]


def test_chat_template_and_plain_rendering(tiny):
    _, tok = tiny
    pc = PromptConfig()
    text = build_prompt(tok, "Buy a mug", [(PAGE, CLICK)], PAGE, pc)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    assert text.count("Title: Cart") == 1
    plain = build_prompt(tok, "Buy a mug", [(PAGE, CLICK)], PAGE, PromptConfig(use_chat_template=False))
    assert "<|im_start|>" not in plain and plain.endswith("Action:\n") and "Task: Buy a mug" in plain
    assert completion_text(tok, CLICK, pc) == CLICK + "<|im_end|>"
    assert completion_text(tok, CLICK, PromptConfig(use_chat_template=False)) == CLICK + tok.eos_token


def test_truncation_drops_oldest_rounds_then_cuts_the_page(tiny):
    _, tok = tiny
    history = [(PAGE.replace("cart", f"p{i}"), f'do(action="Click", element="{i}")') for i in range(30)]
    big_page = PAGE + "\n" + "\n".join(f"- line {i} of the current page" for i in range(200))
    full = build_prompt(tok, "Buy a mug", history, big_page, PromptConfig(max_prompt_tokens=100_000))
    budget = count_tokens(tok, full) - 200
    cut = build_prompt(tok, "Buy a mug", history, big_page, PromptConfig(max_prompt_tokens=budget))
    assert count_tokens(tok, cut) <= budget
    assert "Task: Buy a mug" in cut and "earlier rounds omitted]" in cut
    assert 'element="29"' in cut and 'element="0")' not in cut  # the most recent rounds stay
    assert "- line 199 of the current page" in cut  # the page is untouched while rounds can go
    tiny_budget = count_tokens(tok, build_prompt(tok, "Buy a mug", [], PAGE, PromptConfig())) + 40
    cut2 = build_prompt(tok, "Buy a mug", history, big_page, PromptConfig(max_prompt_tokens=tiny_budget))
    assert count_tokens(tok, cut2) <= tiny_budget
    assert "Task: Buy a mug" in cut2 and "URL: /shop/cart" in cut2  # page start kept
    assert cut2.count("Task: Buy a mug") == 2  # the repeat after the cut page survives too
    assert cut2.rstrip().endswith("[page cut]<|im_end|>\n<|im_start|>assistant") or "[page cut]" in cut2


def test_end_of_action_and_trim():
    assert end_of_action('# Element: Cart\ndo(action="Click", element="1")') is None  # line not finished
    text = '# Element: Cart\ndo(action="Click", element="1")\ndo(action="Scroll Down")\n'
    assert trim_response(text) == '# Element: Cart\ndo(action="Click", element="1")'
    assert trim_response('  exit(message="N/A")\nmore') == 'exit(message="N/A")'
    assert trim_response("no action here") == "no action here"


def test_annotate_adds_element_comment():
    info = {"elements": [
        {"id": 1, "tag": "a", "text": "Blue Mug", "attrs": {"href": "/p/1"}},
        {"id": 2, "tag": "input", "text": "", "attrs": {"name": "q", "type": "text"}},
    ]}  # fmt: skip
    pc = PromptConfig()
    assert annotate(CLICK.replace("2", "1"), info, pc) == '# Element: [Blue Mug](1)\ndo(action="Click", element="1")'
    typed = 'do(action="Type", argument="mug", element="2")'
    assert annotate(typed, info, pc) == "# Element: [q](2)\n" + typed
    raw = PromptConfig(compact=False)
    assert annotate(typed, info, raw) == "# Element: name=q\n" + typed
    assert annotate('do(action="Scroll Down")', info, pc) == 'do(action="Scroll Down")'
    assert annotate(typed, info, PromptConfig(element_comment=False)) == typed
    assert element_label({"id": 3, "tag": "select", "text": "x", "attrs": {}}) == "x"


def test_prompt_config_saved_and_validated(tmp_path):
    pc = PromptConfig(max_prompt_tokens=999, system=None)
    save_prompt_config(pc, tmp_path)
    assert load_prompt_config(tmp_path) == pc
    assert load_prompt_config(tmp_path / "missing") == PromptConfig()
    legacy = {k: v for k, v in asdict(pc).items() if k not in ("repeat_intent", "recap")}  # saved before them
    (tmp_path / "prompt_config.json").write_text(json.dumps(legacy))
    assert load_prompt_config(tmp_path) == replace(pc, repeat_intent=False, recap=False)
    save_prompt_config(replace(pc, recap=True), tmp_path)
    assert load_prompt_config(tmp_path).recap
    with pytest.raises(ValueError, match="max_prompt_tokens"):
        PromptConfig(max_prompt_tokens=10)
    with pytest.raises(ValueError, match="max_rounds"):
        PromptConfig(max_rounds=-1)


def test_max_rounds_keeps_the_latest(tiny):
    _, tok = tiny
    history = [(PAGE, f'do(action="Click", element="{i}")') for i in range(8)]
    text = build_prompt(tok, "Buy a mug", history, PAGE, PromptConfig(max_rounds=3))
    assert "[5 earlier rounds omitted]" in text
    assert 'element="7"' in text and 'element="5"' in text and 'element="4"' not in text
