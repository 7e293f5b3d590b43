"""The Review tab's side-by-side comparison, without Qt: sentences, similarity, word diffs, colours."""
