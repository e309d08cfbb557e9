"""The OpenAI Evals format (`openai-evals`): the Evals API's JSONL items and the legacy registry JSONL."""
from .format import FORMAT

__all__ = ["FORMAT"]
