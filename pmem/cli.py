"""The `pmem` command: inspect, validate, replay into and export a P-Mem store."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pmem.graph import InvalidOperation, StoreError, Version
from pmem.memory import Memory
from pmem.patch import Patch

EPILOG = """\
examples:
  pmem replay notes.sqlite ops.jsonl     apply one typed operation (or patch) per line
  pmem show notes.sqlite                 the active frontier, one `key = value` line per cell
  pmem show notes.sqlite client.budget --history
  pmem check notes.sqlite                validate every link and invariant (exit 1 on problems)
  pmem export notes.sqlite --heads       the register as JSON lines
  pmem demo                              the paper's stories, end to end
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except StoreError as err:
        print(f"pmem: {printable(str(err))}", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as err:  # a page the log's own reads never touch
        print(
            f"pmem: {args.store}: the file is damaged or not a P-Mem store ({err}); "
            "`pmem check` lists what SQLite finds",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:  # `pmem export ... | head`
        return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pmem",
        description="Provenant Memory: inspect and maintain a provenance-graph store.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(required=True, metavar="COMMAND")

    s = sub.add_parser("show", help="print the frontier, or one key's cell")
    s.add_argument("store")
    s.add_argument("key", nargs="?", help="one key; omit for the whole frontier")
    s.add_argument("--history", action="store_true", help="every version with its links and times")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=_show)

    c = sub.add_parser("check", help="validate the store (exit 1 when an invariant fails)")
    c.add_argument("store")
    c.set_defaults(func=_check)

    r = sub.add_parser(
        "replay",
        help="apply a JSON-lines file of operations",
        description=(
            "Apply OPS one line at a time, in one transaction. Each line is a patch object "
            "(fields op, key, old_value, new_value, status, supersedes, evidence, valid_from, at), "
            'e.g. {"op": "accept", "key": "budget", "new_value": "$30k"} or '
            '{"op": "revise", "key": "budget", "old_value": "$30k", "new_value": "$50k"}. '
            'A line may add "observe": TEXT (and "source") to record its evidence first, and '
            '"hard_commit": true. On an invalid line nothing from the file is kept, unless '
            "--keep-going, which skips such lines as noops and counts them."
        ),
    )
    r.add_argument("store")
    r.add_argument("ops")
    r.add_argument("--keep-going", action="store_true", help="skip invalid operations (noop)")
    r.set_defaults(func=_replay)

    e = sub.add_parser("export", help="the register: one JSON record per version with its links")
    e.add_argument("store")
    e.add_argument("--heads", action="store_true", help="only the current value of each key")
    e.set_defaults(func=_export)

    d = sub.add_parser("demo", help="the paper's Figure 1 story and the $30k/$50k retraction")
    d.add_argument("--store", help="keep the demo's SQLite store at this path")
    d.set_defaults(func=_demo)
    return p


def _open_existing(path: str) -> Memory:
    """A store that is there already: inspecting never creates one (a missing or empty file is
    refused untouched, where `Memory(path)` would write a new schema into it)."""
    if not os.path.exists(path):
        raise StoreError(f"{path}: no such store")
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise StoreError(f"{path}: an empty file, not a P-Mem store; refusing to write to it")
    return Memory(path)


def printable(text: str) -> str:
    """`text` with control characters shown as escapes: a stored value can never move the
    cursor, clear the screen or retitle the terminal it is printed to."""
    return "".join(
        ch if ch.isprintable() or ch in "\n\t" else ch.encode("unicode_escape").decode()
        for ch in text
    )


def _show(args: argparse.Namespace) -> int:
    with _open_existing(args.store) as m:
        if args.key is None:
            if args.json:
                _print_json([c.to_dict() for c in m.frontier()])
            else:
                disclose = (
                    ("alternatives", "history", "support") if args.history else ("alternatives",)
                )
                text = m.render(disclose=disclose)
                print(printable(text) if text else "(no current values)")
            return 0
        if args.key not in m.keys():
            print(f"pmem: {args.store}: no key {args.key!r}", file=sys.stderr)
            return 1
        cell = m.cell(args.key)
        if args.json:
            payload = cell.to_dict()
            if args.history:
                payload["versions"] = [v.to_dict() for v in m.versions(args.key)]
            _print_json(payload)
            return 0
        print(printable(m.render([cell], disclose=("alternatives", "support"))))
        if args.history:
            for v in reversed(m.versions(args.key)):
                print("  " + printable(_describe(m, v)))
        return 0


def _describe(m: Memory, v: Version) -> str:
    valid = f"valid {v.valid_from:%Y-%m-%d}" + (f"..{v.valid_to:%Y-%m-%d}" if v.valid_to else "..")
    evidence = "; ".join(repr(m.evidence(e).text) for e in v.evidence)
    parts = [
        f"{v.id:<7} {v.status:<12} {v.value!r}",
        f"recorded {v.recorded_at:%Y-%m-%d %H:%M}",
        valid,
    ]
    parts += v.links + ([f"evidence {evidence}"] if evidence else [])
    return " | ".join(parts)


def _check(args: argparse.Namespace) -> int:
    with _open_existing(args.store) as m:  # a store that does not open: one line, exit 2
        problems = m.check()
        for p in problems:
            print(printable(p))
        try:
            s = m.stats()
        except StoreError:  # a damaged file: the problems above say what SQLite found
            print(f"{args.store}: {len(problems)} problem(s): the file is damaged")
            return 1
        verdict = f"{len(problems)} problem(s)" if problems else "ok"
        print(
            f"{args.store}: {verdict}: {s['keys']} keys ({s['current']} current), "
            f"{s['versions']} versions, {s['evidence']} evidence, {s['log_entries']} log entries"
        )
        return 1 if problems else 0


def _replay(args: argparse.Namespace) -> int:
    lines = _read_ops(args.ops)
    if lines is None:
        return 2
    for number, line in lines:  # every line's fields, before the store is opened or made
        try:
            _parse_line(line, f"{args.ops}:{number}")
        except InvalidOperation as err:
            print(f"pmem: {err}; nothing from {args.ops} was applied", file=sys.stderr)
            return 2
    decisions: Counter[str] = Counter()
    created = not os.path.exists(args.store)
    with Memory(args.store) as m:
        try:
            with m.batch():
                for number, line in lines:
                    where = f"{args.ops}:{number}"
                    try:
                        decisions[_apply_line(m, line, where)] += 1
                    except InvalidOperation as err:
                        if not args.keep_going:
                            reason = (
                                err.reason
                                if err.reason.startswith(where)
                                else (f"{where}: {err.reason}")
                            )
                            raise InvalidOperation(err.key, reason) from None
                        decisions["skipped (noop)"] += 1
                        print(f"pmem: skipped {where}: {err}", file=sys.stderr)
        except InvalidOperation as err:
            print(f"pmem: {err}; nothing from {args.ops} was applied", file=sys.stderr)
            refused = True
        else:
            refused = False
    if refused:
        if created:  # the store this command made for the replay holds nothing: no trace of it
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(args.store + suffix)
        return 2
    summary = ", ".join(f"{n} {d}" for d, n in sorted(decisions.items()))
    print(f"{args.store}: applied {len(lines)} line(s): {summary or 'nothing'}")
    return 0


def _read_ops(path: str) -> list[tuple[int, dict[str, Any]]] | None:
    try:
        with open(path, encoding="utf-8") as f:
            raw = f.readlines()
    except OSError as err:
        print(f"pmem: {path}: {err.strerror}", file=sys.stderr)
        return None
    except UnicodeDecodeError as err:
        print(
            f"pmem: {path}: not UTF-8 text (byte {err.start}); expected one JSON object per line; "
            "nothing was applied",
            file=sys.stderr,
        )
        return None
    out = []
    for number, text in enumerate(raw, 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as err:
            print(
                f"pmem: {path}:{number}: not JSON ({err.msg}); nothing was applied", file=sys.stderr
            )
            return None
        if not isinstance(line, dict):
            print(
                f"pmem: {path}:{number}: expected a JSON object; nothing was applied",
                file=sys.stderr,
            )
            return None
        out.append((number, line))
    return out


def _parse_line(line: dict[str, Any], where: str) -> tuple[Patch, bool, str | None, str]:
    """One ops line as (patch, hard_commit, observed text, its source), every field's type
    checked; an `InvalidOperation` naming `where` and the field otherwise."""
    line = dict(line)
    hard = line.pop("hard_commit", False)
    if not isinstance(hard, bool):  # "no" is a non-empty string: bool() would say true
        raise InvalidOperation(
            line.get("key"), f"{where}: hard_commit must be true or false, not {hard!r}"
        )
    text, source = line.pop("observe", None), line.pop("source", "user")
    for name, value in (("observe", text), ("source", source)):
        if value is not None and not isinstance(value, str):
            raise InvalidOperation(
                line.get("key") if isinstance(line.get("key"), str) else None,
                f"{where}: field {name!r} must be a string, not {type(value).__name__}",
            )
    return Patch.from_dict(line, where), hard, text, source


def _apply_line(m: Memory, line: dict[str, Any], where: str) -> str:
    patch, hard, text, source = _parse_line(line, where)
    if text is not None:
        evidence = m.observe(text, source=source, at=patch.at)
        patch = replace(patch, evidence=evidence)
    return m.apply(patch, hard_commit=hard).decision


def _export(args: argparse.Namespace) -> int:
    with _open_existing(args.store) as m:
        for key in m.keys():
            versions = m.versions(key)
            if args.heads:
                head = m.cell(key).head
                versions = [head] if head else []
            for v in versions:
                record = v.to_dict()
                record["evidence"] = [
                    {
                        "id": e,
                        "text": m.evidence(e).text,
                        "source": m.evidence(e).source,
                        "at": m.evidence(e).at.isoformat(),
                    }
                    for e in v.evidence
                ]
                print(json.dumps(record, ensure_ascii=False))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from pmem.demo import run

    return run(args.store)


def _print_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    raise SystemExit(main())
