"""bench/lighthouse.py (a benchmark, not a test): Lighthouse on the built site, served on 127.0.0.1,
driven through Debian's Chromium (CHROME_PATH). Needs `make site` first.

Targets: performance >= 0.95, accessibility = 1.00, best practices = 1.00.
"""

import functools
import gzip
import http.server
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = {"home": "/", "question": "/interview-questions/trace-lab/",
         "notebook": "/interview-questions/one-trace-not-faster/"}
TEXT = {".html", ".css", ".js", ".json", ".svg", ".ipynb", ".xml"}
TARGETS = {"performance": 0.95, "accessibility": 1.0, "best-practices": 1.0}


class Hosted(http.server.SimpleHTTPRequestHandler):
    """Serve site/ as a static host does (GitHub Pages gzips text), so Lighthouse measures the hosted site."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        path = path / "index.html" if path.is_dir() else path
        if "gzip" not in self.headers.get("Accept-Encoding", "") or path.suffix not in TEXT or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Hosted, directory=ROOT / "site"))
threading.Thread(target=server.serve_forever, daemon=True).start()
env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
flags = "--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
missed = []
for name, path in PAGES.items():
    out = ROOT / "build" / f"lighthouse-{name}.json"
    subprocess.run([str(ROOT / "node_modules/.bin/lighthouse"), f"http://127.0.0.1:{server.server_port}{path}",
                    "--quiet", "--output=json", f"--output-path={out}", f"--chrome-flags={flags}",
                    "--only-categories=performance,accessibility,best-practices"], env=env, check=True)
    scores = {key: json.loads(out.read_text())["categories"][key]["score"] for key in TARGETS}
    print(f"{name:<9} " + "  ".join(f"{key} {value:.2f}" for key, value in scores.items()))
    missed += [f"{name} {key} {value:.2f} < {TARGETS[key]:.2f}" for key, value in scores.items() if value < TARGETS[key]]
print("targets met" if not missed else "targets missed: " + "; ".join(missed))
sys.exit(1 if missed else 0)
