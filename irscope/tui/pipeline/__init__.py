"""The pipeline view: the compiler pass by pass for the compilation shown (`P` in the main view)."""

from .screen import PipelineScreen

__all__ = ["PipelineScreen", "open_pipeline"]


def open_pipeline(app) -> None:
    if app.shown is None or app.session is None:
        app.notify("open a kernel first", timeout=2)
        return
    if not app.shown.comp.ok:
        app.notify(f"{app.shown.comp.kernel.name} did not compile: no passes to show", severity="warning")
        return
    app.push_screen(PipelineScreen(app))
