from webrl.env.early_stop import NoProgress


def test_repeats_count_identical_or_invalid_actions_in_a_row():
    g = NoProgress(max_repeats=3, max_revisits=0)
    assert not g.update("p1", "a", invalid=False)  # first: nothing to repeat
    assert not g.update("p2", "a", invalid=False) and g.repeats == 1
    assert not g.update("p3", None, invalid=True) and g.repeats == 2  # unparsable counts
    assert not g.update("p4", "b", invalid=False) and g.repeats == 0  # a new valid action resets
    assert not g.update("p4", "b", invalid=False)
    assert not g.update("p4", "b", invalid=False)
    assert g.update("p4", "b", invalid=False) and g.repeats == 3


def test_revisits_count_action_on_same_observation_across_the_episode():
    g = NoProgress(max_repeats=0, max_revisits=3)
    seq = [("list", "click 1"), ("note", "back")] * 3
    stops = [g.update(obs, act, invalid=False) for obs, act in seq]
    # "note" is new at step 2, so counting starts over there: "back" on it is the first to reach 3
    assert stops == [False] * 5 + [True] and g.revisits == 3
    g.reset()
    assert not g.update("list", "click 1", invalid=False) and g.revisits == 1
    assert not g.update("other page", "click 1", invalid=False) and g.revisits == 1  # same action, new page


def test_a_page_never_seen_before_resets_the_revisit_count():
    g = NoProgress(max_repeats=0, max_revisits=3)
    # walking a list: the list page and the action back to it repeat, but each item page is new
    walk = [("forum", "new"), ("list", "click 1"), ("item 1", "upvote"), ("item 1 voted", "forum"),
            ("forum", "new"), ("list", "click 2"), ("item 2", "upvote"), ("item 2 voted", "forum"),
            ("forum", "new"), ("list", "click 3"), ("item 3", "upvote"), ("item 3 voted", "forum"),
            ("forum", "new")]  # fmt: skip
    assert not any(g.update(obs, act, invalid=False) for obs, act in walk)
    # a cycle through known pages only still stops
    cycle = [("list", "click 1"), ("item 1", "back"), ("list", "click 1"), ("item 1", "back"), ("list", "click 1")]
    assert [g.update(obs, act, invalid=False) for obs, act in cycle] == [False] * 4 + [True]


def test_zero_turns_both_rules_off():
    g = NoProgress(0, 0)
    assert not any(g.update("p", "a", invalid=True) for _ in range(50))
