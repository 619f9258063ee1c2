"""``ecngym reproduce``: one module per paper, each printing the paper's figures beside ours.

A paper module (``reproduce/<id with underscores>.py``) defines:

``PAPER_ID``
    The command-line name (``"pred-fcs"``).
``TITLE``
    One line: authors, venue, what is reproduced.
``run(quick: bool = False) -> list[Claim]``
    Runs its small real simulations and returns one :class:`Claim` per must-show claim. ``quick``
    shrinks the runs (fewer seeds / shorter) for tests; the default is the full command, a few
    minutes at most on a 2-core machine.

:func:`papers` discovers the modules, :func:`report` prints the rich table and the final JSON
line ``{"paper": ..., "claims": [{"id", "metric", "paper", "ours", "direction_holds",
"within_bar"}, ...]}``. A claim that does not hold is reported as not holding, with the reason in
its ``note``; nothing is tuned to make it pass.
"""

from ecngym.reproduce.core import Claim, papers, report

__all__ = ["Claim", "papers", "report"]
