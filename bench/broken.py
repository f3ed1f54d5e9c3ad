"""List the pages whose latest report has a failed example (the canary job publishes this list)."""

from tfv.report import reports

broken = []
for report in reports("cpu"):
    failed = [e["line"] for e in report["examples"] if e["outcome"] == "failed"]
    if failed:
        broken.append(f"- docs/{report['page']} (lines {', '.join(map(str, failed))}) on TF {report['versions']['tensorflow']}")
print("\n".join(["Pages that break:"] + broken) if broken else "No page breaks.")
