"""Report models and their renderers (HTML, Markdown, JSON).

Models compute once from results; renderers only format. Nothing here reads input files or prints.
"""
