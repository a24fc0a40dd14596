"""Text: answer normalization and F1 variants, reply labels, counts in messages ("1 error"),
quantities with units."""
