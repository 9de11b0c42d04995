"""Real-browser harness: Debian's Chromium + Playwright driving a JupyterLab the test starts.

Recipe (design/dependencies.md, "A real browser"): Chromium comes from Debian (`apt-get install -y
chromium` when `/usr/bin/chromium` is missing; `playwright install` is never run), Lab runs in its
own process group on a free 127.0.0.1 port with a random token and temporary config, settings,
workspace and runtime folders, so the test never touches the user's Jupyter state. Lab's news
popup is disabled through a temporary `page_config.json`. The kernel imports `workbench` from this
checkout through `PYTHONPATH`.

Every request the page makes to a host other than 127.0.0.1 is aborted and recorded
(`BrowserSession.offsite`): the workbench must fetch nothing. Screenshots go to
`$WORKBENCH_SCREENSHOTS` when set, otherwise to pytest's `tmp_path`; never into the repository.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
LAB_START_TIMEOUT_S = 60.0


def _ensure_chromium() -> Path | str:
    """Path to Debian's Chromium, installing it with apt when missing; else a skip reason."""
    if CHROMIUM.exists():
        return CHROMIUM
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return "chromium is missing and cannot be installed (no apt-get or not root)"
    for args in ([apt, "update"], [apt, "install", "-y", "chromium"]):
        done = subprocess.run(args, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
            return f"`{' '.join(args)}` failed: {tail[0]}"
    return CHROMIUM if CHROMIUM.exists() else "apt-get installed chromium but /usr/bin/chromium is absent"


@pytest.fixture(scope="session")
def chromium() -> Path:
    found = _ensure_chromium()
    if isinstance(found, str):
        pytest.skip(f"browser test skipped: {found}")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    """A running JupyterLab: base url, token and the folder it serves."""
    url: str
    token: str
    root: Path
    log: Path

    def api(self, path: str) -> object:
        req = urllib.request.Request(f"{self.url}{path}",
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.loads(resp.read())

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"


def _lab_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    config = home / "config"
    (config / "labconfig").mkdir(parents=True)
    (config / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                     ("JUPYTERLAB_SETTINGS_DIR", "settings"),
                     ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython")):
        (home / sub).mkdir(exist_ok=True)
        env[var] = str(home / sub)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, chromium: Path) -> Iterator[Lab]:
    """JupyterLab serving a temporary folder; stopped (whole process group) at the end."""
    home = tmp_path_factory.mktemp("lab-home")
    root = tmp_path_factory.mktemp("lab-root")
    port, token = _free_port(), secrets.token_hex(16)
    log = home / "lab.log"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
           "--ip", "127.0.0.1", "--port", str(port), f"--ServerApp.token={token}",
           f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
           "--ServerApp.port_retries=0"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=root,
                                env=_lab_env(home), start_new_session=True)
    running = Lab(f"http://127.0.0.1:{port}", token, root, log)
    try:
        deadline = time.monotonic() + LAB_START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                running.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab not ready after {LAB_START_TIMEOUT_S}s:\n"
                                f"{log.read_text()[-3000:]}")
                time.sleep(0.25)
        yield running
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)


@dataclass
class BrowserSession:
    """The Playwright browser plus the off-site requests it was prevented from making."""
    browser: object
    offsite: list[str] = field(default_factory=list)

    def new_page(self, width: int = 1600, height: int = 1200):  # -> playwright.sync_api.Page
        page = self.browser.new_page(viewport={"width": width, "height": height})

        def guard(route) -> None:
            host = route.request.url.split("/")[2] if "://" in route.request.url else ""
            if host.split(":")[0] in ("127.0.0.1", "localhost") or route.request.url.startswith(
                    ("data:", "blob:", "about:")):
                route.continue_()
            else:
                self.offsite.append(route.request.url)
                route.abort()

        page.route("**/*", guard)
        return page


@pytest.fixture(scope="session")
def browser(chromium: Path) -> Iterator[BrowserSession]:
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed in this environment")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            yield BrowserSession(launched)
        finally:
            launched.close()


@pytest.fixture
def screenshots(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Folder for this test's screenshots: `$WORKBENCH_SCREENSHOTS/<test>` or under tmp_path."""
    base = os.environ.get("WORKBENCH_SCREENSHOTS")
    folder = Path(base) / request.node.name if base else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
