"""Search strategies that prune tiling and layout candidates with a cost model.

- :class:`PruningSearch`: a MetaSchedule search strategy that scores a large pool of
  candidates each round and measures only the top-k plus an exploration share.
"""

from .pruning import PruningSearch, select_top_k_and_explore

__all__ = ["PruningSearch", "select_top_k_and_explore"]
