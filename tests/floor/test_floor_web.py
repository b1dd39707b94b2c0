"""The pit view (issue 31), served by the collector over a small simulated floor: every
page and answer fetched and searched for key material (none may reach the browser),
read-only; and in real headless Chromium (Debian's, through its chromedriver): the grid
shows a table tilt live, without a reload, and a round's detail opens from its table."""
import json
import os
import socket
import time
import urllib.error
import urllib.request

import pytest

from host_tools.floor import procs as fr

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("content-type", ""), r.read()


@pytest.fixture(scope="module")
def floor(tmp_path_factory):
    d = tmp_path_factory.mktemp("pit")
    # tilts stay until a test clears them (tilt_hold 0)
    sim = fr.sim(d, "pit", 6, 1, 400, pace=0.15, tilt_hold=0).start()
    try:
        state = fr.wait_sim(d, "pit")
        port = free_port()
        tables = [(t["id"], t["port"]) for t in state["tables"]]
        fr.write_config(d / "floor.toml", tables, d / "floor.sqlite", d / "keys",
                        http="127.0.0.1:%d" % port)
        col = fr.collector(d / "floor.toml", d / "collector.log").start()
        base = "http://127.0.0.1:%d" % port
        end = time.time() + 60
        while True:
            try:
                rows = json.loads(get(base + "/api/tables")[2])
                if len(rows) == 6 and all(r["last_round"] for r in rows):
                    break
            except (urllib.error.URLError, ConnectionError, ValueError):
                pass
            assert time.time() < end, "the pit view did not come up"
            time.sleep(0.3)
        yield {"dir": d, "base": base, "tables": [t for t, _ in tables]}
    finally:
        try:
            col.stop()
        except NameError:
            pass
        sim.stop()


def key_material(folder):
    """Every key of the floor's key store, in every form a page could show it."""
    import base64
    out = []
    for name in os.listdir(folder):
        if ".key" in name:
            with open(os.path.join(folder, name)) as f:
                k = bytes.fromhex(f.read().strip())
            out += [k.hex().encode(), k.hex().upper().encode(), base64.b64encode(k),
                    k.hex()[:16].encode()]
    assert out
    return out


def test_no_secret_reaches_the_page_and_it_is_read_only(floor):
    base = floor["base"]
    secrets = key_material(floor["dir"] / "keys")
    urls = ["/", "/api/tables", "/api/summary", "/health"]
    for t in floor["tables"]:
        urls += ["/table/%s" % t, "/api/table/%s" % t]
        for r in json.loads(get(base + "/api/table/%s" % t)[2])["rounds"][:3]:
            urls += ["/table/%s/round/%d" % (t, r["round"]),
                     "/api/round/%s/%d" % (t, r["round"])]
    bodies = []
    for u in urls:
        status, ctype, body = get(base + u)
        assert status == 200, u
        bodies.append((u, body))
    # the live stream too: its first event
    with urllib.request.urlopen(base + "/events", timeout=10) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        ev = r.readline() + r.readline()
        assert ev.startswith(b"event: tables\ndata: [")
        bodies.append(("/events", ev))
    for u, body in bodies:
        for s in secrets:
            assert s not in body, "key material in %s" % u
        assert b'"mac"' not in body and b"mac" not in body.lower().replace(b"machine", b""), u
    # a round's page shows its cards and settlement
    page = dict(bodies)["/table/%s/round/1" % floor["tables"][0]].decode()
    assert 'id=hands' in page and 'class="card' in page and "house net" in page
    # read-only: nothing but GET
    for u in ("/", "/api/tables", "/table/%s" % floor["tables"][0]):
        req = urllib.request.Request(base + u, data=b"x", method="POST")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        assert e.value.code == 405
    with pytest.raises(urllib.error.HTTPError) as e:
        get(base + "/api/round/%s/99999" % floor["tables"][0])
    assert e.value.code == 404


def chromium_missing():
    if not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)):
        return ("Debian's chromium and chromium-driver are not installed (./dev setup "
                "installs them when run as root)")
    try:
        import selenium  # noqa: F401  (installed?)
    except ImportError:
        return "selenium is not installed (requirements-dev.txt)"
    return None


def test_the_pit_view_in_chromium_shows_a_tilt_live_and_a_rounds_detail(floor, tmp_path):
    why = chromium_missing()
    if why:
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument("--user-data-dir=%s" % (tmp_path / "profile"))
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    shots = os.environ.get("PITBOSS_SCREENSHOTS") or str(tmp_path)
    try:
        drv.get(floor["base"] + "/")
        wait = WebDriverWait(drv, 30, poll_frequency=0.2)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#grid a.t")) == 6)
        # the events stream has redrawn the grid at least once (the live marker)
        wait.until(lambda d: d.find_element(By.ID, "live").text.startswith("live"))
        drv.execute_script("window.__same_page = 1")
        victim = floor["tables"][2]
        tile = "t-" + victim

        def state(d, ident=tile):
            # read in the page: the grid is redrawn by every event (elements go stale)
            return d.execute_script("var e = document.getElementById(arguments[0]); "
                                    "return e ? [e.dataset.state, e.textContent] : null",
                                    ident)
        assert state(drv)[0] != "tilted"
        # the shoe loses frames at that table: a misdeal, the table tilts
        open(floor["dir"] / "ctl" / (victim + ".tilt"), "w").close()
        wait.until(lambda d: state(d)[0] == "tilted")
        assert drv.execute_script("return window.__same_page") == 1  # no reload: live
        assert "shoe_gap" in state(drv)[1]
        drv.save_screenshot(os.path.join(shots, "pit-view.png"))
        # the table's page, then a round's detail
        drv.execute_script("document.getElementById(arguments[0]).click()",
                           "t-" + floor["tables"][0])
        wait.until(lambda d: d.current_url.endswith("/table/" + floor["tables"][0]))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#rounds a"))
        drv.save_screenshot(os.path.join(shots, "pit-view-table.png"))
        # (the table's page reloads itself as its rounds come in: the link is read and
        # clicked in the page, as a reader's click; a reload due while the round's page
        # loads must not cancel that navigation: web.py closes the stream on leaving)
        number, href = drv.execute_script(
            "var a = document.querySelectorAll('#rounds a'); a = a[a.length - 1]; "
            "a.click(); return [a.textContent.slice(1), a.href]")
        try:
            wait.until(lambda d: d.current_url == href and d.find_elements(By.ID, "hands"))
        except TimeoutException:
            raise AssertionError("the round's page did not come: at %s, wanted %s"
                                 % (drv.current_url, href))
        assert drv.find_element(By.ID, "round-title").text.endswith("round %s" % number)
        cards = drv.find_elements(By.CSS_SELECTOR, "#hands .card")
        assert len(cards) >= 6
        assert "house net" in drv.find_element(By.TAG_NAME, "main").text
        drv.save_screenshot(os.path.join(shots, "pit-view-round.png"))
        # the operator clears the tilt: the grid shows it back in play, live
        drv.get(floor["base"] + "/")
        wait.until(lambda d: (state(d) or [None])[0] == "tilted")
        with open(floor["dir"] / "ctl" / (victim + ".clear"), "w") as f:
            f.write("op-7")
        wait.until(lambda d: (state(d) or ["tilted"])[0] != "tilted")
    finally:
        drv.quit()
    for n in ("pit-view.png", "pit-view-round.png"):
        assert os.path.getsize(os.path.join(shots, n)) > 10000
