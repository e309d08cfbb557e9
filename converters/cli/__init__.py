"""The command line: a thin layer over the library, one module per command.

`evalconv IN --to FORMAT` is short for `evalconv convert IN --to FORMAT`.
Exit codes: 0 ok, 1 the data failed a check, 2 usage or unreadable input (or out of memory), 70 an internal
error (a bug in evalconv: one line asking for a report; `--debug` or EVALCONV_DEBUG=1 shows the
traceback), 130 interrupted.
"""
from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import click

from .. import __version__
from .. import _stopping as stopping
from .common import set_quiet
from ..canonical.suggest import did_you_mean
from .lazy import LazyCommands


class _DefaultToConvert(click.Group):
    """Routes `evalconv IN ...` to the convert command."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version", "-V"):
            if _mistyped_command(args[0]):
                commands = sorted(self.commands)  # one order whatever was typed; did-you-mean names the closest
                ctx.fail(f"'{args[0]}' is neither a file or folder here nor a command"
                         f"{did_you_mean(args[0], commands)}; the commands are {', '.join(commands)} "
                         f"(`evalconv FILE --to FORMAT` converts a file)")
            args = ["convert", *args]
        return super().parse_args(ctx, args)


def _mistyped_command(word: str) -> bool:
    """A first word that names no file and does not look like a path: a command misspelt or
    one evalconv does not have (`evalconv init`), not a file that went missing."""
    if word == "-" or word.startswith("-") or os.path.exists(word):
        return False
    return not any(ch in word for ch in "./\\") and word.isprintable()


@click.group(cls=_DefaultToConvert, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="evalconv")
def cli() -> None:
    """Move LLM evaluation golden sets between formats without losing what they mean.

    \b
      evalconv set.csv --to promptfoo -o tests.yaml     convert (short for `convert`)
      evalconv validate set.jsonl                       check rows against the schema and rules
      evalconv stats set.jsonl --html coverage.html     rows by slice, coverage gaps, a gate on them
      evalconv formats                                  what each format reads, writes and loses
      evalconv schema                                   the published JSON Schema
      evalconv new --list                               start a set from a task family's starter rows
      evalconv import sheet.csv -o set.csv              the sheet you already have, as canonical rows
      evalconv explain rubric                           which evaluators an oracle type admits, and why
      evalconv report results.json --cases set.jsonl    pass rates of a run, sliced
      evalconv diff --git origin/main sets/             review a change: cases added, removed, changed
      evalconv migrate set.jsonl --to 2                 move a set to schema version 2, recorded beside it
      evalconv retire set.jsonl --id ID --why TEXT      retire a case, kept with its history in a ledger

    --debug (anywhere on the line) or EVALCONV_DEBUG=1 shows the traceback of an internal error.
    """
    set_quiet(False)  # a command's -q sets it again (many runs share one process in tests and callers)


# Each command's module is imported when the command is named (or listed with its help).
cli.commands = LazyCommands({
    "convert": ".convert:convert_command", "validate": ".validate:validate_command",
    "formats": ".info:formats_command", "schema": ".info:schema_command",
    "roundtrip": ".roundtrip:roundtrip_command", "stats": ".stats:stats_command", "new": ".new:new_command",
    "explain": ".explain:explain_command", "import": ".import_:import_command", "report": ".report:report_command",
    "runs": ".runs:runs_group", "diff": ".diff:diff_command", "migrate": ".migrate:migrate_command",
    "retire": ".retire:retire_command"})


INTERNAL_ERROR = 70  # EX_SOFTWARE in sysexits.h
COMPLETE_VAR = "_EVALCONV_COMPLETE"  # click's name for it: _{PROG}_COMPLETE


def main(argv: list[str] | None = None) -> Any:
    stopping.install()  # unless the console script did: a caller may have imported this module
    args = list(sys.argv[1:] if argv is None else argv)
    end = args.index("--") if "--" in args else len(args)
    debug = "--debug" in args[:end] or os.environ.get("EVALCONV_DEBUG", "") not in ("", "0")
    args = [a for i, a in enumerate(args) if a != "--debug" or i >= end]
    if os.environ.get(COMPLETE_VAR):  # the shell asks for completions (docs: README, "Shell completion")
        from click.shell_completion import shell_complete

        sys.exit(shell_complete(cli, {}, "evalconv", COMPLETE_VAR, os.environ[COMPLETE_VAR]))
    # click's own main would turn a Ctrl-C in its code into a blank line and "Aborted!", exit 1.
    try:
        with cli.make_context("evalconv", args) as ctx:
            cli.invoke(ctx)
    except click.exceptions.Exit as err:  # --help, --version
        sys.exit(err.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except (KeyboardInterrupt, BrokenPipeError) as err:  # Ctrl-C, SIGTERM, `| head`
        stopping.exit_quietly(err)
    except MemoryError as err:  # the environment's limit, not a bug; the `with` blocks removed the temp files
        stopping.out_of_memory(err)
    except Exception as err:  # the last guard: a bug must still come out as one line
        if debug:
            traceback.print_exc()
        click.echo(internal_error(err, debug), err=True)
        sys.exit(INTERNAL_ERROR)
    finally:
        stopping.finishing()
    sys.exit(0)


def internal_error(err: BaseException, debug: bool = False) -> str:
    from ..canonical.errors import one_line

    where = getattr(err, "evalconv_source", None)
    what = one_line(f"{type(err).__name__}: {err}")[:300]
    return (f"evalconv: internal error{f' while reading {where}' if where else ''}: {what}. "
            f"This is a bug in evalconv, not in your data: please report it in the project's "
            f"issue tracker with the command{' and the file' if where else ''}"
            + ("" if debug else " (run again with --debug for the traceback)"))
