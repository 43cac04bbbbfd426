"""Search strategies that prune tiling and layout candidates with a cost model.

- :class:`PruningSearch`: a MetaSchedule search strategy that scores a large pool of
  candidates each round and measures only the top-k plus an exploration share.
- :func:`layout_search`: scores many layout configurations of a Relax model and measures
  only the top-k (``tgraph layout search``).
- :class:`TimedSearch`: wraps any MetaSchedule search strategy and times its proposing
  (what ``tgraph compare`` reports as the search's own share of the wall time).
"""

from .layout import LayoutSearchResult, layout_search
from .pruning import PruningSearch, select_top_k_and_explore
from .timed import TimedSearch

__all__ = ["LayoutSearchResult", "PruningSearch", "TimedSearch", "layout_search", "select_top_k_and_explore"]
