"""Grounders COVER can certify beyond prediction files: video-LLM answers parsed from free
text, a live model endpoint, ensembles of checkpoints, human annotators, and a small
grounder that trains and runs here on CPU. Each one ends as a prediction table that every
COVER command reads."""
