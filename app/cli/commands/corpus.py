"""``narrative-debugger corpus``: index many saves into a corpus folder (issue 39).

Each save is read with the reader, replay and checks of ``check`` (``Playthrough.open``,
in ``models.corpus.rows``), in ``--jobs`` processes as ``check --jobs`` runs them
(``check.results_in_order``); each worker writes its save's Parquet part
(``models.corpus.store``) and hands back one line of summary, so memory stays flat
in the number of saves. A save whose sha256 and content stamp are in the corpus
already is skipped (and indexed as asked: with or without ``--no-prompts``), unless
its part is missing or cut short (``store.part_is_whole``); a changed one is replaced. A save that cannot be read is a row of
``saves`` (readable false) with its findings; the run goes on. A save indexed before whose
file is gone is dropped when it was under a folder given as input, else kept and named;
a damaged part of no save is removed (``store.damaged_parts``), and said so.
``tables/`` damaged (among its rows too), missing or left stale is made again from the
parts, and said so (``store.tables_problem``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from narrative_debugger.app.cli.commands.check import results_in_order
from narrative_debugger.app.cli.commands.common import EXIT_OK, UsageError, check_content_arg, content_arg, folder_arg, number_arg
from narrative_debugger.models.boundary import U32
from narrative_debugger.models.corpus import store
from narrative_debugger.models.corpus.coverage import missing_note
from narrative_debugger.models.corpus.rows import content_rows, content_stamp, empty_tables, add, file_sha256, load_encoder, save_tables
from narrative_debugger.models.playthrough import default_content_dir
from narrative_debugger.models.report.plain_text import one_line, some_named

NAME = "corpus"
HELP = "index saves (files or folders) into a corpus folder of Parquet tables and a DuckDB database"
#: What a folder given as input contributes: its saves, at any depth.
SAVE_SUFFIXES = (".json", ".json.gz")


def add_arguments(p) -> None:
    p.add_argument("inputs", nargs="+", type=folder_arg("SAVE_OR_DIR"), metavar="SAVE_OR_DIR")  # '' is no folder, not .
    content_arg(p)
    p.add_argument("--out", type=folder_arg("--out"), required=True, metavar="CORPUS", help="the corpus folder (made when missing; indexed saves are kept)")
    p.add_argument("--no-prompts", action="store_true",
                   help="leave out the prompts table and the story-card firings (building each conversation's prompt is most of the indexing time)")
    p.add_argument("--jobs", "-j", type=number_arg("--jobs", U32, minimum=1), default=1, metavar="N", help="index N saves at once in separate processes (default 1)")
    p.add_argument("--scheduler", type=scheduler_arg, metavar="ADDRESS",
                   help="run the per-save work on a Dask distributed cluster (tcp://HOST:PORT); its workers must see the saves, "
                        "the content and CORPUS at the same paths (--jobs is then ignored)")


def scheduler_arg(text: str) -> str:
    """An argparse ``type`` for ``--scheduler``: ``tcp://HOST:PORT`` (HOST a name or an
    address, ``[...]`` for IPv6; PORT 1 to 65535), refused at once otherwise (UsageError:
    one line, exit 2). Dask's other transports made tracebacks (``ucx://``, ``tls://``
    without certificates), ``inproc://`` lives in one process only, and an address that
    cannot be valid was tried for Dask's whole connect timeout."""
    if not text:
        raise UsageError("--scheduler: an empty address (give tcp://HOST:PORT, as 'dask scheduler' prints it)")
    said = f"--scheduler {one_line(text)}"
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise UsageError(f"{said}: not an address (give tcp://HOST:PORT, as 'dask scheduler' prints it)")
    if scheme != "tcp":
        raise UsageError(f"{said}: only tcp:// addresses are supported, not {one_line(scheme)}:// (give tcp://HOST:PORT)")
    host, colon, port = rest.rpartition(":")
    if not colon or host.endswith("[") or "]" in port:  # tcp://HOST, tcp://[::1]
        raise UsageError(f"{said}: no port (give tcp://HOST:PORT; 'dask scheduler' listens on 8786)")
    if not host.strip("[]") or any(c.isspace() or c in "/?#@" for c in host):
        raise UsageError(f"{said}: no host name or address before the port (give tcp://HOST:PORT)")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise UsageError(f"{said}: the port {one_line(port)!r} is not a number from 1 to 65535")
    return text


