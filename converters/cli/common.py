"""What the commands share: error handling and printing findings."""
from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, Iterable, NoReturn

import click

from ..canonical import jsonvalue
from ..canonical.errors import EvalconvError, UsageError
from ..canonical.findings import Finding

SHOWN_PER_KIND = 50
ALL_FINDINGS_VIA_VALIDATE = "`evalconv validate FILE --format json` lists them all"


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"evalconv: error: {message}", err=True)
    sys.exit(code)


def handles_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """An EvalconvError becomes one line on stderr and exit code 2, never a traceback. Ctrl-C,
    SIGTERM and a closed pipe go on to `main`, which ends them all one way (`stopping.exit_quietly`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EvalconvError as err:
            fail(err.render(), err.exit_code)
        except BrokenPipeError:
            raise  # not an unreadable file: `main` stops quietly
        except OSError as err:
            fail(f"{err.filename or ''}: {err.strerror or err}".lstrip(": "))
    return wrapper


def main_output(output: str | None, folder: bool) -> tuple[dict[str, str | None], dict[str, str | None], bool]:
    """`-o` as `check_outputs` takes it: the file, the folder a folder format replaces whole, and
    whether the output goes to standard output (no -o, or `-o -`)."""
    to_stdout = output in (None, "-")
    return ({"-o": None if to_stdout or folder else output}, {"-o": None if to_stdout or not folder else output},
            to_stdout)


def print_findings(findings: Iterable[Finding], total: int, kind: str, *, see_all: str) -> None:
    """The first SHOWN_PER_KIND findings on stderr, then how many more and `see_all`: how the
    command at hand lists them all (a flag it has; tests/cli check every hint's flags)."""
    shown = 0
    for finding in findings:
        if shown == SHOWN_PER_KIND:
            break
        click.echo(finding.render(), err=True)
        shown += 1
    if total > shown:
        more = total - shown
        click.echo(f"... and {more} more {kind if more != 1 else kind.rstrip('s')} ({see_all})", err=True)


def print_notices(loss: Any, wrote: bool = True) -> None:
    """The writer's notices (tracing needed, tests that fail until a person grades them, cells that
    look like formulas), as convert prints them: every command that writes a set prints them."""
    for notice in loss.notices if wrote else ():
        note(notice)


_quiet = False  # -q: set by the option on each command that has it, cleared for every other run


def set_quiet(value: bool) -> None:
    global _quiet
    _quiet = bool(value)


def quiet() -> bool:
    return _quiet


def note(message: str) -> None:
    """`evalconv: note: ...` on standard error, unless -q."""
    aside(f"evalconv: note: {message}")


def aside(line: str) -> None:
    """A line of information on standard error (a note, a warning, a summary of what was
    matched), unless -q."""
    if not _quiet:
        click.echo(line, err=True)


def print_warnings(findings: Iterable[Finding], total: int, *, see_all: str) -> None:
    """Warnings as `print_findings` prints them, unless -q (errors always print)."""
    if not _quiet:
        print_findings(findings, total, "warnings", see_all=see_all)


quiet_flag = click.option(
    "-q", "--quiet", is_flag=True, expose_value=False, is_eager=True,
    callback=lambda ctx, param, value: set_quiet(value),
    help="No notes, warnings or progress bar: errors and the result only.")


def echo_json(value: Any) -> None:
    click.echo(jsonvalue.dumps(value, indent=True))


from_option = click.option("--from", "from_", metavar="FORMAT",
                           help="Input format (default: from the extension, else the content).")
contexts_flag = click.option(
    "--contexts", "contexts_path", metavar="MANIFEST",
    help="The sources and snapshots a run can use (JSONL or CSV: source, snapshot): a version-2 row's "
         "context reference that is not in it is an error (evidence-unresolvable).")
encoding_option = click.option("--encoding", metavar="NAME",
                               help="Input text encoding (default utf-8; e.g. cp1252 for old sheets).")


force_flag = click.option("--force", is_flag=True,
                          help="Replace OUT if it exists (it may hold a set someone edited).")


def refuse_existing(output: str | None, force: bool, command: str) -> None:
    """`new` and `import` start a set: one that already sits at OUT may hold a person's edits, so it
    is replaced only with --force (a conversion rewrites its own output, as it always has)."""
    if force or output in (None, "-") or not os.path.lexists(output):
        return
    if os.path.exists(output) and not (os.path.isfile(output) or os.path.isdir(output)):
        return  # a FIFO or a device is streamed to, never replaced
    raise UsageError(f"exists: `evalconv {command}` does not replace a set, which may hold edits; "
                     f"choose another -o, or add --force to replace it", source=output)


def print_report(report: Any, output_format: str, text: Callable[[Any], str], markdown: Callable[[Any], str]) -> None:
    """A lifecycle command's report (diff, retire, migrate) as text, JSON or markdown, then its exit code."""
    data = report.to_json()
    if output_format == "json":
        echo_json(data)
    elif output_format == "markdown":
        click.echo(markdown(data), nl=False)
    else:
        click.echo(text(data))
    sys.exit(report.exit_code)
