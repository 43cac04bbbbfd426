"""Search strategies that prune tiling and layout candidates with a cost model.

- :class:`PruningSearch`: a MetaSchedule search strategy that scores a large pool of
  candidates each round and measures only the top-k plus an exploration share.
- :func:`layout_search`: scores many layout configurations of a Relax model and measures
  only the top-k (``tgraph layout search``).
"""

from .layout import LayoutSearchResult, layout_search
from .pruning import PruningSearch, select_top_k_and_explore

__all__ = ["LayoutSearchResult", "PruningSearch", "layout_search", "select_top_k_and_explore"]
