"""The server's CPU per cached Heatmaps page load (the shared server's floor, and "a rerun does its work once"), not a
test: the real Streamlit server (bench/bench_load.py's: shared mode, default-quick, one torch thread) opens the load
benchmark's link in fresh Chromium browser contexts one after the other; the server process's CPU seconds per page
load are the figure. With ``--before DIR`` (another checkout, e.g. ``git worktree add /tmp/before main``) the two
servers are measured in turns, A B A B, so both see the same machine load.

    python bench/bench_page_cpu.py                       # this checkout, 3 rounds of 10 page loads
    python bench/bench_page_cpu.py --before /tmp/before  # before / after, interleaved
    python bench/bench_page_cpu.py --browser-cache      # and reloads with the frontend's files in the browser cache
    python bench/bench_page_cpu.py --py-spy py-spy       # and a py-spy profile of the server's page loads

Printed: the machine line, the load average, each server's idle CPU rate (Streamlit polls its config files) and HTTP
requests per page load, and per round and checkout the server CPU seconds per page load (user + system of the whole
server process: script runs, the websocket, static files; the idle rate times the wall time taken off) and the wall
seconds per load. The py-spy profiles sample the thread holding the interpreter lock (``--gil``).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import machine  # noqa: E402
from bench.bench_load import CHROMIUM, FLAGS, LINK, METHODS, TIMEOUT_MS, cpu_seconds, open_link, start_server  # noqa: E402


async def idle_rate(pid: int, seconds: float = 10.0) -> float:
    """The server's CPU seconds per wall second with no browser open: Streamlit polls its config files every 0.2 s
    (a page load that takes 20 s on a busy machine would otherwise be charged 20 s of it)."""
    before, started = cpu_seconds(pid), time.perf_counter()
    await asyncio.sleep(seconds)
    return (cpu_seconds(pid) - before) / (time.perf_counter() - started)


async def page_loads(browser, link: str, pid: int, n: int, idle: float = 0.0) -> tuple[float, float]:
    """(server CPU seconds per page load, the idle rate's share taken off; wall seconds per page load) over ``n``
    loads one after the other."""
    before, started = cpu_seconds(pid), time.perf_counter()
    walls = [(await open_link(browser, link))[1] for _ in range(n)]
    busy = cpu_seconds(pid) - before - idle * (time.perf_counter() - started)
    return busy / n, statistics.mean(walls)


async def cached_loads(browser, link: str, pid: int, n: int, idle: float) -> tuple[float, dict[str, int]]:
    """(server CPU seconds per page load, HTTP requests of the last load) over ``n`` reloads in one browser context:
    Streamlit's frontend files come from the browser's cache after the first load, as they would from a reverse
    proxy that serves ``/static/`` (docs/deploy.md); every load is still a new session and a whole script run."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    page = await context.new_page()
    seen = {"static": 0, "other": 0}

    def count(request) -> None:
        seen["static" if "/static/" in request.url else "other"] += 1

    rows = f"document.querySelectorAll('.xw-row').length >= {len(METHODS)}"
    try:
        await page.goto(link, timeout=TIMEOUT_MS)
        await page.wait_for_function(rows, timeout=TIMEOUT_MS)
        page.on("request", count)
        before, started = cpu_seconds(pid), time.perf_counter()
        for _ in range(n):
            seen.update(static=0, other=0)
            await page.goto("about:blank")
            await page.goto(link, timeout=TIMEOUT_MS)
            await page.wait_for_function(rows, timeout=TIMEOUT_MS)
        busy = cpu_seconds(pid) - before - idle * (time.perf_counter() - started)
    finally:
        await context.close()
    return busy / n, seen


async def requests_per_load(browser, link: str) -> dict[str, int]:
    """The HTTP requests of one page load in a fresh browser context, by kind (static files, the rest)."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    page = await context.new_page()
    seen = {"static": 0, "other": 0}

    def count(request) -> None:
        seen["static" if "/static/" in request.url else "other"] += 1

    page.on("request", count)
    try:
        await page.goto(link, timeout=TIMEOUT_MS)
        await page.wait_for_function(f"document.querySelectorAll('.xw-row').length >= {len(METHODS)}",
                                     timeout=TIMEOUT_MS)
    finally:
        await context.close()
    return seen


async def main(roots: dict[str, Path], rounds: int, loads: int, py_spy: str | None,
               browser_cache: bool) -> None:
    from playwright.async_api import async_playwright

    print(machine.describe())
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    servers = {name: start_server({}, root) for name, root in roots.items()}
    figures: dict[str, list[float]] = {name: [] for name in roots}
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            links = {name: url + "?" + urlencode(LINK, quote_via=quote) for name, (_, url) in servers.items()}
            idle = {}
            for name in roots:  # warm: the model loaded, the explanations cached, the first-run imports done
                for _ in range(2):
                    await open_link(browser, links[name])
                idle[name] = await idle_rate(servers[name][0].pid)
                print(f"{name}: idle server {idle[name]:.4f} CPU s per second; requests per page load "
                      f"{await requests_per_load(browser, links[name])}", flush=True)
            for round_ in range(rounds):
                for name in roots:
                    process = servers[name][0]
                    cpu, wall = await page_loads(browser, links[name], process.pid, loads, idle[name])
                    figures[name].append(cpu)
                    print(f"round {round_ + 1} {name}: server CPU {cpu:.3f} s per page load (idle polling taken off), "
                          f"wall {wall:.2f} s "
                          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
            if browser_cache:
                for name in roots:
                    cpu, seen = await cached_loads(browser, links[name], servers[name][0].pid, loads, idle[name])
                    print(f"{name}, frontend files from the browser's cache: server CPU {cpu:.3f} s per page load; "
                          f"requests of a load {seen} (load average {os.getloadavg()[0]:.1f})", flush=True)
            if py_spy:
                for name in roots:
                    pid = servers[name][0].pid
                    out = Path(tempfile.gettempdir()) / f"server-{name.replace(' ', '-')}.txt"
                    spy = subprocess.Popen([py_spy, "record", "--pid", str(pid), "--format", "raw", "--rate", "200",
                                            "--gil",
                                            "--output", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    await asyncio.sleep(2)
                    await page_loads(browser, links[name], pid, loads)
                    spy.send_signal(2)
                    spy.wait(60)
                    print(f"py-spy profile of {name} ({loads} page loads): {out}")
            await browser.close()
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(30)
    for name, values in figures.items():
        print(f"{name}: server CPU per cached page load, median of {len(values)} rounds: {statistics.median(values):.3f} s")
    if len(figures) == 2:
        before, after = (statistics.median(v) for v in figures.values())
        print(f"after / before: {after / before:.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout to measure in turns with this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loads", type=int, default=10, help="page loads per round and checkout")
    parser.add_argument("--browser-cache", action="store_true",
                        help="also reload in one browser context: the frontend's files from the browser's cache")
    parser.add_argument("--py-spy", help="the py-spy executable: record each server's page loads (raw, folded stacks)")
    args = parser.parse_args()
    if CHROMIUM is None:
        raise SystemExit("Debian chromium is not installed (make test installs it)")
    roots = {"before": args.before.resolve(), "after": ROOT} if args.before else {"this checkout": ROOT}
    asyncio.run(main(roots, args.rounds, args.loads, args.py_spy, args.browser_cache))
