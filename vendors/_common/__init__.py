"""Helpers shared by the vendor packages."""
