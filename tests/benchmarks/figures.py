"""Small helpers the benchmark scripts share."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank."""
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB, since it was started.

    Linux's ``VmHWM`` belongs to the process image: ``getrusage``'s ``ru_maxrss``
    survives ``exec``, so a child that a large benchmark process spawned would report
    at least its parent's peak (a 1 MB save measured as 1 218 MB).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> bool:
    """Start ``peak_rss_mb`` again from the memory in use now (Linux: ``clear_refs`` 5).

    The window benchmark times a bare ``json.load`` first, in its own process: its
    ~1 GB of Python objects would otherwise be the window process's peak. Returns
    False where the peak cannot be reset (the figure then includes that load).
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
        return True
    except OSError:
        return False
