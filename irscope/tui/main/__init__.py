"""The main view of `irscope FILE`.

- screen.py: `MainScreen`, the app's default screen: keys and actions, the status line and header, the
  info panels, the prompt bar, what the file opened to and the requests to the worker process.
- linked_panes.py: `LinkedPanes`, the panes it composes: what they show, their layout, the links
  between their lines and the line kept across recompiles and reloads.
- panes.py: one pane (a title over a StageView), the layouts' arithmetic, a pane's title.
- texts.py: the header line and the picker's rows; heap.py: how the garbage collector is spared.
"""

from irscope.tui.main.screen import MainScreen

__all__ = ["MainScreen"]
