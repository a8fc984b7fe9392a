"""How often a run's cyclic garbage collector runs: rarely.

It re-scans what a run reads (parsed JSON, frozen records), which reference counting frees
anyway: at its default thresholds, 0.55-0.8 s of a 5000-instance describe (775 collections),
and 28 collections while click and the command line load. It runs rarely rather than never
(0.08 s, 21 collections): a followed deletion, or a watch, runs long and leaves cycles (a
traceback per reconnect).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Allocations before a young collection, young collections before an older one, and so on.
RARE_COLLECTIONS = (200_000, 50, 100)


@contextlib.contextmanager
def rare_collections(restore: bool) -> Iterator[None]:
    """Collections made rare; the thresholds before restored after, if restore (a caller in
    the same process, such as a test)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(*RARE_COLLECTIONS)
    try:
        yield
    finally:
        if restore:
            gc.set_threshold(*thresholds)
