"""Sharding the example run across CI runners: whole pages (a page's blocks share one namespace), balanced by the
committed per-page durations (tests/page-durations.json, refreshed by `tfv durations`). Not pytest-split: it
splits individual tests, so one page's blocks could land on two runners (jerry-git/pytest-split#108). A shard
writes build/shards/<device>-<i>.json, which `tfv merge` checks: which pages it was given, how its run ended."""

import json

from tfv.layout import DURATIONS, MANIFESTS
from tfv.pages import page_key


def weights(pages, durations=None):
    """{page: its recorded seconds}; a page with no recorded duration (a new one) counts as the mean."""
    if durations is None:
        durations = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    mean = sum(durations.values()) / len(durations) if durations else 1.0
    return {page: durations.get(page_key(page), mean) for page in pages}


def plan(pages, count, durations=None):
    """`count` lists of pages with near-equal total duration: longest page first, each to the lightest shard."""
    weight = weights(pages, durations)
    shards = [[] for _ in range(count)]
    totals = [0.0] * count
    for page in sorted(pages, key=lambda p: (-weight[p], str(p))):
        lightest = totals.index(min(totals))
        shards[lightest].append(page)
        totals[lightest] += weight[page]
    return [sorted(shard) for shard in shards]


def parse(spec):
    """'2/3' -> (2, 3)."""
    index, _, count = spec.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise ValueError(f"--shard must be i/N with 1 <= i <= N, not {spec!r}")
    return int(index), int(count)


def write_manifest(device, index, count, pages, exitstatus, folder=MANIFESTS):
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"device": device, "shard": index, "of": count, "exit": int(exitstatus),
                "pages": sorted(page_key(page) for page in pages)}
    (folder / f"{device}-{index}.json").write_text(json.dumps(manifest, indent=1) + "\n")