def saves_in(inputs: list[Path], corpus: Path) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """The saves named, and the paths left out as another path to a save of the list.

    Saves: files as given, folders searched for ``*.json``/``*.json.gz`` at any depth (in
    name order, skipping ``content/`` folders and the corpus itself). One file reached by
    several paths (a symbolic link to a save, a hard link, a folder reached through a
    link) is one save, by the first path in that order: a link was indexed as a second
    save, counting its firings twice (trial 50). Left out: ``(path, the save's path)``
    for each other path (a path named twice is left out silently)."""
    out: list[Path] = []
    skip = os.path.abspath(corpus)
    for item in inputs:
        if not item.is_dir():
            out.append(item)
            continue
        found = []
        for root, dirs, files in os.walk(item):
            dirs[:] = sorted(d for d in dirs if d != "content" and os.path.abspath(os.path.join(root, d)) != skip)
            found += [Path(root) / f for f in files if f.lower().endswith(SAVE_SUFFIXES)]
        out += sorted(found)
    seen: dict[tuple, Path] = {}
    others: list[tuple[Path, Path]] = []
    for path in dict.fromkeys(out):
        first = seen.setdefault(_file_identity(path), path)
        if first is not path:
            others.append((path, first))
    return list(seen.values()), others


def _file_identity(path: Path) -> tuple:
    """What tells one file from another whatever path reaches it: its device and inode
    (``os.stat`` follows links; it never opens the file, so a FIFO is not waited on), or
    its real path when it cannot be stat'ed (a dangling link: an unreadable row)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("inode", info.st_dev, info.st_ino)


def index_one(item: tuple[str, str | None, str, str, bool], content: Path | None) -> tuple[str, bool, int, str | None]:
    """Index one save into the corpus (runs in a worker with --jobs): (path, readable,
    findings, an error message when indexing itself failed)."""
    path, sha, stamp, corpus, prompts = item
    try:
        tables = save_tables(path, content, sha, stamp, prompts)
        row = tables["saves"]
        message = None
    except Exception as exc:  # a defect of the tool, not of the save: keep the row, go on
        tables = empty_tables()
        row = tables["saves"]
        add(row, path=path, sha256=sha, readable=False, events=0, saved_at_tick=None, content=str(content or ""),
            content_stamp=stamp, errors=0, warnings=0, findings=0, prompts=False)
        message = f"{type(exc).__name__}: {exc}"
    store.write_part(Path(corpus), path, tables)
    return path, bool(row["readable"][0]), int(row["findings"][0]), message


def on_cluster(work: list, content: Path | None, address: str):
    """Yield ``(input position, index_one(item))`` as each save is done on the Dask
    cluster at ``address``: each worker writes its own Parquet part, as a process of
    the pool does. Raises UsageError when Dask is missing, the scheduler cannot be
    reached within Dask's connect timeout (``distributed.comm.timeouts.connect``,
    ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT``, 30 s): ``connect_client``, or it has
    no worker within ``wait_for_a_worker``'s timeout."""
    try:
        from distributed import as_completed
    except ImportError:
        raise UsageError("--scheduler needs Dask's distributed package (pip install 'narrative-debugger[cluster]')") from None
    client = connect_client(address)
    try:
        if not work:
            return
        wait_for_a_worker(client, address)
        futures = client.map(index_one, work, content=content, pure=False)
        position = {future.key: k for k, future in enumerate(futures)}
        for future in as_completed(futures):
            yield position[future.key], future.result()
    finally:
        client.close()


#: Dask's setting for how long work may wait for a worker (``None`` by default), and the one
#: ``wait_for_a_worker`` falls back to (the connect timeout, 30 s by default).
NO_WORKERS_TIMEOUT = "distributed.scheduler.no-workers-timeout"
CONNECT_TIMEOUT = "distributed.comm.timeouts.connect"


def dask_timeout(setting: str) -> float | None:
    """Dask's timeout ``setting`` (``NO_WORKERS_TIMEOUT`` or ``CONNECT_TIMEOUT``) in seconds
    (None when it is not set), as ``dask.utils.parse_timedelta`` reads it (``30s``, ``2m``,
    ``500ms``, a number of seconds).

    Raises:
        UsageError: ``DASK_… (Dask's SETTING) is 'VALUE': not a duration …`` (exit 2): a
            value Dask cannot read (``garbage``: a KeyError; ``-5s``: a ValueError) made a
            traceback (trial 51).
    """
    import dask
    from dask.utils import parse_timedelta

    value = dask.config.get(setting, None)
    if value is None:
        return None
    try:
        return parse_timedelta(value, "s")
    except (KeyError, ValueError, TypeError):
        variable = "DASK_" + setting.upper().replace(".", "__").replace("-", "_")
        raise UsageError(f"{variable} (Dask's {setting}) is {one_line(str(value))!r}: not a duration of 0 or more "
                         "(give e.g. 30s, 2m or 500ms)") from None


