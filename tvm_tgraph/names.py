"""The names cost models and search strategies are chosen by, kept in one module without TVM
imports, so that the command line lists them without loading TVM.

``cost_models.create`` makes a cost model from each of :data:`COST_MODELS`,
``tvm_tgraph.workflows.tuning.make_strategy`` a strategy from each of :data:`STRATEGIES`.
"""

#: TGraph (online fine-tuning), TGraph frozen, TGraph blended online with its XGBoost fallback,
#: TGraph fine-tuned and blended with its fallback, TVM's XGBoost as shipped and with 16 warm-up
#: samples, random.
COST_MODELS = ("tgraph", "tgraph-frozen", "tgraph-xgb", "tgraph-ft-xgb", "xgb", "xgb-warm16", "random")

#: MetaSchedule's own searches, the project's pruning search in four sizes, the light one
#: with explorers picked by the TGraph cost model's uncertainty, the light one with smaller
#: pools (the pool-size measurement), with a smaller proposer population (the screening-cost
#: measurement) and halving its population while the cost model's share is above 20%.
STRATEGIES = ("evolutionary", "replay-trace", "pruning", "pruning-light", "pruning-fast", "pruning-fast-256",
              "pruning-light-ucb", "pruning-light-pool64", "pruning-light-pool128", "pruning-light-pop192",
              "pruning-light-share20")
