"""The mlflow format: MLflow GenAI evaluation dataset records. Every import in this package is
absolute, so `import mlflow` in it is the real MLflow, never this package."""
from .format import FORMAT

__all__ = ["FORMAT"]
