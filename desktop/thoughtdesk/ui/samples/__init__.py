"""The Samples tab (Ctrl+1): collections, the sample table and the selected sample."""
