"""The pydantic-evals format: read, write, field map and evaluators live in this package's modules."""
from .format import FORMAT

__all__ = ["FORMAT"]
