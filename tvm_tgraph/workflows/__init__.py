"""End-to-end procedures built on the core: tuning, comparing, collecting, evaluating.

The layer above :mod:`cost_models` and :mod:`search`, below :mod:`tvm_tgraph.cli`:

- :mod:`.tuning`: tune a module with MetaSchedule and a chosen cost model (the one place
  that calls ``ms.tune_tir`` / ``tune_relax``);
- :mod:`.compare`: the side-by-side comparison against XGBoost (``tgraph compare``);
- :mod:`.collect`: the workload suite and the resumable collector (``tgraph collect``);
- :mod:`.pretraining`: training the TIR cost model on a tuning database (``tgraph train``);
- :mod:`.evaluate`: ranking evaluation against TVM's XGBoost and MLP (``tgraph eval``);
- :mod:`.layout`: measuring, training and searching Relax layout configurations;
- :mod:`.tpugraphs`: training and evaluation on TpuGraphs collections;
- :mod:`.end_to_end`: whole-model builds and their end-to-end timing.
"""
