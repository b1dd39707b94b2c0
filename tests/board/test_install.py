"""`pip install .` (a wheel, not editable) into a fresh venv, then the `pitboss` command
from a folder outside the repository: --help, rank, census, games, and a real flash of a
throw-away virtual board from the firmware shipped in the package. pip may take its
build requirements and the runtime dependencies from its caches, so this stays quick."""
import json
import os
import shutil
import subprocess
import venv

from host_tools.emu.vm.runner import PKG, ensure_node_modules, find_node

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _install(env_dir):
    venv.create(env_dir, with_pip=True)
    bindir = env_dir / "bin"
    p = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q",
                        "--disable-pip-version-check", REPO],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    return bindir


def test_pip_install_then_run_from_another_folder(tmp_path):
    env_dir = tmp_path / "venv"
    bindir = _install(env_dir)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Nothing of the checkout leaks in: no PYTHONPATH, another cwd, a home of its own.
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PITBOSS_STATE", "PITBOSS_NODE_MODULES")}
    env = dict(base, PATH=str(bindir) + os.pathsep + base.get("PATH", ""),
               PITBOSS_HOME=str(tmp_path / "home"))

    def pitboss(*args, extra=None, timeout=120):
        return subprocess.run([str(bindir / "pitboss"), *args], cwd=elsewhere,
                              env=dict(env, **(extra or {})), capture_output=True,
                              text=True, timeout=timeout)

    r = pitboss("--help")
    assert r.returncode == 0 and "flash" in r.stdout and "census" in r.stdout, r.stderr
    r = pitboss("rank", "--game", "pr-pai-gow", "Kh", "Qh", "9h", "5h", "Jk")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hand"] == ["Jk=Ah", "Kh", "Qh", "9h", "5h"]
    r = pitboss("census", "--game", "nj-3card")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"]["straight"] == 720
    r = pitboss("games")
    assert r.returncode == 0 and "pa-all-six" in r.stdout

    # The firmware it flashes is the copy inside the installed package, not this checkout.
    r = subprocess.run([str(bindir / "python"), "-c",
                        "import host_tools, pitboss; print(host_tools.INSTALLED, "
                        "host_tools.REPO, pitboss.__file__)"],
                       cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60)
    installed, tree, pkg = r.stdout.split()
    assert installed == "True" and tree.startswith(str(env_dir)), r.stdout + r.stderr
    # pitboss is a package of the wheel (pyproject.toml), beside host_tools and its tree
    assert pkg.startswith(str(env_dir))
    assert os.path.isfile(os.path.join(tree, "firmware", "main.py"))
    assert len(os.listdir(os.path.join(tree, "tests", "vectors"))) >= 8

    # Both committed Pico images (the pitboss image and its release variant) are in the
    # wheel's tree and found by name (the default one was looked for beside the package);
    # the stock image (`pitboss bench --port pico` measures it) beside the bootrom named.
    from host_tools.emu.pico import find_firmware
    find = ("from host_tools.emu.pico import find_firmware\n"
            "for k in ('pitboss', 'release', 'stock'): print(find_firmware(k)[0])")
    r = subprocess.run([str(bindir / "python"), "-c", find],
                       cwd=elsewhere, env=dict(env, PITBOSS_PICO_BOOTROM=str(
                           find_firmware()[1])), capture_output=True, text=True, timeout=60)
    found = r.stdout.split()
    assert [os.path.basename(f) for f in found] == [
        "PITBOSS_PICO.uf2", "PITBOSS_PICO-FROZEN.uf2", "RPI_PICO-v1.27.0.uf2"], r.stderr
    assert all(f.startswith(tree) for f in found[:2]), found
    # Without it, the error names the variable that finds it.
    r = subprocess.run([str(bindir / "python"), "-c", "from host_tools.emu.pico import "
                        "find_firmware\nfind_firmware('stock')"], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=60)
    assert "PITBOSS_PICO_STOCK_UF2" in r.stderr, r.stderr

    # No VM and no npm: a clear message saying what to install and where, not a traceback.
    r = pitboss("flash", "--port", "virtual",
                extra={"PATH": str(bindir), "PITBOSS_NODE": find_node()})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "npm ci" in r.stderr and PKG in r.stderr and str(tmp_path / "home") in r.stderr
    assert os.path.isfile(tmp_path / "home" / "node" / "package-lock.json")

    # With the VM (this checkout's node_modules, so no npm download here): a real flash,
    # verified by the board, its build under PITBOSS_HOME.
    nm = str(ensure_node_modules())
    r = pitboss("flash", "--port", "virtual", extra={"PITBOSS_NODE_MODULES": nm}, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: the board's" in r.stdout and "/pitboss/rules/evaluator.mpy" in r.stdout
    assert (tmp_path / "home" / "build" / "mpy").is_dir()
    shutil.rmtree(env_dir)  # a few MB; tmp_path keeps the rest for a post-mortem


def test_the_wheel_carries_the_pico_flash_play_export_in_production(tmp_path):
    # Issue 29 item 1: after `pip install .`, `pitboss board start --kind pico` failed
    # with "No module named 'host_tools.emu.pico'" (and its .mjs found rp2040js only in a
    # checkout). From another folder: start the emulated Pico, flash it, provision it,
    # restart it in production, play a round, export it over protocol lines, stop it.
    from host_tools.emu.pico import find_firmware
    uf2 = find_firmware()[0]
    env_dir = tmp_path / "venv"
    bindir = _install(env_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PITBOSS_STATE", "PITBOSS_NODE_MODULES",
                         "PITBOSS_KEYS")}
    env = dict(base, PATH=str(bindir) + os.pathsep + base.get("PATH", ""),
               PITBOSS_HOME=str(tmp_path / "home"), PITBOSS_PICO_UF2=str(uf2),
               PITBOSS_KEYS=str(tmp_path / "home" / "keys"),
               PITBOSS_NODE_MODULES=str(ensure_node_modules()))

    def pitboss(*args, timeout=900):
        r = subprocess.run([str(bindir / "pitboss"), *args], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=timeout)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout

    st = json.loads(pitboss("board", "start", "--kind", "pico"))
    assert st["kind"] == "pico" and st["port"].startswith(str(tmp_path / "home"))
    try:
        assert "verified: the board's" in pitboss("flash", "--port", "board:pico")
        pitboss("provision", "--port", "board:pico", "--board-id", "p1")
        pitboss("board", "stop", "--kind", "pico")
        pitboss("board", "start", "--kind", "pico", "--production")
        out = pitboss("shoe", "--port", "board:pico", "--game", "nj-3card", "--seats",
                      "2", "--rounds", "1", "--seed", "3")
        assert out.count("house net") == 1, out
        res = json.loads(pitboss("export", "--json", "--port", "board:pico"))
        assert res["exported"] >= 1 and res["acked"] == res["last"], res
        with open(res["store"]) as f:
            recs = [json.loads(x) for x in f if x.strip()]
        assert sum('"ev":"settle"' in x["payload"] for x in recs) == 1
        assert os.path.basename(res["store"]) == "p1.jsonl"  # found by its fingerprint
    finally:
        subprocess.run([str(bindir / "pitboss"), "board", "stop", "--kind", "pico"],
                       cwd=elsewhere, env=env, capture_output=True, timeout=60)
    shutil.rmtree(env_dir)
