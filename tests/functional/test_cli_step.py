"""`irscope step`: values of one program at a line, printed for scripts; bad input is one line."""

from conftest import fixture_path, kernel_path


def test_add_program_1_offsets_and_mask_at_the_first_load(cli):
    code, out, err = cli(
        "step", kernel_path("add.py"), "--program", "1", "--break", "26", "--print", "offsets,mask"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert (
        "add_kernel program (1,0,0) of grid (4,1,1): stopped before" in lines[0]
        and "add.py:26" in lines[0]
    )
    assert "tl.load(x_ptr + offsets, mask=mask)" in lines[1]
    assert "offsets = int32[1024] min 1024 max 2047" in out
    assert "[1024 1025 1026 1027 ... 2044 2045 2046 2047]" in out
    assert "mask = int1[1024] 1024/1024 on  (mask)" in out


def test_full_prints_every_element(cli):
    code, out, _ = cli(
        "step", kernel_path("softmax.py"), "-p", "0", "-b", "26", "--print", "mask", "--full"
    )
    assert code == 0
    numbers = out.split("(mask)")[1].replace("[", " ").replace("]", " ").split()
    assert numbers == ["1"] * 781 + ["0"] * 243


def test_hit_picks_a_loop_iteration(cli):
    code, out, _ = cli(
        "step", kernel_path("helper.py"), "-p", "2", "-b", "33", "--hit", "4", "--print", "c"
    )
    assert code == 0
    assert "c = int32[256] min 768 max 1023" in out


def test_end_of_program_without_break(cli):
    code, out, _ = cli("step", kernel_path("matmul.py"), "-p", "1,1", "--print", "acc")
    assert code == 0
    assert "finished after" in out and "acc = fp32[64,64]" in out


def test_out_of_bounds_is_a_final_step_and_exit_1(cli):
    code, out, err = cli("step", fixture_path("out_of_bounds.py"), "-p", "1", "--print", "offsets")
    assert code == 1
    assert "stopped by an exception at" in out and "out_of_bounds.py:12" in out
    assert err.count("\n") == 1 and "x_ptr[256]" in err and "Traceback" not in err


def test_bad_inputs_are_one_line(cli):
    code, _, err = cli("step", kernel_path("add.py"), "-p", "9")
    assert code == 2 and "outside the launch's grid (4,1,1)" in err and err.count("\n") == 1
    code, _, err = cli("step", kernel_path("add.py"), "-p", "x")
    assert code == 2 and "--program 'x'" in err
    code, _, err = cli("step", kernel_path("add.py"), "-b", "5")
    assert (
        code == 2 and "--break 5: that line never runs" in err and "22, 24, 25, 26, 27, 28" in err
    )
    code, _, err = cli("step", kernel_path("add.py"), "-b", "26", "--print", "nope")
    assert code == 2 and "nope not defined at line 26" in err and "offsets" in err


def test_hit_below_one_or_without_break_is_an_error(cli):
    for extra in (["-b", "26", "--hit", "0"], ["--hit", "3"]):
        code, out, err = cli("step", kernel_path("add.py"), *extra)
        assert code == 2 and out == ""
        assert (
            err.startswith("irscope: error: --hit ")
            and "--break LINE" in err
            and "Traceback" not in err
        )


def test_a_define_that_names_nothing_is_rejected_as_dump_rejects_it(cli):
    """-D FOO=1 names no parameter of add_kernel and no launch option: one line, as dump and report say."""
    code, out, err = cli("step", kernel_path("add.py"), "-D", "FOO=1", "--print", "mask")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "FOO was specified but unrecognised" in err and "(-D FOO=1)" in err
    _, _, dump_err = cli("dump", kernel_path("add.py"), "-D", "FOO=1")
    assert dump_err == err
    code, out, _ = cli(
        "step", kernel_path("add.py"), "-D", "BLOCK_SIZE=512", "-p", "1", "--print", "offsets"
    )
    # a -D that names a parameter works
    assert code == 0 and "offsets = int32[512] min 512 max 1023" in out
