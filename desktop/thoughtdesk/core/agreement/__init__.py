"""Agreement statistics shared by the review workbench and the critique analysis: Krippendorff's
alpha at every level, Spearman and Kendall with intervals, AUROC (``statistics``); Cohen's and
Fleiss' kappa and percent agreement (``kappa``). Below critiques and review, above nothing of
ThoughtDesk (numpy and scipy loaded on first use). No Qt."""
