"""The headless core: discover, capture, compile, stages. Never imports Textual."""
