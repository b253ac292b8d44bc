"""How many examples each property test draws, by Hypothesis profile.

Each test names its *thorough* count (what it drew before profiles existed); the profile in
``$HYPOTHESIS_PROFILE`` takes a share of it:

* ``thorough``: the whole count (``make test-thorough``, before a release or after touching an
  invariant's code);
* ``ci``: three tenths, the default, what ``make test`` runs (it keeps ``make test`` within its
  10 minutes beside the end-to-end modules; ``make test-thorough`` is the full count);
* ``dev``: a fifth, for ``make check``'s inner loop.

Tests that name no count get the profile's ``max_examples`` (100, 40 and 20). No deadline in any
profile: these machines are noisy, and a slow example is not a wrong one.
"""

from __future__ import annotations

import os

from hypothesis import settings

SHARES = {"thorough": 1.0, "ci": 0.3, "dev": 0.2}
DEFAULT_EXAMPLES = 100
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in SHARES:
    raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}: use one of {', '.join(SHARES)}")

for _name, _share in SHARES.items():
    settings.register_profile(_name, max_examples=round(DEFAULT_EXAMPLES * _share),
                              deadline=None)
settings.load_profile(PROFILE)


def examples(thorough: int) -> int:
    """This profile's share of a test's thorough count, and never fewer than 10 (nor more than
    ``thorough``): ``examples(1500)`` is 450 under ``ci``, 300 under ``dev``."""
    return min(thorough, max(10, round(thorough * SHARES[PROFILE])))
