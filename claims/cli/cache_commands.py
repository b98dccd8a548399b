"""What ``ldsicl runs`` and ``ldsicl cache list|clear|export`` do: the weight store as the
command line shows it (claims/cli/main.py holds the parser; the other subcommands are in
claims/cli/commands.py, whose conventions these follow: arguments checked before any work, a
bad one a claims.cli.shared.ParameterError reported as one line naming its flag, exit status 2).

Imports of modules that pull in torch are made by the commands that use them (about 0.7 s
of start-up; claims/cli/commands.py module doc); every command here needs them (the run
store's configurations are models.config.TrainConfig, and the cache key holds torch's
version).
"""
from __future__ import annotations

import datetime
import io
import json
import sys
from pathlib import Path

import numpy as np

from claims.cli.shared import ParameterError, cache_folder, check_out, naming, usage_error
from claims.harness.profiles import get_profile
from theory.jsonvalues import dumps

__all__ = ["run_runs", "run_cache"]


def run_runs(args, parser) -> int:
    """``ldsicl runs``: the run ids each claim trains in a profile at ``--claims-params`` (its
    spec's runs, claims.cluster.training.claim_run_table; every claim unless ``--claim``, one
    that trains nothing saying so), and whether this code's weights for each are in the cache."""
    from claims.cli.commands import claims_point
    from claims.cluster.training import claim_run_table
    from claims.harness.params import DEFAULT, activate
    from claims.harness.runs import config_for                 # its TrainConfig imports torch (module doc)
    from models.cache import cache_path

    try:
        point = claims_point(args.claims_params) or DEFAULT
        cache_folder(args.cache_dir)
        with naming("profile"):
            profile = get_profile(args.profile)
        with naming("claim"), activate(point):
            table = claim_run_table(profile, None if args.claim is None else [args.claim])
        status = {}
        for rid in dict.fromkeys(r for ids in table.values() for r in ids):
            config = config_for(rid, profile)
            with naming("cache_dir"):
                path = cache_path(config, args.cache_dir)
            status[rid] = "cached" if path.is_file() else "not cached"
    except ValueError as exc:
        usage_error(parser, exc)
    at = f" at {point.tag()}" if point.tag() else ""
    if args.json:
        print(dumps({"profile": profile.name, "point": point.tag(),
                     "claims": {c: [{"run": r, "cache": status[r]} for r in ids] for c, ids in table.items()}}))
        return 0
    for c, ids in table.items():
        if not ids:
            print(f"{c}: no trained run in the {profile.name} profile")
        for r in ids:
            print(f"{c}  {r}  ({status[r]})")
    n = len(status)
    params = f" --claims-params {point.tag()}" if point.tag() else ""
    print(f"{n} distinct run{'' if n == 1 else 's'} in the {profile.name} profile{at} "
          f"({sum(v == 'cached' for v in status.values())} cached); train one with "
          f"`ldsicl train --claim <run> --profile {profile.name}`, all with "
          f"`ldsicl train --profile {profile.name}{params}`", file=sys.stderr)
    return 0


def _format_entry(e: dict) -> str:
    created = "-"
    if e["created"] is not None:
        created = datetime.datetime.fromtimestamp(e["created"], datetime.timezone.utc)
        created = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    show = lambda v: "-" if v is None else str(v)  # noqa: E731
    return (f"{e['key'][:12]}  setting={show(e['setting'])} s={show(e['s'])} steps={show(e['steps'])} "
            f"batch={show(e['batch'])} seed={show(e['seed'])} created={created} size={e['size']} "
            f"{e['status']}")


