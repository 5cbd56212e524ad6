"""Widgets the screens share: the stage views, line lists, the key footer, value grids."""
