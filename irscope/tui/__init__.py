"""The terminal UI (Textual). Nothing in `irscope.core` imports this package."""
