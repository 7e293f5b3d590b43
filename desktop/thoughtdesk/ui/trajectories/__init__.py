"""The trajectory of a guided CoT (docs/rationales.md), below the features that open it: the
Samples detail and the Review tab."""
