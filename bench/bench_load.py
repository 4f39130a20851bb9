"""Load benchmark, shared server (not a test): N simulated students open the same cached example link on the Heatmaps
page of the real Streamlit server, each in its own Chromium browser context (one headless Debian Chromium, the
contexts driven concurrently by Playwright's async API), then a light user's page load is timed alone and while
another session builds a report card.

    python bench/bench_load.py                 # 10 and 30 students
    python bench/bench_load.py --students 3    # a quick look on a busy machine

Printed: the machine line (bench/machine.py); per N, the time to the first heatmap row and to all rows per
student (median, p95); the server's peak RSS (VmHWM of /proc/<pid>/status); and the light user's page load
(median of a few) alone and during the report card, with their ratio; and the CPU seconds per page load of the server
process and of the browsers. On one small machine the browsers compete with the server for its cores (a Streamlit
page costs a browser far more CPU than the server), so the split says which one limited the times; a class's
students each bring their own machine. The server runs in shared mode
(EXWB_SHARED=1: job slots and quotas on) with the quick default model, one torch thread.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
METHODS = ["attention", "leave_one_out", "saliency"]
LINK = {"page": "Heatmaps", "model": "default-quick", "text": "a gorgeous, witty, seductive movie",
        "methods": ",".join(METHODS)}
TIMEOUT_MS = 600_000


def start_server(env_overrides: dict, root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """The app of the checkout at ``root`` (bench/bench_page_cpu.py compares two) on a free port, in shared mode."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "EXWB_MODEL": "default-quick", "EXWB_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "OMP_WAIT_POLICY": "PASSIVE", "EXWB_SHARED": "1", **env_overrides}
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                "--server.fileWatcherType", "none", "--server.port", str(port),
                                "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
                               cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(600):
        try:
            if urllib.request.urlopen(url + "_stcore/health", timeout=1).read() == b"ok":
                return process, url
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the Streamlit server did not become healthy")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def open_link(browser, link: str) -> tuple[float, float]:
    """Seconds to the first heatmap row and to all of the link's rows, in a fresh browser context."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    page = await context.new_page()
    started = time.perf_counter()
    try:
        await page.goto(link, timeout=TIMEOUT_MS)
        rows = page.locator(".xw-row")
        await rows.first.wait_for(timeout=TIMEOUT_MS)
        first = time.perf_counter() - started
        await page.wait_for_function(f"document.querySelectorAll('.xw-row').length >= {len(METHODS)}",
                                     timeout=TIMEOUT_MS)
        return first, time.perf_counter() - started
    finally:
        await context.close()


def cpu_seconds(pid: int, children: bool = False) -> float:
    """User + system CPU seconds of a process (and of its waited-for children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def chromium_cpu_seconds() -> float:
    """CPU seconds of every live Chromium process (the simulated students' browsers)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"chrom" in (entry / "cmdline").read_bytes()[:200]:
                    total += cpu_seconds(int(entry.name), children=True)
            except OSError:
                pass
    return total


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def students(browser, link: str, n: int, server_pid: int) -> dict:
    """N students open the link at once; also the CPU seconds the server and the browsers spent per page load
    (on one machine the browsers compete with the server for its cores: the split says which one was the limit)."""
    server0, browsers0 = cpu_seconds(server_pid), chromium_cpu_seconds()
    results = await asyncio.gather(*(open_link(browser, link) for _ in range(n)))
    server, browsers = cpu_seconds(server_pid) - server0, chromium_cpu_seconds() - browsers0
    firsts, dones = [r[0] for r in results], [r[1] for r in results]
    return {"first_median": statistics.median(firsts), "first_p95": p95(firsts),
            "done_median": statistics.median(dones), "done_p95": p95(dones),
            "server_cpu_per_load": server / n, "browser_cpu_per_load": browsers / n}


async def light_user(browser, link: str, repeats: int) -> float:
    return statistics.median([(await open_link(browser, link))[1] for _ in range(repeats)])


async def start_report_card(browser, url: str):
    """Another session builds a report card (the page's defaults); returns its page (kept open)."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    page = await context.new_page()
    await page.goto(url + "?" + urlencode({"page": "Report_card", "model": "default-quick"}, quote_via=quote))
    button = page.get_by_role("button", name="Build (or resume) the report card")
    await button.wait_for(timeout=TIMEOUT_MS)
    await button.click()
    await page.get_by_role("button", name="Stop").wait_for(timeout=TIMEOUT_MS)
    return context, page


async def main(counts: list[int], repeats: int) -> None:
    from playwright.async_api import async_playwright

    print(machine.describe())
    process, url = start_server({})
    link = url + "?" + urlencode(LINK, quote_via=quote)
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            await open_link(browser, link)  # warm: the model loaded, the explanations cached
            single = await students(browser, link, 1, process.pid)
            print(f"1 student (cached link): first row {single['first_median']:.1f} s, done "
                  f"{single['done_median']:.1f} s; CPU per page load: server {single['server_cpu_per_load']:.2f} s, "
                  f"browser {single['browser_cpu_per_load']:.2f} s")
            for n in counts:
                figures = await students(browser, link, n, process.pid)
                print(f"{n} students: first row median {figures['first_median']:.1f} s / p95 "
                      f"{figures['first_p95']:.1f} s; done median {figures['done_median']:.1f} s / p95 "
                      f"{figures['done_p95']:.1f} s ({figures['done_p95'] / single['done_median']:.1f}x one "
                      f"student); CPU per page load: server {figures['server_cpu_per_load']:.2f} s, browsers "
                      f"{figures['browser_cpu_per_load']:.2f} s; server peak RSS so far {peak_rss_mb(process.pid):.0f} MB")
            alone = await light_user(browser, link, repeats)
            context, card = await start_report_card(browser, url)
            during = await light_user(browser, link, repeats)
            print(f"light user (cached page load, median of {repeats}): alone {alone:.1f} s, while another session "
                  f"builds a report card {during:.1f} s: {during / alone:.2f}x", flush=True)
            await card.get_by_role("button", name="Stop").click(timeout=TIMEOUT_MS)  # (a busy machine: not 30 s)
            await context.close()
            print(f"server peak RSS {peak_rss_mb(process.pid):.0f} MB")
            await browser.close()
    finally:
        process.terminate()
        process.wait(30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--repeats", type=int, default=3, help="light-user loads timed alone and during the card")
    args = parser.parse_args()
    if CHROMIUM is None:
        raise SystemExit("Debian chromium is not installed (make test installs it)")
    asyncio.run(main(args.students, args.repeats))
