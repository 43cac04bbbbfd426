"""tvm-tgraph: a learned tuner for Apache TVM built on TGraph.

TGraph (Khizbullin et al., arXiv 2405.16623) ranks the configurations of a computational
graph with a graph neural network whose layers also attend across the configurations of
the same graph. This package holds the converters from TVM programs to configured graphs,
the network, its losses, training, metrics and the ``tgraph`` command. Importing it is
cheap: TVM and torch are imported by the modules that need them.
"""

__version__ = "0.1.0"