def check_dask_timeouts() -> None:
    """Read both timeouts ``--scheduler`` uses (``dask_timeout``) before anything is written:
    a bad one is refused at once, exit 2. Nothing when Dask is missing (``on_cluster`` says so)."""
    import importlib.util

    if importlib.util.find_spec("dask") is None:
        return
    for setting in (CONNECT_TIMEOUT, NO_WORKERS_TIMEOUT):
        dask_timeout(setting)


def wait_for_a_worker(client, address: str) -> None:
    """Return once the scheduler has at least one worker, waiting at most Dask's
    ``no-workers-timeout`` (``DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT``) when it is
    set, else its connect timeout (30 s): a scheduler with no worker took the work and
    the run waited for ever (trial 51). A no-workers-timeout of 0 means what it means to
    Dask's scheduler (a task no worker can run fails at once): the scheduler is asked
    once, not waited on (``wait_for_workers`` took 0 as no timeout: for ever).

    Raises:
        UsageError: ``--scheduler ADDRESS: no worker joined it within T s (...)`` (exit 2);
            ``dask_timeout``'s for a setting Dask cannot read.
    """
    timeout = dask_timeout(NO_WORKERS_TIMEOUT)
    if timeout is None:
        timeout = dask_timeout(CONNECT_TIMEOUT)
    if timeout is None:  # both set to null in Dask's config: its default connect timeout
        timeout = 30.0
    try:
        # wait_for_workers asks the scheduler before it looks at the deadline: a timeout
        # just above 0 asks once.
        client.wait_for_workers(1, timeout=max(timeout, 1e-3))
    except TimeoutError:
        raise UsageError(f"--scheduler {address}: no worker joined it within {timeout:g} s, so nothing was indexed "
                         f"(start workers with 'dask worker {address}'; DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT "
                         "sets how long to wait)") from None


def connect_client(address: str):
    """A Dask ``Client`` of the scheduler at ``address``, its whole start bounded by
    Dask's connect timeout (seconds, from Dask's config).

    Dask bounds the TCP connect by that timeout, not the handshake after it: an address
    that accepts the connection and never speaks Dask (a silent server, an HTTP server)
    was waited on forever (trial 50). The start is given that timeout as a deadline
    (``distributed.utils.sync``'s ``callback_timeout``); a client that misses it is closed.

    Raises:
        UsageError: ``--scheduler ADDRESS: cannot reach it (...)`` (exit 2).
    """
    from distributed import Client

    timeout = dask_timeout(CONNECT_TIMEOUT)

    class BoundedClient(Client):
        def start(self, **kwargs):
            try:  # Client.start hands its keywords to sync(), which takes callback_timeout
                super().start(callback_timeout=timeout, **kwargs)
            except BaseException:
                self.close(timeout=timeout)
                raise

    try:
        return BoundedClient(address, timeout=timeout)
    except TimeoutError:  # the deadline (an OSError too: before the next clause)
        raise UsageError(f"--scheduler {address}: cannot reach it (no Dask scheduler answered there within {timeout:g} s: "
                         "is it the address 'dask scheduler' printed?)") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"--scheduler {address}: cannot reach it ({one_line(exc)})") from None


