"""hopscore.files.outputs: one writer per output (two real processes), location checks, no output
that is an input, environment faults named (real small and read-only file systems)."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hopscore.files.output_checks import MIN_FREE_BYTES, check_location, refuse_inputs
from hopscore.files.output_locks import DIR_LOCK, holds, lock_path
from hopscore.files.output_specs import Input, OutputError
from hopscore.files.outputs import claim, environment_error, output_dir, output_file
from tests.conftest import SRC

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hopscore.files.outputs import claim, output_dir, output_file
    path, kind = Path(sys.argv[1]), sys.argv[2]
    out = output_dir(path, writes=("samples.jsonl",)) if kind == "dir" else output_file(path)
    with claim(out):
        print("locked", flush=True)
        sys.stdin.readline()
""")


def _holder(path: Path, kind: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), kind], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _second(path: Path, kind: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        from hopscore.files.output_specs import OutputBusy
        from hopscore.files.outputs import claim, output_dir, output_file
        path, kind = Path(sys.argv[1]), sys.argv[2]
        out = output_dir(path) if kind == "dir" else output_file(path)
        try:
            with claim(out):
                print("got it")
        except OutputBusy as exc:
            print(f"busy {exc.pid}|{exc}")
    """)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-c", script, str(path), kind], env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", ["file", "dir"])
def test_a_second_process_is_refused_naming_the_holder(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ("out.jsonl" if kind == "file" else "run")
    holder = _holder(path, kind)
    try:
        started = time.monotonic()
        second = _second(path, kind)
        assert time.monotonic() - started < 10
        assert second.stdout.startswith(f"busy {holder.pid}|"), second
        assert str(path) in second.stdout
        assert f"pid {holder.pid}" in second.stdout
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    # released: the lock file is gone and the next process gets the output
    out = output_dir(path) if kind == "dir" else output_file(path)
    assert not lock_path(out).exists()
    assert _second(path, kind).stdout.strip() == "got it"


def test_a_file_a_directory_writes_is_locked_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    holder = _holder(run, "dir")
    try:
        second = _second(run / "samples.jsonl", "file")
        assert second.stdout.startswith(f"busy {holder.pid}|"), second
        # another file in the same folder is another output
        assert _second(run / "other.jsonl", "file").stdout.strip() == "got it"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)


def test_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    holder = _holder(path, "file")
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)
    assert lock_path(output_file(path)).exists()  # the stale file stays, but not its lock
    assert _second(path, "file").stdout.strip() == "got it"


def test_locks_are_reentrant_in_one_process(tmp_path: Path) -> None:
    out = output_dir(tmp_path / "run", writes=("a.jsonl",))
    with claim(out):
        assert holds(tmp_path / "run")
        assert holds(tmp_path / "run" / "a.jsonl")
        with claim(output_file(tmp_path / "run" / "a.jsonl")):  # a library re-claims it
            pass
        assert (tmp_path / "run" / DIR_LOCK).exists()
        holder = json.loads((tmp_path / "run" / DIR_LOCK).read_text())
        assert holder["pid"] == os.getpid()
    assert not holds(tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == []


def test_location_checks(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    cases = [
        (output_file(tmp_path / "missing" / "out.jsonl", create_parents=False),
         "does not exist"),
        (output_dir(tmp_path / "missing" / "run", create_parents=False), "does not exist"),
        (output_dir(tmp_path / "file"), "is a file, expected a directory"),
        (output_file(tmp_path / "folder"), "is a directory, expected a file"),
        (output_file(tmp_path / "file" / "out.jsonl"), "is a file, not a folder"),
        (output_file(Path("/dev/null")), "is a device"),
        (output_dir(tmp_path / "folder", writes=("scores.jsonl",)), None),
    ]
    (tmp_path / "folder" / "scores.jsonl").mkdir()
    cases[-1] = (cases[-1][0], "scores.jsonl is a directory, expected a file")
    for output, message in cases:
        with pytest.raises(OutputError) as caught:
            check_location(output)
        assert message in str(caught.value), (output, caught.value)
        assert str(output.path) in str(caught.value)
    # a default location gets its parents
    out = output_dir(tmp_path / "runs" / "a" / "b", create_parents=True)
    with claim(out):
        assert (tmp_path / "runs" / "a" / "b").is_dir()


def test_too_little_space_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import hopscore.files.output_checks as output_checks

    monkeypatch.setattr(output_checks, "free_bytes", lambda path: MIN_FREE_BYTES - 1)
    with pytest.raises(OutputError, match="no space left"):
        check_location(output_file(tmp_path / "out.jsonl"))


def test_outputs_that_are_inputs(tmp_path: Path) -> None:
    data = tmp_path / "same"
    data.mkdir()
    scores = data / "scores.jsonl"
    scores.write_text("{}\n")
    os.link(scores, tmp_path / "hard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(scores)
    refused = [
        ([output_file(scores)], [scores]),
        ([output_file(tmp_path / "hard.jsonl")], [scores]),
        ([output_file(scores)], [tmp_path / "soft.jsonl"]),
        ([output_dir(data, writes=("metrics.json", "scores.jsonl"))], [scores]),
        ([output_file(scores)], [Input(data, "", ("scores.jsonl", "metrics.json"))]),
        ([output_file(data / "new.jsonl")], [data]),  # a folder read as a whole
        ([output_dir(data / "run", writes=("samples.jsonl",))], [data]),
    ]
    for outputs, inputs in refused:
        with pytest.raises(OutputError, match="input"):
            refuse_inputs(outputs, inputs)
    assert scores.read_text() == "{}\n"
    # not clashes: another name in the folder, a folder read only through other names
    refuse_inputs([output_dir(data, writes=("metrics.json",))], [scores])
    refuse_inputs([output_file(data / "report.html")], [Input(data, "", ("scores.jsonl",))])


def test_environment_errors_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hopscore.files.outputs as outputs

    monkeypatch.setattr(outputs, "_LAST", None)
    full = OSError(errno.ENOSPC, "No space left on device")
    assert environment_error(full) == "no space left on device"
    named = OSError(errno.EROFS, "Read-only file system", str(tmp_path / "x"))
    assert environment_error(named) == f"{tmp_path / 'x'}: Read-only file system"
    with claim(output_file(tmp_path / "out.jsonl", "--output")):
        assert environment_error(full) == (
            f"--output {tmp_path / 'out.jsonl'}: no space left on device while writing it")
    # after the claim ended (the error reaches the CLI's handler later), still named
    assert environment_error(full) == (
        f"--output {tmp_path / 'out.jsonl'}: no space left on device while writing it")
    assert environment_error(ValueError("bug")) is None
    assert environment_error(FileNotFoundError(errno.ENOENT, "gone")) is None


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_written_files_follow_the_umask(tmp_path: Path, mask: int) -> None:
    script = textwrap.dedent("""
        import os, sys
        from pathlib import Path
        from hopscore.engine import ResultLog
        from hopscore.files.atomic import write_json_atomic, write_text_atomic
        from hopscore.scores.scoring import ScoresWriter
        out = Path(sys.argv[1])
        write_json_atomic(out / "a.json", {})
        write_text_atomic(out / "b.txt", "x")
        writer = ScoresWriter(out / "scores.jsonl")
        writer.close()
        log = ResultLog(out / "log.jsonl", lambda row: row["k"])
        log.append({"k": "1"})
        log.finalize(["1"])
    """)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, check=True,
                   preexec_fn=lambda: os.umask(mask))
    for name in ("a.json", "b.txt", "scores.jsonl", "log.jsonl"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~mask, name


def test_too_many_open_files_never_names_a_module_of_hopscore(tmp_path: Path) -> None:
    """A lazy import that fails for want of descriptors (EMFILE) is reported as too many open
    files, exit 2, not as '.../hopscore/merge/runs.py: Too many open files'."""
    script = textwrap.dedent("""
        import importlib, resource, sys
        from hopscore.launch import guarded
        import hopscore.cli, hopscore.errors, hopscore.files.outputs  # loaded by every command
        hopscore.cli.err_console  # made before the descriptors run out
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))
        held = []
        try:
            while True:
                held.append(open(sys.argv[1], "rb"))
        except OSError:
            pass
        def command():
            try:
                importlib.import_module("hopscore.merge.runs")
            finally:  # as a command's own descriptors are closed when its error leaves it
                for handle in held:
                    handle.close()
        guarded(command)
    """)
    target = tmp_path / "f"
    target.write_bytes(b"x")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", script, str(target)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "too many open files (this process may open 64; raise it with ulimit -n)" in \
        done.stderr
    assert "while loading the Python module hopscore.merge" in done.stderr
    assert ".py" not in done.stderr and "Traceback" not in done.stderr
    # a file of the user's is still named
    named = OSError(errno.EMFILE, "Too many open files", str(tmp_path / "out.py"))
    assert environment_error(named).startswith(f"{tmp_path / 'out.py'}: too many open files")


def test_one_file_under_two_names_has_one_writer(tmp_path: Path) -> None:
    """The lock follows the file, not its name: a hard link, a symbolic link or a symlinked
    folder to an output another process holds is refused, naming both paths (issue 22)."""
    real = tmp_path / "a.jsonl"
    real.write_text("")
    hard = tmp_path / "hard.jsonl"
    hard.hardlink_to(real)
    soft = tmp_path / "soft.jsonl"
    soft.symlink_to(real)
    holder = _holder(real, "file")
    try:
        for other in (hard, soft):
            second = _second(other, "file")
            assert second.stdout.startswith(f"busy {holder.pid}|"), second
            assert str(other) in second.stdout and str(real) in second.stdout, second.stdout
            assert f"(the same file as {real})" in second.stdout, second.stdout
        assert "the same file as" in _second(hard, "file").stdout
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    assert _second(hard, "file").stdout.strip() == "got it"
    # an output that does not exist yet, in a folder reached through a symbolic link
    folder = tmp_path / "folder"
    folder.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(folder)
    holder = _holder(folder / "new.jsonl", "file")
    try:
        second = _second(alias / "new.jsonl", "file")
        assert second.stdout.startswith(f"busy {holder.pid}|"), second
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)


def test_a_file_a_running_directory_writes_has_no_other_writer_by_a_link(tmp_path: Path
                                                                           ) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "samples.jsonl").write_text("")
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.hardlink_to(run / "samples.jsonl")
    holder = _holder(run, "dir")
    try:
        second = _second(elsewhere, "file")
        assert second.stdout.startswith(f"busy {holder.pid}|"), second
        assert "samples.jsonl" in second.stdout and str(elsewhere) in second.stdout
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)


def test_locks_are_reentrant_through_links_in_one_process(tmp_path: Path) -> None:
    real = tmp_path / "a.jsonl"
    real.write_text("")
    hard = tmp_path / "hard.jsonl"
    hard.hardlink_to(real)
    with claim(output_file(real)), claim(output_file(hard)):  # one process: shared
        assert holds(real)
    assert not holds(real)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "hard.jsonl"]


def test_an_output_hard_linked_into_an_input_folder_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "scores.jsonl").write_text("{}\n")
    out = tmp_path / "out.jsonl"
    out.hardlink_to(data / "scores.jsonl")
    with pytest.raises(OutputError, match="inside the input folder"):
        refuse_inputs([output_file(out)], [Input(data, "input")])
