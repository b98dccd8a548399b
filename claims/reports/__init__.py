"""The reports: terminal, JSON, Markdown, HTML and figures, drawn from typed records; compare and re-judge."""