def _export_source(args):
    """The cache entry ``cache export`` reads: (path, run id or None).  KEY is a cache key
    (or its first 8 or more hex digits, as ``cache list`` shows 12) or a run id of
    ``--profile`` (its entry for this code).  ParameterError naming ``key`` (or ``cache_dir``)
    otherwise."""
    from claims.harness.runs import config_for                 # its TrainConfig imports torch (module doc)
    from models.cache import cache_path, list_entries

    key = args.key
    cache_folder(args.cache_dir)
    if len(key) >= 8 and all(ch in "0123456789abcdef" for ch in key.lower()):
        with naming("cache_dir"):
            hits = [e for e in list_entries(args.cache_dir) if e["key"].startswith(key.lower())]
        if len(hits) != 1:
            raise ParameterError("key", f"key {key!r} matches {len(hits)} cache entries (`ldsicl cache list` "
                                 "shows them)")
        return Path(hits[0]["path"]), None
    with naming("key"):
        config = config_for(key, get_profile(args.profile), name="key")
    with naming("cache_dir"):
        path = cache_path(config, args.cache_dir)
    if not path.is_file():
        raise ParameterError("key", f"key {key!r} names a run with no weights of this code in the cache; train "
                             f"them with `ldsicl train --claim {key} --profile {args.profile}`")
    return path, key


def _export(args, parser) -> int:
    """``ldsicl cache export KEY --out FILE.npz``: one entry's weights, per layer, with its
    configuration and code fingerprint (numpy ``.npz``; arrays W_V, W_QK of shape
    (layers, s + 1, s + 1); strings config, fingerprint, cache_key, run as JSON)."""
    from models.files import atomic_write_bytes
    from models.result import TrainResult               # torch (module doc)

    try:
        out = check_out(args.out)
        path, run_id = _export_source(args)
    except ValueError as exc:
        usage_error(parser, exc)
    except OSError as exc:                        # an unreadable cache folder
        print(f"ldsicl cache: error: cannot read the cache ({exc})", file=sys.stderr)
        return 1
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        result = TrainResult.from_dict(data)
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        print(f"ldsicl cache: error: the cache entry {str(path)!r} cannot be read ({type(exc).__name__}: "
              f"{exc}); `ldsicl cache clear --stale-only` removes unreadable entries", file=sys.stderr)
        return 1
    L = result.config.layers
    k = result.config.s + 1
    buf = io.BytesIO()
    np.savez(buf, W_V=np.reshape(result.W_V, (L, k, k)), W_QK=np.reshape(result.W_QK, (L, k, k)),
             config=dumps(result.config.to_dict()), fingerprint=dumps(data.get("fingerprint")),
             cache_key=path.stem, run=dumps(run_id))
    try:
        atomic_write_bytes(out, buf.getvalue())
    except OSError as exc:
        print(f"ldsicl cache: error: cannot write {str(out)!r} ({exc})", file=sys.stderr)
        return 1
    print(f"wrote {out} (entry {path.stem[:12]}" + (f", run {run_id}" if run_id else "")
          + f"; {L} layer{'' if L == 1 else 's'}, s = {result.config.s})")
    return 0


def run_cache(args, parser) -> int:
    """``ldsicl cache list|clear|export``."""
    from models.cache import clear, list_entries, resolve_cache_dir   # torch (module doc)

    if args.action == "export":
        return _export(args, parser)
    try:
        with naming("cache_dir"):
            folder = resolve_cache_dir(args.cache_dir)
            if args.action == "list":
                entries = list_entries(args.cache_dir)
            else:
                removed = clear(args.cache_dir, stale_only=args.stale_only)
    except ValueError as exc:
        usage_error(parser, exc)
    except OSError as exc:
        print(f"ldsicl cache: error: {exc}", file=sys.stderr)
        return 1
    if args.action == "clear":
        what = "stale " if args.stale_only else ""
        print(f"removed {removed} {what}entr{'y' if removed == 1 else 'ies'} from {folder}")
        return 0
    if args.json:
        print(dumps(entries))
        return 0
    for e in entries:
        print(_format_entry(e))
    counts = {k: sum(e["status"] == k for e in entries) for k in ("current", "stale", "corrupt")}
    print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in {folder} ("
          + ", ".join(f"{n} {k}" for k, n in counts.items()) + ")", file=sys.stderr)
    return 0
