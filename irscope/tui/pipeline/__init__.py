"""The pipeline view: the compiler pass by pass for the compilation shown (`P` in the main view)."""

from irscope.tui.pipeline.screen import PipelineScreen

__all__ = ["PipelineScreen", "open_pipeline"]


def open_pipeline(main) -> None:
    if main.shown is None or main.session is None:
        main.notify("open a kernel first", timeout=2)
        return
    if not main.shown.comp.ok:
        main.notify(
            f"{main.shown.comp.kernel.name} did not compile: no passes to show", severity="warning"
        )
        return
    main.app.push_screen(PipelineScreen(main))
