"""Scoring answers and measuring accuracy: extraction, metrics, re-scoring, accuracy tables."""
