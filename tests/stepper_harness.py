"""A minimal Textual app that shows only the stepper screen (the main app pushes it from its own view)."""

from textual.app import App

from irscope.tui.stepper import StepperScreen


class StepperHarness(App):
    def __init__(self, session, comp, program_id=(0,)):
        super().__init__()
        # comp: a view from the worker
        self.session, self.comp, self.program_id = (
            session,
            comp,
            program_id,
        )

    def on_mount(self) -> None:
        self.push_screen(StepperScreen(self.comp, self.program_id))


async def wait_recorded(pilot, timeout: float = 30.0) -> StepperScreen:
    screen = pilot.app.screen
    waited = 0.0
    while (
        isinstance(screen, StepperScreen)
        and screen.stepper is None
        and screen.failure is None
        and waited < timeout
    ):
        await pilot.pause(0.05)
        waited += 0.05
        screen = pilot.app.screen
    await pilot.pause()
    return screen
