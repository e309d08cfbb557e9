"""The Comet Opik datasets and test suites format: read, write and field map live in this package's modules."""
from .format import FORMAT

__all__ = ["FORMAT"]