def run(args) -> int:
    check_content_arg(args.content)
    # The corpus names the content folder by absolute path, as it names the saves: its
    # commands and the app's nearest-miss open run from any folder.
    content = Path(os.path.abspath(args.content)) if args.content is not None else None
    corpus: Path = args.out
    for item in args.inputs:  # a typo is misuse, not a save that cannot be read
        if not os.path.lexists(item):
            raise UsageError(f"SAVE_OR_DIR {one_line(item)}: no such file or folder")
    if corpus.exists() and not corpus.is_dir():
        raise UsageError(f"--out {corpus} is not a folder")
    if corpus.is_dir() and any(corpus.iterdir()) and not store.is_corpus(corpus) and not store.is_unfinished(corpus):
        raise UsageError(f"--out {corpus} is a folder with other files in it, not a corpus (give a new or empty folder)")
    if args.scheduler:
        check_dask_timeouts()
    found, others = saves_in(args.inputs, corpus)
    if others:
        path, first = others[0]
        print(f"narrative-debugger corpus: {len(others)} path(s) reach a save already listed (a link, or the same file "
              f"by another path), indexed once by its first path: {one_line(path)} is {one_line(first)}"
              + (f" and {len(others) - 1} more" if len(others) > 1 else ""), file=sys.stderr)
    if not found:
        raise UsageError(f"no save found in {', '.join(one_line(item) for item in args.inputs)} "
                         f"(saves are {' or '.join('*' + s for s in SAVE_SUFFIXES)} files; folders are searched at any depth); "
                         "nothing written")
    try:
        return _index(args, content, corpus, found)
    except store.CorpusError as exc:  # a file of the corpus that cannot be written, or read
        raise UsageError(str(exc)) from None


def _index(args, content: Path | None, corpus: Path, found: list[Path]) -> int:
    try:
        corpus.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {one_line(corpus)}: the folder cannot be made ({exc.strerror or exc})") from None
    store.clear_leftovers(corpus)
    damaged_parts = store.damaged_parts(corpus)
    problem = store.tables_problem(corpus)
    if problem is not None:
        # tables/ is made from the parts (damaged in the middle, missing, left stale: coverage
        # and query failed until then, while a run said nothing): read them instead, and make
        # it again, whole, at the end.
        store.mark_stale(corpus)
        print(f"narrative-debugger corpus: {one_line(corpus)}: its tables/ {one_line(problem)}; "
              "they are made again from the parts", file=sys.stderr)
    try:
        known = store.indexed(corpus)
    except store.CorpusError as exc:  # a damaged corpus: its parts cannot be read
        raise UsageError(f"--out {exc}") from None
    stamps: dict[str, str] = {}
    work, skipped, replaced = [], 0, 0
    folders: set[str] = set()  # the content folders of the saves to index
    for save in found:
        path = os.path.abspath(save)
        folder = str(content if content is not None else default_content_dir(Path(path)))
        if folder not in stamps:
            stamps[folder] = stamp = content_stamp(Path(folder))
            if not store.has_content(corpus, stamp):
                store.write_content(corpus, stamp, content_rows(Path(folder), stamp))
        sha = file_sha256(Path(path))
        if path in known:
            old_sha, old_stamp, had_prompts = known[path]
            if sha is not None and (old_sha, old_stamp) == (sha, stamps[folder]) and (had_prompts or args.no_prompts):
                # part_is_whole's test, made once for every part above (it reads each file's footer)
                if store.part_key(path) not in damaged_parts and (corpus / store.PARTS / store.part_key(path)).is_dir():
                    skipped += 1
                    continue
                print(f"narrative-debugger corpus: {one_line(path)}: its part in {one_line(corpus)} is missing or damaged; "
                      "indexing it again", file=sys.stderr)
            # A file that cannot be read whole (no SHA-256: a FIFO, no permission) is read
            # again each run and counted unreadable, not "replaced" (the trial's FIFO was, every run).
            replaced += sha is not None
        # The workers write under CORPUS by this absolute path: a Dask worker's own folder
        # is not this one (a relative --out put the parts outside the corpus: trial 50).
        work.append((path, sha, stamps[folder], os.path.abspath(corpus), not args.no_prompts))
        folders.add(folder)
    dropped, kept_missing = _gone(known, found, args.inputs)
    # A damaged part of no save known or named (a stopped run's, or a file put there by
    # hand): no save to index it from, and it blocked every later run. It is removed.
    ours = {store.part_key(path) for path in known} | {store.part_key(os.path.abspath(save)) for save in found}
    orphans = {key: problem for key, problem in damaged_parts.items() if key not in ours}
    redone = {store.part_key(path) for path in [item[0] for item in work] + dropped}  # written again, or removed
    for key, problem in sorted(damaged_parts.items()):
        if key in orphans:
            print(f"narrative-debugger corpus: {one_line(corpus / store.PARTS / key)}: a damaged part ({one_line(problem)}) "
                  "of no save in the corpus; removed", file=sys.stderr)
        elif key not in redone:
            save = next(path for path in known if store.part_key(path) == key)
            print(f"narrative-debugger corpus: {one_line(corpus / store.PARTS / key)}: the part of {one_line(save)} is damaged "
                  f"({one_line(problem)}); give that save to corpus to index it again", file=sys.stderr)
    unreadable = failed = 0
    whole = store.has_compacted(corpus)  # else every part is compacted at the end
    if work or dropped:
        store.mark_stale(corpus)
    for key in orphans:
        store.remove_part(corpus, key)
    for path in dropped:
        store.remove_part(corpus, store.part_key(path))
    if not args.scheduler and not args.no_prompts and min(args.jobs, len(work)) > 1:
        # The workers are forked from this process: a token encoding built here is theirs
        # too, in pages they share (~26 MB each, and its load, saved in every worker).
        for folder in sorted(folders):
            load_encoder(Path(folder))
    results = on_cluster(work, content, args.scheduler) if args.scheduler else results_in_order(work, content, args.jobs, work=index_one)
    done: list[str] = []
    for _, (path, readable, findings, message) in results:
        done.append(path)
        if message is not None:
            failed += 1
            print(f"narrative-debugger corpus: {one_line(path)}: could not be indexed ({one_line(message)})", file=sys.stderr)
        elif not readable:
            unreadable += 1
    missing_parts(corpus, done, cluster=bool(args.scheduler))
    if work or dropped or not whole:
        store.compact(corpus, [item[0] for item in work] + dropped if whole else None)
    database = store.write_database(corpus)
    # This run's count, and the corpus's when it differs: "0 unreadable" after a run that
    # indexed none, in a corpus that holds one, read as "none in the corpus" (trial 51).
    in_corpus = store.unreadable_saves(corpus)
    unreadable_words = (f"{unreadable} unreadable" if in_corpus == unreadable
                        else f"{unreadable} unreadable this run ({in_corpus} in the corpus)")
    print(f"indexed {len(work)} save(s) ({replaced} replaced), skipped {skipped} unchanged, {unreadable_words}"
          + (f", {failed} failed" if failed else "") + (f", dropped {len(dropped)} no longer in their folder" if dropped else "")
          + f"; database {one_line(database)}")
    if dropped:
        print(f"dropped (indexed before, no longer in {', '.join(one_line(i) for i in args.inputs if i.is_dir())}): {some_named(dropped, NAMED)}")
    if kept_missing:
        print(missing_note(kept_missing))
    return EXIT_OK


