"""A user's file is compiled as Python would compile it (engine/capture/discover.py)."""

from irscope.engine.capture.discover import read_user_file


def test_annotations_are_the_objects_the_file_wrote_not_strings(tmp_path):
    """irscope's own modules use `from __future__ import annotations`, which `compile()` passes on to the code
    it compiles unless told not to: every annotation in the user's file became a string, and Gluon tutorial
    07's aggregates (a field typed `Union[warpgroup_mma_accumulator, gl.tensor]`) failed to compile with
    "isinstance() arg 2 must be a type" where Python and the GPU compile them."""
    path = tmp_path / "annotated.py"
    path.write_text(
        "from typing import Union\n\ndef f(x: int, y: Union[int, str]) -> str:\n    return ''\n"
    )
    namespace = {"__name__": "annotated"}
    exec(read_user_file(str(path)).code, namespace)
    assert namespace["f"].__annotations__ == {"x": int, "y": int | str, "return": str}
