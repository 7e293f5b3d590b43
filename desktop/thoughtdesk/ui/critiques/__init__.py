"""Critiques in the GUI: the pieces the Samples detail, the Review tab, the Results tab and the
Generate menu show critiques and human ratings with (a layer below those features, so each of
them may use these widgets; see docs/design.md, "Layers")."""
