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
    seq = [("list", "click 1"), ("note", "back"), ("list", "click 1"), ("note", "back"), ("list", "click 1")]
    stops = [g.update(obs, act, invalid=False) for obs, act in seq]
    assert stops == [False, False, False, False, True] and g.revisits == 3
    g.reset()
    assert not g.update("list", "click 1", invalid=False) and g.revisits == 1
    assert not g.update("other page", "click 1", invalid=False) and g.revisits == 1  # same action, new page


def test_zero_turns_both_rules_off():
    g = NoProgress(0, 0)
    assert not any(g.update("p", "a", invalid=True) for _ in range(50))
