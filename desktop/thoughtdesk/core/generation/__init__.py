"""Generating CoTs: prompt fragments and templates, model backends, runs."""
