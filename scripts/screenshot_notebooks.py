"""Screenshots of committed notebooks as a learner first sees them: JupyterLab, nothing run, in headless
Chromium.

    python scripts/screenshot_notebooks.py 01_precision_recall_hit_rate.ipynb --out /tmp/shots

starts JupyterLab on notebooks/ (a fresh token, a fresh settings and workspace folder, so no saved layout
or trust carries over), opens each notebook in a fresh Chromium profile with a tall window, and writes
one PNG a notebook (the first ``--height`` pixels of it: a tall window shows more). Needs
the ``chromium`` package (Debian: ``apt-get install -y chromium``) and JupyterLab (``make setup``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, seconds: float = 90) -> None:
    end = time.time() + seconds
    while time.time() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"JupyterLab did not answer at {url} within {seconds:.0f} s")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    raise SystemExit("no Chromium found: install it (Debian: apt-get install -y chromium)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", help="notebook file names in notebooks/")
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="folder for the PNG files")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=2400)
    parser.add_argument("--wait", type=int, default=25000, help="milliseconds of page time before the shot")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    browser = _chromium()
    token, port = secrets.token_hex(16), _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, JUPYTER_CONFIG_DIR=f"{tmp}/config", JUPYTERLAB_SETTINGS_DIR=f"{tmp}/settings",
                   JUPYTERLAB_WORKSPACES_DIR=f"{tmp}/workspaces")
        lab = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", f"--port={port}",
             "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
             f"--ServerApp.root_dir={ROOT / 'notebooks'}"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait(f"http://127.0.0.1:{port}/api/status?token={token}")
            for name in args.notebooks:
                shot = args.out / (Path(name).stem + ".png")
                url = f"http://127.0.0.1:{port}/lab/tree/{name}?token={token}&reset"
                subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile-{shot.stem}",
                                f"--window-size={args.width},{args.height}",
                                f"--virtual-time-budget={args.wait}",
                                f"--screenshot={shot.resolve()}", url],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
                print(shot)
        finally:
            lab.terminate()
            lab.wait(timeout=30)


if __name__ == "__main__":
    main()
