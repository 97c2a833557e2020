"""qnbench never touches files it did not create (black box, real files).

The file engine works only inside a new directory it makes itself; these tests plant foreign
files and symbolic links where qnbench would meet them and check that nothing foreign is read,
written, followed or removed, and that the run says so.
"""

from __future__ import annotations

import json
import subprocess
import time

from qnmodel.bench import schema


def _start(qnbench_exe, tmp_path, *extra):
    return subprocess.Popen(
        [str(qnbench_exe), "--engine", "file", "--dir", str(tmp_path), "--size", "256KiB",
         "--bs", "4KiB", "--rw", "randwrite", "--warmup", "0", *map(str, extra)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for(pattern, tmp_path, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(tmp_path.glob(pattern))
        if found:
            return found[0]
        time.sleep(0.005)
    raise AssertionError(f"qnbench did not create {pattern} within {timeout} s")


def test_foreign_file_in_its_directory_is_left_with_the_directory(qnbench_exe, tmp_path):
    # a file somebody else puts into qnbench's own directory during the run survives the
    # cleanup, and so does the directory; qnbench's own files are removed and it says why
    p = _start(qnbench_exe, tmp_path, "--runtime", "1s")
    job0 = _wait_for("qnbench-*/job0.dat", tmp_path)
    foreign = job0.parent / "notes.txt"
    foreign.write_bytes(b"someone else's")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    schema.validate(json.loads(out))
    assert foreign.read_bytes() == b"someone else's"
    assert sorted(x.name for x in job0.parent.iterdir()) == ["notes.txt"]
    assert "left directory" in err and "did not create" in err


def test_planted_symlink_is_not_followed_and_the_point_fails(qnbench_exe, tmp_path):
    # between the 1-job point and the 2-job point a symlink named like the next job's file is
    # planted in qnbench's directory, pointing at a precious file: creation must refuse it
    # (O_EXCL|O_NOFOLLOW), the precious file must be untouched and the link left in place
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"do not touch" * 100)
    p = _start(qnbench_exe, tmp_path, "--runtime", "1s", "--jobs", "1,2")
    job0 = _wait_for("qnbench-*/job0.dat", tmp_path)
    link = job0.parent / "job1.dat"
    link.symlink_to(precious)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1, err
    doc = json.loads(out)
    schema.validate(doc)
    assert doc["complete"] is False
    assert [r["jobs"] for r in doc["results"]] == [1] and doc["results"][0]["complete"]
    assert any("job1.dat" in e and "EEXIST" in e for e in doc["errors"]), doc["errors"]
    assert precious.read_bytes() == b"do not touch" * 100
    assert link.is_symlink() and sorted(x.name for x in job0.parent.iterdir()) == ["job1.dat"]


def test_dir_that_is_a_symlink_to_foreign_files_gets_only_a_new_subdirectory(qnb, tmp_path):
    # --dir pointing (through a link) at a directory full of foreign files: qnbench works in a
    # new subdirectory of its own and leaves every foreign name and byte as it was
    real = tmp_path / "real"
    real.mkdir()
    for name in ("job0.dat", "job1.dat", "serve.dat"):
        (real / name).write_bytes(name.encode() * 10)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    rc, doc, _, err = qnb("--engine", "file", "--dir", link, "--size", "64KiB", "--bs", "4KiB",
                          "--rw", "write", "--jobs", "1,2", "--runtime", "30ms")  # fmt: skip
    assert rc == 0, err
    assert doc["complete"] is True
    assert sorted(x.name for x in real.iterdir()) == ["job0.dat", "job1.dat", "serve.dat"]
    for name in ("job0.dat", "job1.dat", "serve.dat"):
        assert (real / name).read_bytes() == name.encode() * 10


def test_meta_refuses_a_planted_directory_link_and_removes_only_its_own(qnbench_exe, tmp_path):
    # between the 1-job and the 2-job create phase a symlink named like job 1's directory is
    # planted, pointing at a directory of precious files: mkdirat refuses it (EEXIST), nothing
    # behind the link is created, read or removed, and the link is left where it was
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "f0").write_bytes(b"keep")
    p = subprocess.Popen(
        [str(qnbench_exe), "--engine", "meta", "--dir", str(tmp_path), "--files", "3000",
         "--jobs", "1,2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    d0 = _wait_for("qnbench-*/mdtest.0", tmp_path)
    link = d0.parent / "mdtest.1"
    link.symlink_to(precious, target_is_directory=True)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    doc = schema.validate(json.loads(out))
    assert doc["complete"] is False
    assert [r["jobs"] for r in doc["results"]] == [1, 1, 1, 1]
    assert all(r["complete"] and r["ops"] == 3000 for r in doc["results"])
    assert any("mdtest.1" in e and "EEXIST" in e for e in doc["errors"]), doc["errors"]
    assert sorted(x.name for x in precious.iterdir()) == ["f0"]
    assert (precious / "f0").read_bytes() == b"keep"
    assert link.is_symlink() and sorted(x.name for x in d0.parent.iterdir()) == ["mdtest.1"]


def test_meta_file_replaced_by_a_link_is_refused_not_followed(qnbench_exe, tmp_path):
    # a file of the create phase replaced by a symlink before the stat phase: stat refuses
    # it (not the regular file it created), open would not follow it (O_NOFOLLOW)
    precious = tmp_path / "precious.dat"
    precious.write_bytes(b"keep")
    p = subprocess.Popen(
        [str(qnbench_exe), "--engine", "meta", "--dir", str(tmp_path), "--files", "200000",
         "--meta-op", "create,stat", "--runtime", "1s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    f0 = _wait_for("qnbench-*/mdtest.0/f0", tmp_path)
    f0.unlink()
    f0.symlink_to(precious)
    out, err = p.communicate(timeout=120)
    doc = schema.validate(json.loads(out))
    assert p.returncode == 1 and doc["complete"] is False, err
    assert any("f0" in e and "not the regular file" in e for e in doc["errors"]), doc["errors"]
    assert precious.read_bytes() == b"keep"
