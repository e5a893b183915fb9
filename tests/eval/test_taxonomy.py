"""Error taxonomy rules (one hand-made record per class) and step buckets."""

from webrl.rollout.taxonomy import by_step_bucket, classify, taxonomy


def rec(steps, terminated=False, success=False, site="shop", difficulty=2, **kw):
    return {"task_id": kw.pop("task_id", 1), "site": site, "success": success, "terminated": terminated,
            "truncated": not terminated, "steps": steps, "difficulty": difficulty, **kw}  # fmt: skip


OK_CLICK = {"action": 'do(action="Click", element="3")', "error": None}
BAD = {"action": None, "error": "no action found"}
FAILED_CLICK = {"action": 'do(action="Click", element="99")', "error": "element 99 does not exist"}
EXIT = {"action": 'exit(message="x")', "error": None}


def test_each_class_has_its_rule():
    assert classify(rec([OK_CLICK, EXIT], terminated=True, success=True)) is None
    assert classify(rec([BAD] * 5)) == "fail_to_attempt"  # nothing valid, ever
    assert classify(rec([EXIT], terminated=True)) == "fail_to_attempt"  # wrong exit at once
    assert classify(rec([OK_CLICK, FAILED_CLICK, FAILED_CLICK, EXIT], terminated=True)) == "fail_to_recover"
    assert classify(rec([OK_CLICK] * 30)) == "stuck_midway"  # cut off without exiting
    assert classify(rec([OK_CLICK, FAILED_CLICK, OK_CLICK] * 10)) == "stuck_midway"  # recovered, then looped
    assert classify(rec([OK_CLICK, EXIT], terminated=True)) == "wrong_page"
    assert classify(rec([OK_CLICK], agent_error="ConnectionError")) == "other"


def test_taxonomy_counts_and_shares():
    records = [rec([OK_CLICK, EXIT], terminated=True, success=True), rec([BAD] * 5),
               rec([OK_CLICK, EXIT], terminated=True, site="forum"), rec([OK_CLICK, EXIT], terminated=True)]  # fmt: skip
    t = taxonomy(records)
    assert t["failed"] == 3
    assert t["counts"]["wrong_page"] == 2 and t["counts"]["fail_to_attempt"] == 1
    assert t["shares"]["wrong_page"] == round(2 / 3, 3)
    assert t["per_site"]["forum"]["wrong_page"] == 1


def test_success_by_oracle_step_bucket():
    records = [rec([EXIT], success=True, difficulty=2, task_id=1), rec([EXIT], difficulty=3, task_id=2),
               rec([EXIT], success=True, difficulty=5, task_id=3), rec([EXIT], difficulty=12, task_id=4)]  # fmt: skip
    b = by_step_bucket(records)
    assert b["1-3"] == {"success_rate": 0.5, "episodes": 2}
    assert b["4-9"] == {"success_rate": 1.0, "episodes": 1}
    assert b["10+"] == {"success_rate": 0.0, "episodes": 1}
    no_field = [{k: v for k, v in r.items() if k != "difficulty"} for r in records]
    assert by_step_bucket(no_field, {"1": 2, "2": 3, "3": 5, "4": 12}) == b
