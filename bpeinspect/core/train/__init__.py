"""Training: count pre-tokens, merge pairs incrementally, report progress, stop when asked.

>>> from bpeinspect.core.train import train_tokenizer
>>> train_tokenizer("ab ab ab", 257, pattern=None).merges
[(97, 98)]
"""

from bpeinspect.core.train.run import TrainedMerge, TrainingProgress, TrainingRun, train_tokenizer

__all__ = ["TrainedMerge", "TrainingProgress", "TrainingRun", "train_tokenizer"]