def missing_parts(corpus: Path, done: list[str], *, cluster: bool) -> None:
    """Refuse a run whose workers said they wrote a save's part that is not whole under
    ``corpus`` now (``store.part_is_whole``): a Dask worker that sees another file system,
    or CORPUS at another path, wrote it elsewhere, and the run said it indexed them all
    (trial 50). ``tables/`` is then left stale, so the next run indexes those saves again.

    Raises:
        UsageError: ``--out CORPUS: N of the M save(s) the workers indexed have no part in
            CORPUS/parts (the first three named); ...`` (exit 2).
    """
    missing = [path for path in done if not store.part_is_whole(corpus, path)]
    if not missing:
        return
    shown = some_named(missing, 3)
    where = os.path.join(os.path.abspath(corpus), store.PARTS)
    hint = ("the Dask workers must see CORPUS at this same path (a shared file system)" if cluster
            else "was CORPUS changed while the run went on?")
    raise UsageError(f"--out {one_line(corpus)}: {len(missing)} of the {len(done)} save(s) the workers indexed have no part "
                     f"in {one_line(where)} ({shown}); {hint}. Its tables are not made again: run corpus again once "
                     "the parts can be written there, and those saves are indexed again")


#: How many saves a line of the summary names before "and N more".
NAMED = 5


def _gone(known, found: list[Path], inputs: list[Path]) -> tuple[list[str], list[str]]:
    """``(dropped, kept)``: the saves of the corpus (``known``, by absolute path) whose
    file no longer exists and that this run did not find. Those under a folder given as
    input are dropped (the corpus follows the folder, as it does a changed save); the
    others are kept, and named. Both sorted."""
    here = {os.path.abspath(save) for save in found}
    folders = [os.path.join(os.path.abspath(item), "") for item in inputs if item.is_dir()]
    dropped, kept = [], []
    for path in sorted(known):
        if path in here or os.path.exists(path):
            continue
        (dropped if any(path.startswith(folder) for folder in folders) else kept).append(path)
    return dropped, kept
