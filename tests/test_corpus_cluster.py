"""``corpus --scheduler`` against what a real cluster does (trial 50): workers whose
folder is not the one ``corpus`` runs from, workers that write their parts where the
corpus cannot see them, and an address that accepts a connection and never speaks Dask."""

from __future__ import annotations

import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from narrative_debugger.models.corpus import store
from tests.support.cli import run
from tests.conftest import CONTENT, SAMPLES

pytest.importorskip("distributed")


@pytest.fixture
def saves(tmp_path) -> Path:
    folder = tmp_path / "saves"
    folder.mkdir()
    for name in ("evening.json", "walkaway-spiral.json"):
        shutil.copy(SAMPLES / name, folder / name)
    return folder


def _count(capsys, corpus: Path) -> int:
    code, out, err = run(capsys, "query", str(corpus), "SELECT count(*) AS n FROM saves", "--format", "csv")
    assert code == 0, err
    return int(out.split()[1])


def test_a_relative_out_reaches_workers_that_run_in_another_folder(saves, tmp_path, monkeypatch, capsys):
    # Trial 50, 1: the workers got --out as typed and wrote their parts under their own
    # folder (/c_dask/parts for workers started in /tmp); the run said "indexed 34 save(s)",
    # exit 0, and the corpus held none of them.
    from distributed import Client, LocalCluster

    elsewhere = tmp_path / "workers-cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, protocol="tcp://") as cluster:
        with Client(cluster, set_as_default=False) as client:
            client.run(os.chdir, str(elsewhere))
            assert set(client.run(os.getcwd).values()) == {str(elsewhere)}
        code, out, err = run(capsys, "corpus", "saves", "--content", str(CONTENT), "--out", "qa", "--no-prompts",
                             "--scheduler", cluster.scheduler_address)
    assert code == 0 and "indexed 2 save(s)" in out, err
    assert _count(capsys, tmp_path / "qa") == 2
    assert not (elsewhere / "qa").exists()


def test_parts_the_workers_wrote_elsewhere_fail_the_run(saves, tmp_path, monkeypatch, capsys):
    # A worker that sees another file system (CORPUS not shared) writes its parts where
    # this machine cannot read them: the run fails naming them, not "indexed 2 save(s)".
    from distributed import LocalCluster

    other = tmp_path / "the-workers-disk"
    write_part = store.write_part
    monkeypatch.setattr(store, "write_part", lambda corpus, path, tables: write_part(other, path, tables))
    corpus = tmp_path / "qa"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, protocol="tcp://") as cluster:
        code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(corpus), "--no-prompts",
                             "--scheduler", cluster.scheduler_address)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"narrative-debugger corpus: --out {corpus}: 2 of the 2 save(s) the workers indexed have no part in "
                          f"{corpus / 'parts'} ({saves / 'evening.json'}, {saves / 'walkaway-spiral.json'}); "
                          "the Dask workers must see CORPUS at this same path"), err
    # Run again where the parts can be written: both are indexed, none taken for done.
    monkeypatch.setattr(store, "write_part", write_part)
    code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 2 save(s) (0 replaced), skipped 0 unchanged" in out, err
    assert _count(capsys, corpus) == 2


#: After this many seconds the silent server closes its connections: a client start
#: that is not bounded then ends with another message instead of hanging the suite.
GUARD_S = 60.0


class SilentServer:
    """Accepts TCP connections on 127.0.0.1 and never writes a byte (a wrong service, a
    stuck proxy). Closing it closes what it accepted."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()
        self.thread.join(5)


def test_an_address_that_accepts_and_never_answers_is_a_message_after_the_connect_timeout(saves, tmp_path, capsys):
    # Trial 50, 2: Dask bounds the TCP connect by its connect timeout, not the handshake
    # after it; such an address was waited on until Ctrl+C.
    import dask

    server = SilentServer()
    address = f"tcp://127.0.0.1:{server.port}"
    guard = threading.Timer(GUARD_S, server.close)  # ends an unbounded wait: the test fails, not hangs
    guard.start()
    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            code, out, err = run(capsys, "corpus", str(saves), "--out", str(tmp_path / "c"), "--no-prompts", "--scheduler", address)
    finally:
        guard.cancel()
        server.close()
    assert server.accepted, "the client never connected"
    assert (code, out) == (2, "")
    assert err == (f"narrative-debugger corpus: --scheduler {address}: cannot reach it (no Dask scheduler answered there "
                   "within 1 s: is it the address 'dask scheduler' printed?)\n")


def test_a_scheduler_with_no_worker_is_a_message_after_dasks_timeout_not_a_wait_for_ever(saves, tmp_path, capsys):
    # Trial 51: connected to a scheduler with no worker, corpus waited for ever.
    import dask
    from distributed import LocalCluster

    corpus = tmp_path / "qa"
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None, protocol="tcp://") as cluster:
        address = cluster.scheduler_address
        with dask.config.set({"distributed.scheduler.no-workers-timeout": "1s"}):
            code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(corpus), "--no-prompts",
                                 "--scheduler", address)
    assert (code, out) == (2, "")
    assert err == (f"narrative-debugger corpus: --scheduler {address}: no worker joined it within 1 s, so nothing was indexed "
                   f"(start workers with 'dask worker {address}'; DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT sets how long "
                   "to wait)\n")
    # As after an unreachable scheduler: the next run goes on with the folder.
    code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(corpus), "--no-prompts")
    assert code == 0 and "indexed 2 save(s)" in out, err


@pytest.mark.parametrize("setting, variable, value", [
    ("distributed.scheduler.no-workers-timeout", "DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT", "garbage"),
    ("distributed.scheduler.no-workers-timeout", "DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT", "-5s"),
    ("distributed.comm.timeouts.connect", "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "garbage"),
])
def test_a_timeout_dask_cannot_read_is_one_line_naming_it_not_a_traceback(saves, tmp_path, capsys, setting, variable, value):
    # Trial 51: a KeyError (garbage) or ValueError (-5s) traceback, exit 1.
    import dask

    with dask.config.set({setting: value}):
        code, out, err = run(capsys, "corpus", str(saves), "--out", str(tmp_path / "c"), "--no-prompts",
                             "--scheduler", "tcp://127.0.0.1:18786")
    assert (code, out) == (2, "")
    assert err == (f"narrative-debugger corpus: {variable} (Dask's {setting}) is {value!r}: not a duration of 0 or more "
                   "(give e.g. 30s, 2m or 500ms)\n")
    assert not (tmp_path / "c").exists()  # refused before anything was written


@pytest.mark.parametrize("value", ["0", "0s"])
def test_a_no_workers_timeout_of_0_fails_at_once_as_it_does_in_dasks_scheduler(saves, tmp_path, capsys, value):
    # Trial 51: 0 waited for ever (wait_for_workers takes 0 as no timeout); to Dask's
    # scheduler a task no worker can run then fails at once.
    import dask
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=None, protocol="tcp://") as cluster:
        address = cluster.scheduler_address
        guard = threading.Timer(GUARD_S, cluster.close)  # ends a wait for ever: the test fails, not hangs
        guard.start()
        try:
            with dask.config.set({"distributed.scheduler.no-workers-timeout": value}):
                code, out, err = run(capsys, "corpus", str(saves), "--content", str(CONTENT), "--out", str(tmp_path / "c"),
                                     "--no-prompts", "--scheduler", address)
        finally:
            guard.cancel()
    assert (code, out) == (2, "")
    assert err.startswith(f"narrative-debugger corpus: --scheduler {address}: no worker joined it within 0 s, so nothing was indexed")
