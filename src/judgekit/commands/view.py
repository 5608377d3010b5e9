"""``judgekit view RESULTS... [--cases DIR] [--out DIR | --serve]``: the static trial viewer.

Writes one folder (:mod:`judgekit.reports.viewer`) that opens from ``file://`` with no network: the run
page, each trial's page and, with two results files, the comparison page. The results files are read
line by line (memory flat in the trials) and the folder is written all at once or not at all.
``--serve`` also serves the folder on ``127.0.0.1`` (never another interface) until Ctrl-C, answering
only requests whose ``Host`` header names the loopback address or ``localhost`` (403 otherwise: a page of
another site reaching the port through DNS rebinding reads nothing).

Only typer is imported at module level. Exit codes: 0 the viewer was written; 2 a usage or input error (a
missing or unreadable results file, more than two, an ``--out`` folder that is not a viewer or cannot be
written, runs that cannot be compared) or located problems in a results file (the viewer is still
written, the problems are listed on it and on standard error).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from judgekit.commands.inputs import existing_inputs
from judgekit.commands.output import chosen_format, format_option

if TYPE_CHECKING:
    from judgekit.reports.viewer import ViewerDocument

__all__ = ["view"]


@existing_inputs("results", "cases")
def view(  # noqa: PLR0917 - typer options
    results: list[Path] = typer.Argument(
        ..., help="Results file(s) written by judgekit grade: one run, or two (baseline first) side by side."
    ),
    cases: Path | None = typer.Option(
        None, "--cases", help="Golden set: trial pages also show each case's input, expectations and split."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Folder to write the viewer into (new, empty, or an earlier viewer)."
    ),
    serve: bool = typer.Option(
        False,
        "--serve",
        help="Also serve the folder on 127.0.0.1 until Ctrl-C (without --out: a temporary folder).",
    ),
    port: int = typer.Option(0, "--port", help="Port for --serve (0: a free one, printed)."),
    regression_slice: list[str] = typer.Option(
        ["regression", "regressions"],
        "--regression-slice",
        help="Slice names that form the regression suite (as in judgekit report).",
    ),
    output_format: str = format_option(),
) -> None:
    """Write a self-contained trial viewer: a run page, a page per trial, and the comparison of two runs.

    The folder opens from file:// (index.html) and makes no network request. The run page lists every
    trial (case, trial, verdict, failure category, failing layer, trust, cost, reason), filterable,
    sortable and searchable; a trial page shows the transcript with the offending call highlighted beside
    every check and its evidence. With --format json the paths written and the counts are one document
    (kind viewer) on standard output.
    """
    from judgekit.api.viewer import TranscriptReader, case_infos
    from judgekit.commands.output import print_model
    from judgekit.errors import JudgekitError
    from judgekit.reports.viewer import ViewerDocument, build_viewer, check_out_folder

    output_format = chosen_format(output_format)
    if len(results) > 2:
        raise JudgekitError(
            f"judgekit view takes one results file, or two to compare side by side (got {len(results)}): "
            "view the others in a second folder",
            exit_code=2,
        )
    if out is None and not serve:
        raise JudgekitError("give --out FOLDER to write the viewer, or --serve to serve it", exit_code=2)
    if port < 0 or port > 65535:
        raise JudgekitError(f"--port must be between 0 and 65535 (got {port})", exit_code=2)
    if out is not None:
        check_out_folder(out)  # refuse before reading anything
    infos = case_infos(cases) if cases is not None else None
    if out is None:
        import tempfile

        out = Path(tempfile.mkdtemp(prefix="judgekit-view-"))
    built = build_viewer(
        results, out, transcripts=TranscriptReader, cases=infos, regression_slices=regression_slice
    )
    problems = [p for run in built.runs for p in run["problems"]]
    for problem in problems:
        typer.echo(f"warning: {problem}", err=True)
    for reason, count in built.unavailable_reasons:
        typer.echo(f"warning: {count} trial(s) without a transcript: {reason}", err=True)
    document = ViewerDocument.of(built) if output_format == "json" else None
    if document is not None and not serve:
        print_model("viewer", document)
    elif document is None:
        trials = sum(run["trials"] for run in built.runs)
        typer.echo(
            f"wrote a viewer of {trials} trial(s) in {len(built.runs)} run(s)"
            + (" with their comparison" if built.compared else "")
            + f" -> {built.index}"
        )
    if serve:
        _serve(built.out, port, document)
    if problems:
        raise typer.Exit(2)


LOOPBACK_NAMES = ("127.0.0.1", "localhost")
"""The host names ``--serve`` answers to (with or without the port it listens on)."""


def allowed_host(header: str | None, port: int) -> bool:
    """Whether a request's ``Host`` header names the viewer's own address (DNS rebinding defence).

    A page of another site can make a browser send requests to ``127.0.0.1:PORT`` by pointing its own
    name at that address; its requests still carry its name (``Host: evil.example:PORT``). Only
    ``127.0.0.1`` and ``localhost`` (any letter case), alone or with exactly the port served, are answered.

    Args:
        header: The ``Host`` header's value, or ``None`` when the request has none (or has two).
        port: The port the server listens on.

    Returns:
        True when the request may be answered.

    Examples:
        >>> allowed_host("localhost:8000", 8000), allowed_host("evil.example:8000", 8000)
        (True, False)
    """
    if header is None:
        return False
    host = header.strip().lower()
    return any(host in (name, f"{name}:{port}") for name in LOOPBACK_NAMES)


def _serve(folder: Path, port: int, document: ViewerDocument | None) -> None:
    """Serve ``folder`` on 127.0.0.1 until Ctrl-C; print the address (in the JSON document when given)."""
    import functools
    import http.server

    from judgekit.commands.output import print_model
    from judgekit.errors import JudgekitError

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Keep request lines off the terminal."""

        def _host_ok(self) -> bool:
            hosts = self.headers.get_all("Host") or []
            header = hosts[0] if len(hosts) == 1 else None
            address = self.server.server_address
            if allowed_host(header, int(address[1]) if isinstance(address, tuple) else -1):
                return True
            self.send_error(
                403, "Forbidden", "judgekit view answers only Host 127.0.0.1 or localhost (DNS rebinding)"
            )
            return False

        def do_GET(self) -> None:
            """Answer a GET for a file of the viewer, if the Host header is the loopback's."""
            if self._host_ok():
                super().do_GET()

        def do_HEAD(self) -> None:
            """Answer a HEAD, if the Host header is the loopback's."""
            if self._host_ok():
                super().do_HEAD()

    handler = functools.partial(Quiet, directory=str(folder))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise JudgekitError(
            f"--port {port}: cannot listen on 127.0.0.1:{port}: {exc.strerror}; pick another port or 0",
            exit_code=2,
        ) from None
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    if document is not None:
        print_model("viewer", document.model_copy(update={"served": url}))
    else:
        typer.echo(f"serving {folder} at {url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped", err=True)
    finally:
        server.server_close()
