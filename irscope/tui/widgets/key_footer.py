"""A footer fitted to the terminal's width (the main view's and the stepper's).

With every key and its full description the main view's footer needs about 120 columns, the stepper's
about 130; narrower, Textual cuts it off at the right edge, and the keys cut off were the ones a newcomer
needs (/ t e r i f in the main view, esc ? in the stepper). So when the full footer does not fit, the
descriptions get shorter; when that still does not fit, the minor keys (the main view's keys for
looks: block jumps, maximise, layout, colours, debug) leave the footer, and then the command palette's
key (^p): `?` lists every key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

PALETTE_WIDTH = 12  # "▏^p palette", docked on the right


class KeyFooter(Footer):
    """A compact footer that shortens its descriptions, then drops its `minor` keys, to fit."""

    def __init__(self, short: dict[str, str], minor: frozenset[str], **kwargs) -> None:
        super().__init__(compact=True, **kwargs)
        self.short = short  # action -> a shorter description
        self.minor = minor  # actions left out first when even the short footer does not fit
        self._fitted_width = -1

    def compose(self) -> ComposeResult:
        keys = list(super().compose())  # the main view uses no binding groups: a flat list of keys
        width = self.app.size.width
        self._fitted_width = width
        listed = [key for key in keys if _is_key(key) and not key.has_class("-command-palette")]
        if _width(listed) + PALETTE_WIDTH > width:
            for key in listed:
                key.description = self.short.get(key.action, key.description)
            if _width(listed) + PALETTE_WIDTH > width:
                keys = [key for key in keys if not (_is_key(key) and key.action in self.minor)]
                kept = [
                    key for key in keys if _is_key(key) and not key.has_class("-command-palette")
                ]
                # last: the palette's key (`?` names ctrl+p)
                if _width(kept) + PALETTE_WIDTH > width:
                    keys = [
                        key
                        for key in keys
                        if not (_is_key(key) and key.has_class("-command-palette"))
                    ]
        yield from keys

    def on_resize(self) -> None:
        if self.app.size.width != self._fitted_width:
            self.call_after_refresh(self.recompose)


def _is_key(widget: Widget) -> bool:
    """A footer key (Textual's FooterKey, which it does not export): a key, its description, its action."""
    return all(hasattr(widget, name) for name in ("key_display", "description", "action"))


def _width(keys: list) -> int:
    """Columns the compact footer takes: `k Description` and a space after each."""
    return sum(len(key.key_display) + 1 + len(key.description) + 1 for key in keys)
