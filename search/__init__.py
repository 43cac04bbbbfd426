"""Search strategies that prune tiling and layout candidates with a cost model.

The pruning search is built in the pruning-search issue; MetaSchedule's
``EvolutionarySearch`` drives every tuning run until then.
"""
