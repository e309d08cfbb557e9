"""The Hugging Face datasets format ("hf"): a dataset folder of Parquet data and a card."""
from .format import FORMAT

__all__ = ["FORMAT"]
