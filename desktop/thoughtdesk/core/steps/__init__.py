"""Steps of CoTs, reference CoTs and reasoning traces, and the labels people and models give them
(issue 25; docs/steps.md)."""
