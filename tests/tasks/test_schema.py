import json

import pytest

from webrl.tasks.schema import TaskError, expand_url, load_tasks, task_from_json

WEBARENA_LITE_RECORD = {
    "sites": ["shopping"], "task_id": 21, "require_login": True, "storage_state": "./.auth/shopping_state.json",
    "start_url": "__SHOPPING__/6s-wireless-headphones-over-ear.html", "geolocation": None,
    "intent_template": "List out reviewers, if exist, who mention about {{description}}",
    "instantiation_dict": {"description": "ear cups being small"},
    "intent": "List out reviewers, if exist, who mention about ear cups being small",
    "require_reset": False,
    "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["Joseph Brzezinski"]},
             "reference_url": "", "program_html": [], "string_note": "", "reference_answer_raw_annotation": ""},
    "intent_template_id": 222,
}  # fmt: skip


def test_parses_webarena_lite_record():
    t = task_from_json(WEBARENA_LITE_RECORD)
    assert t.task_id == 21 and t.intent_template_id == 222 and t.require_login
    assert t.extra["storage_state"] == "./.auth/shopping_state.json"
    assert t.to_json()["sites"] == ["shopping"]


@pytest.mark.parametrize("mutate, fragment", [
    (lambda d: d.pop("intent"), "missing field 'intent'"),
    (lambda d: d.update(sites="shop"), "'sites' must be list"),
    (lambda d: d["eval"].update(eval_types=["llm_judge"]), "unknown eval type 'llm_judge'"),
    (lambda d: d["eval"].update(eval_types=["url_match"], reference_url=None), "'reference_url' must be str"),
    (lambda d: d["eval"].update(reference_answers={"contains": "x"}), "keys must be among"),
])  # fmt: skip
def test_errors_name_task_and_field(mutate, fragment):
    d = json.loads(json.dumps(WEBARENA_LITE_RECORD))
    mutate(d)
    with pytest.raises(TaskError) as e:
        task_from_json(d)
    assert fragment in str(e.value) and "task_id=21" in str(e.value)


def test_load_tasks_file_errors(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("[{]")
    with pytest.raises(TaskError, match="bad.json: not valid JSON"):
        load_tasks(p)
    p.write_text(json.dumps([WEBARENA_LITE_RECORD, {"task_id": 3}]))
    with pytest.raises(TaskError, match=r"bad.json\[1\] \(task_id=3\): missing field 'sites'"):
        load_tasks(p)


def test_expand_url():
    assert expand_url("__SHOPPING__/x.html", "http://h:1/") == "http://h:1/shop/x.html"
    assert expand_url("__REDDIT__/f/books", "http://h:1") == "http://h:1/forum/f/books"
    assert expand_url("__NOTES__/", "http://h:1") == "http://h:1/notes/"


def test_offline_limits_of_webarena_configs(tmp_path):
    from webrl.cli.main import main
    from webrl.tasks.evaluators import offline_limits

    fuzzy = json.loads(json.dumps(WEBARENA_LITE_RECORD))
    fuzzy["eval"]["reference_answers"] = {"fuzzy_match": ["small ear cups"]}
    func = json.loads(json.dumps(WEBARENA_LITE_RECORD))
    func["task_id"] = 22
    func["eval"] = {"eval_types": ["program_html"], "program_html": [
        {"url": "func:shopping_get_latest_order_url()", "locator": "document.querySelector('.x').outerText",
         "required_contents": {"must_include": ["y"]}}]}  # fmt: skip
    plain = task_from_json(WEBARENA_LITE_RECORD)
    assert plain.site == "shop"
    assert offline_limits(plain, {"shop", "shopping"}) == []
    assert "LLM-judged" in offline_limits(task_from_json(fuzzy))[0]
    limits = offline_limits(task_from_json(func))
    assert len(limits) == 1 and "WebArena helper" in limits[0]
    path = tmp_path / "wa.json"
    path.write_text(json.dumps([WEBARENA_LITE_RECORD, fuzzy, func]))
    assert main(["tasks", "check", str(path)]) == 0

