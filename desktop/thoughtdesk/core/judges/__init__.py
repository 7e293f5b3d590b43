"""Pairwise judges (issue 26; docs/judges.md): the pairwise template, the tolerant verdict
parser, the stored verdicts (table ``judge_verdict``) and the figures over them (position
consistency, first-position rate, wins, Bradley-Terry strengths). Judge *runs* are generation
runs with a ``judge`` step (:mod:`thoughtdesk.core.generation.runs.judge`)."""
