"""`ir-explorer cache [--clear] [--json]`: what the derived-data cache holds (explorer.cache), and clearing it."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from explorer.cache import documents as derived
from explorer.cache import folder as cache_folder
from explorer.formatting import human_bytes


def run_cache_command(args: argparse.Namespace) -> int:
    cleared = 0
    if args.clear:
        cleared, size = derived.clear()
        if not args.json:
            print(f"removed {cleared} entr{'y' if cleared == 1 else 'ies'} ({human_bytes(size)})", file=sys.stderr)
    listed = derived.kept_entries()
    total = sum(size for _, size, _, _ in listed)
    if args.json:
        from explorer.contracts import dump

        entries = [{"entry": str(path), "source": header.source if header else None,
                    "format": header.format if header else None, "bytes": size,
                    "last_used": datetime.fromtimestamp(used, UTC).isoformat(timespec="seconds")}
                   for path, size, used, header in listed]  # fmt: skip
        print(dump("cache", {"folder": str(cache_folder.root()), "enabled": cache_folder.enabled(),
                             "cap_bytes": cache_folder.cap(), "total_bytes": total, "entries": entries,
                             "cleared": cleared}))  # fmt: skip
        return 0
    state = "" if cache_folder.enabled() else " (off: IR_EXPLORER_CACHE=off)"
    print(f"{cache_folder.root()}{state}: {len(listed)} entr{'y' if len(listed) == 1 else 'ies'}, "
          f"{human_bytes(total)} of {human_bytes(cache_folder.cap())}")
    for path, size, used, header in reversed(listed):  # the most recently used first
        when = datetime.fromtimestamp(used).strftime("%Y-%m-%d %H:%M")
        what = f"{header.source} ({header.format})" if header else f"{path.name} (not readable by this version)"
        print(f"  {human_bytes(size):>10}  {when}  {what}")
    return 0
