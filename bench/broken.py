"""List the pages whose latest report has a failed example (the canary job publishes this list)."""

import json
from pathlib import Path

REPORT = Path(__file__).resolve().parent.parent / "build/report/cpu"
broken = []
for path in sorted(REPORT.rglob("*.json")):
    report = json.loads(path.read_text())
    failed = [e["line"] for e in report["examples"] if e["outcome"] == "failed"]
    if failed:
        broken.append(f"- docs/{report['page']} (lines {', '.join(map(str, failed))}) on TF {report['versions']['tensorflow']}")
print("\n".join(["Pages that break:"] + broken) if broken else "No page breaks.")
