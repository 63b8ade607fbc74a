"""bench_cell's bad input ends in one line naming the value and where it came from, before any
cell is built: a cell file with a bad key, an image size that is not WxH."""
import pytest

from benchmarks import bench_cell


def test_a_bad_cell_file_ends_in_its_reason_not_a_traceback(tmp_path):
    bad = tmp_path / "jaw.yaml"
    bad.write_text("gripper: {open_width_m: -1}\n")
    with pytest.raises(SystemExit) as exc:
        bench_cell.main(["--cell", str(bad), "--trials", "1", "--best", "0",
                         "--out", str(tmp_path / "out")])
    text = str(exc.value.code)
    assert text.startswith("bench_cell: ") and str(bad) in text
    assert "gripper.open_width_m" in text and "\n" not in text


def test_an_image_size_that_is_not_w_x_h_is_named():
    with pytest.raises(SystemExit) as exc:
        bench_cell.main(["--image", "640x", "--trials", "1", "--best", "0"])
    assert "--image must be WxH" in str(exc.value.code) and "'640x'" in str(exc.value.code)
