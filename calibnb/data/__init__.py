"""Loaders for the real data the notebooks use, and the project's own small data."""
