"""A least-recently-used cache of per-candidate features, filled a batch at a time."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence


class LruCache:
    """Keeps the values of the ``size`` most recently used keys.

    Parameters
    ----------
    size : int
        Keys kept; a batch larger than this is returned whole, then trimmed.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict = OrderedDict()

    def __len__(self) -> int:
        return len(self._values)

    def get_batch(self, keys: Sequence[Hashable], compute: Callable[[list[int]], list]) -> list:
        """The values of ``keys``; those not kept are ``compute(indices)``'s, one per index of
        ``keys`` missing, in that order. The batch's keys become the most recent."""
        missing = [i for i, key in enumerate(keys) if key not in self._values]
        if missing:
            for i, value in zip(missing, compute(missing)):
                self._values[keys[i]] = value
        found = []
        for key in keys:
            self._values.move_to_end(key)
            found.append(self._values[key])
        while len(self._values) > self.size:
            self._values.popitem(last=False)
        return found
