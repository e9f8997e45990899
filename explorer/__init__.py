"""ir-explorer's headless core: loaders, the Document model, analyses and the CLI.

Nothing in this package imports Textual or Rich; the TUI in ``widgets`` is a view over it.
"""

__version__ = "0.1.0"
