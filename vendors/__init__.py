"""One module per vendor format (promptfoo, deepeval, langsmith, braintrust), each exposing FORMAT."""
