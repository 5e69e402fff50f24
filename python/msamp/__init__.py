"""msamp: an MLIR compiler that turns exported training graphs into FP8 training steps."""

__version__ = "0.1.0"
