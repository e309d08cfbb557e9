"""Interop with the data stack: pandas frames and Ragas dataset objects."""
