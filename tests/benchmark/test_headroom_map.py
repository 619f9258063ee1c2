"""The headroom map: ``headroom_map_cases.py`` in a process of their own (``run_cases``)."""


def test_the_cases_pass_in_a_process_of_their_own(run_cases):  # noqa: D103
    run_cases("benchmark/headroom_map_cases.py")
