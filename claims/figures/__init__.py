"""The report's figures, one module per claim (each exports ``FIGURES``, the claim spec's figures)."""
