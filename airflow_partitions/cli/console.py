"""The rule every command (and ``make demo``) prints by: fold nothing when the output is a file.

Rich folds at 80 columns when it cannot ask a terminal, which cuts paths and values in logs and
pipes (``catalog sqlite:////…/c…``). So when the output is not a terminal and ``$COLUMNS`` is
not set, lines are laid out 200 columns wide; on a terminal, its own width.
"""

from __future__ import annotations

import os
from typing import IO, Final

from rich.console import Console

#: The width used when the output is not a terminal and ``$COLUMNS`` says nothing.
PIPED_WIDTH: Final = 200


def console_for(file: IO[str], *, highlight: bool = False) -> Console:
    """A rich console on ``file``: the terminal's width, else ``$COLUMNS``, else 200."""
    terminal = file.isatty()
    return Console(
        file=file,
        highlight=highlight,
        width=None if terminal or os.environ.get("COLUMNS") else PIPED_WIDTH,
        force_terminal=terminal,
        soft_wrap=False,
    )
