"""pitboss.store.auth (HMAC-SHA256 on hashlib, counter against replay) and host_tools.table.auth."""
import hashlib
import hmac
import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host_tools.table import auth as H
from pitboss.store import auth as A
from pitboss.store.auth import Auth, Mac, equal, hmac_sha256, provision
from tests.support.powercut_fs import MemFS, PowerCut

KEY = bytes(range(1, 33))

# RFC 4231 section 4: (key, data, HMAC-SHA256; test case 5 is truncated to 128 bits)
RFC4231 = [
    (b"\x0b" * 20, b"Hi There",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
    (b"Jefe", b"what do ya want for nothing?",
     "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    (b"\xaa" * 20, b"\xdd" * 50,
     "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
    (bytes(range(1, 26)), b"\xcd" * 50,
     "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
    (b"\x0c" * 20, b"Test With Truncation", "a3b6167473100ee06e0c796c2955552b"),
    (b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First",
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    (b"\xaa" * 131, b"This is a test using a larger than block-size key and a larger than "
     b"block-size data. The key needs to be hashed before being used by the HMAC "
     b"algorithm.", "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
]


@pytest.mark.parametrize("key,data,want", RFC4231)
def test_rfc4231_vectors(key, data, want):
    got = hmac_sha256(key, data).hex()
    assert got[:len(want)] == want
    assert got == hmac.new(key, data, hashlib.sha256).hexdigest()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=300))
def test_matches_cpython_hmac_for_any_key_and_message(key, msg):
    # Keys below, at and above the 64-byte block size.
    assert hmac_sha256(key, msg) == hmac.new(key, msg, hashlib.sha256).digest()


def test_block_size_edges_and_mac_object():
    for n in (0, 1, 63, 64, 65, 128, 129):
        key = bytes(range(n)) if n <= 256 else b""
        assert hmac_sha256(key, b"m") == hmac.new(key, b"m", hashlib.sha256).digest(), n
    m = Mac(KEY)
    assert m.digest(b"a") == m.digest(b"a") == hmac_sha256(KEY, b"a")
    assert KEY.hex() not in repr(m) and "1, 2, 3" not in repr(m)
    with pytest.raises(TypeError):
        Mac("text key")


def test_equal():
    assert equal(b"abc", b"abc") and not equal(b"abc", b"abd") and not equal(b"ab", b"abc")
    assert equal(b"", b"")


# ---- verify ---------------------------------------------------------------------------
def board(fs=None, key=KEY):
    fs = fs or MemFS()
    if key is not None:
        provision(key, "/auth", fs)
    return Auth("/auth", fs).load(), fs


def test_accepts_a_signed_command_once():
    a, fs = board()
    assert a.fault is None and a.counter == 0
    line = H.auth_line(KEY, 1, "config game pa-three-card-prime")
    assert a.check_line(line) == (True, "ok", "config game pa-three-card-prime")
    assert a.counter == 1
    # The same line again (replay), and on the next power cycle.
    assert a.check_line(line) == (False, "replay", "config game pa-three-card-prime")
    a2 = Auth("/auth", fs).load()
    assert a2.counter == 1
    assert a2.check_line(line)[:2] == (False, "replay")
    # A later counter works; an earlier one does not, even if never used.
    assert a2.check_line(H.auth_line(KEY, 5, "paytable pair_plus 40 30 6 3 1"))[0]
    assert a2.check_line(H.auth_line(KEY, 3, "rules ante 10"))[:2] == (False, "replay")
    assert a2.check_line(H.auth_line(KEY, 6, "rules ante 10"))[:2] == (True, "ok")


def test_forged_and_malformed_commands_are_refused_with_reasons():
    a, fs = board()
    good = H.auth_line(KEY, 7, "config game qc-caribbean")
    parts = good.split(" ", 3)
    other_key = H.auth_line(b"k" * 32, 7, "config game qc-caribbean")
    cases = {
        "bad_mac": [
            other_key,
            " ".join(parts[:3] + ["config game nj-5card"]),  # command changed
            " ".join([parts[0], "8", parts[2], parts[3]]),  # counter changed
            " ".join([parts[0], parts[1], "0" * 64, parts[3]]),
            " ".join([parts[0], parts[1],
                      parts[2][:-1] + ("1" if parts[2][-1] != "1" else "2"), parts[3]]),
        ],
        "bad_format": [
            "", "auth", "auth 7", "auth 7 %s" % parts[2], "config game qc-caribbean",
            "auth x %s %s" % (parts[2], parts[3]),
            "auth -7 %s %s" % (parts[2], parts[3]),
            "auth 0 %s %s" % (parts[2], parts[3]),
            "auth 1234567890123456 %s %s" % (parts[2], parts[3]),
            "auth 7 %s %s" % (parts[2][:-2], parts[3]),
            "auth 7 %s %s" % ("zz" + parts[2][2:], parts[3]),
            "AUTH 7 %s %s" % (parts[2], parts[3]),
            "auth 7 %s %s" % (parts[2], "x" * 600),
        ],
    }
    n = 0
    for reason, lines in cases.items():
        for line in lines:
            ok, why, _ = a.check_line(line)
            assert (ok, why) == (False, reason), line
            n += 1
    assert a.failures == n and a.counter == 0
    # Upper-case hex is the same MAC.
    assert a.check_line(" ".join([parts[0], parts[1], parts[2].upper(), parts[3]])) == \
        (True, "ok", "config game qc-caribbean")
    assert a.failures == 0
    # Whitespace around the command is not part of it; inside it, it is.
    ok, why, cmd = a.check_line("  " + H.auth_line(KEY, 8, "rules  ante 5") + " \r\n")
    assert (ok, cmd) == (True, "rules  ante 5")
    assert a.check_line(H.auth_line(KEY, 9, "rules  ante 5").replace("  ", " "))[1] == "bad_mac"
    # verify() directly: non-str command, bool counter, bytes MAC.
    mac = H.mac_hex(KEY, 20, "x")
    assert a.verify(b"x", 20, mac) == (False, "bad_format")
    assert a.verify("x", True, mac) == (False, "bad_format")
    assert a.verify("x", 20, mac.encode()) == (True, "ok")
    assert a.verify("y", "21", H.mac_hex(KEY, 21, "y")) == (True, "ok")


def test_no_key_and_damaged_stores():
    a, fs = board(key=None)
    assert a.fault == "no_key"
    assert a.check_line(H.auth_line(KEY, 1, "x"))[:2] == (False, "no_key")
    a, fs = board()
    a.check_line(H.auth_line(KEY, 1, "x"))
    a.check_line(H.auth_line(KEY, 2, "x"))
    # Both counter copies damaged: refuse everything (a replay could otherwise pass).
    bad = fs.clone()
    for p in ("/auth/counter.a", "/auth/counter.b"):
        bad.files[p][-2] ^= 1
    a2 = Auth("/auth", bad).load()
    assert a2.fault == "counter_corrupt"
    assert a2.check_line(H.auth_line(KEY, 99, "x"))[:2] == (False, "counter_corrupt")
    # Re-provisioning with a new key restores service from a damaged counter.
    newkey = b"R" * 32
    provision(newkey, "/auth", bad)
    a2 = Auth("/auth", bad).load()
    assert a2.fault is None and a2.counter == 0
    assert a2.check_line(H.auth_line(KEY, 1, "x"))[:2] == (False, "bad_mac")
    assert a2.check_line(H.auth_line(newkey, 1, "x"))[:2] == (True, "ok")
    # Key damaged.
    bad = fs.clone()
    for p in ("/auth/key.a", "/auth/key.b"):
        bad.files[p][20] ^= 1
    assert Auth("/auth", bad).load().fault == "key_corrupt"
    # Re-provisioning a new key restores service; the counter is kept.
    newkey = b"N" * 32
    provision(newkey, "/auth", fs)
    a3 = Auth("/auth", fs).load()
    assert a3.counter == 2
    assert a3.check_line(H.auth_line(KEY, 3, "x"))[:2] == (False, "bad_mac")
    assert a3.check_line(H.auth_line(newkey, 3, "x"))[:2] == (True, "ok")
    # Both key copies hold the new key: the old one does not linger on flash.
    assert all(KEY not in bytes(fs.files[p]) for p in ("/auth/key.a", "/auth/key.b"))
    with pytest.raises(ValueError):
        provision(b"short", "/auth", fs)
    with pytest.raises(ValueError):
        provision("x" * 32, "/auth", fs)


def test_store_error_refuses():
    a, fs = board()
    real = fs.open
    fs.open = lambda p, m: (_ for _ in ()).throw(OSError(28, "full")) if "w" in m \
        else real(p, m)
    assert a.check_line(H.auth_line(KEY, 1, "x"))[:2] == (False, "store_error")
    fs.open = real
    assert a.counter == 0
    assert a.check_line(H.auth_line(KEY, 1, "x"))[:2] == (True, "ok")


@pytest.mark.parametrize("mode", ["prefix", "cow"])
def test_power_cut_during_accept_never_allows_a_replay(mode):
    base = board(MemFS(mode))[1]
    a = Auth("/auth", base).load()
    a.check_line(H.auth_line(KEY, 4, "x"))
    line = H.auth_line(KEY, 5, "config game nj-3card")
    k = 0
    while True:
        fs = base.clone()
        a = Auth("/auth", fs).load()
        fs.cut_after(k)
        try:
            ok = a.check_line(line)[0]
        except PowerCut:
            ok = None
        fs.reboot()
        a = Auth("/auth", fs).load()
        assert a.fault is None and a.counter in (4, 5)
        if ok:
            assert a.counter == 5
            assert a.check_line(line)[:2] == (False, "replay")
            break
        # Not acknowledged: the command was never carried out. Either the counter did
        # not reach flash (the same line works) or it did (the line is now a replay and
        # the host signs the command again with a new counter). Never both.
        if a.counter == 4:
            assert a.check_line(line)[:2] == (True, "ok")
        else:
            assert a.check_line(line)[:2] == (False, "replay")
            assert a.check_line(H.auth_line(KEY, 6, "config game nj-3card"))[0]
        k += 1
    assert k >= 15


# ---- host side -------------------------------------------------------------------------
def test_keystore_provision_sign_and_permissions(tmp_path):
    ks = H.KeyStore(tmp_path / "keys")
    key = ks.provision("table-07")
    kp = ks.key_path("table-07")
    assert stat.S_IMODE(kp.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    assert ks.load_key("table-07") == key and len(key) == 32
    with pytest.raises(FileExistsError):
        ks.provision("table-07")
    assert ks.provision("table-07", force=True) != key
    assert stat.S_IMODE(kp.stat().st_mode) == 0o600
    key = ks.load_key("table-07")
    # Counters: monotonic, persisted, jump past what the board reports.
    assert ks.next_counter("table-07") == 1
    assert ks.next_counter("table-07") == 2
    assert ks.next_counter("table-07", board_last=40) == 41
    assert H.KeyStore(tmp_path / "keys").last_counter("table-07") == 41
    line = ks.sign("table-07", "config game pr-pai-gow")
    assert line.startswith("auth 42 ")
    a, fs = board(key=key)
    assert a.check_line(line) == (True, "ok", "config game pr-pai-gow")
    # A key file others can read is refused; bad names are refused.
    os.chmod(kp, 0o644)
    with pytest.raises(H.KeyStoreError, match="chmod 600"):
        ks.load_key("table-07")
    with pytest.raises(ValueError):
        ks.key_path("../etc/passwd")
    with pytest.raises(H.KeyStoreError, match="provision"):
        ks.load_key("nope")
    with pytest.raises(ValueError):
        H.mac_hex(key, 0, "x")
    with pytest.raises(ValueError):
        H.mac_hex(key, 1, "  ")


def test_cli_never_prints_the_key(tmp_path, capsys):
    d = str(tmp_path / "k")
    assert H.main(["--dir", d, "provision", "t1"]) == 0
    key = H.KeyStore(d).load_key("t1")
    out = capsys.readouterr().out
    assert key.hex() not in out and H.fingerprint(key) in out
    assert H.main(["--dir", d, "sign", "t1", "config", "game", "nj-5card"]) == 0
    line = capsys.readouterr().out.strip()
    assert line == H.auth_line(key, 1, "config game nj-5card")
    script = tmp_path / "prov.py"
    assert H.main(["--dir", d, "board-script", "t1", str(script)]) == 0
    assert stat.S_IMODE(script.stat().st_mode) == 0o600
    assert key.hex() in script.read_text()
    assert key.hex() not in capsys.readouterr().out
    assert H.main(["--dir", d, "provision", "t1"]) == 1  # exists


def test_reasons_are_listed():
    assert set(A.REASONS) >= {"ok", "bad_format", "no_key", "key_corrupt",
                              "counter_corrupt", "bad_mac", "replay", "store_error"}
