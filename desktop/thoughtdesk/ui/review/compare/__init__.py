"""One sample's CoTs side by side, similarity-highlighted, with a word diff."""
