"""`pitboss verify`: the board against the host's build, with a fresh random seed
(GLI-style): the board answers an HMAC of every file (or program region) under the seed
(pitboss.store.integrity.seeded_answer), computed here the same way over the host's own
build, so no stored answer fits.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from host_tools.deploy import mpremote_steps as steps
from host_tools.deploy.flash_plan import MANIFEST, manifest_text
from host_tools.deploy.mpy_abi import decode_sys_mpy
from host_tools.deploy.mpy_build import REPO, BuiltFile, all_planned, build, build_dir, build_lock
from host_tools.output import FlashError
from pitboss.store import integrity


@dataclass
class VerifyResult:
    board: str
    mode: str
    problems: list[tuple[str, str]]
    seeded: bool = False   # the board answered a fresh seed, and the answer was checked

    @property
    def ok(self) -> bool:
        return not self.problems


def expected_answer(files: list[BuiltFile], manifest: str, seed: bytes) -> dict:
    """What pitboss.store.integrity.seeded_answer(seed) must give on a board holding exactly
    `files` and `manifest` (the host's own build), computed here with CPython's hmac."""
    import hashlib
    import hmac

    blobs = {f.dest: f.local.read_bytes() for f in files}
    blobs[MANIFEST] = manifest.encode()
    return expected_from(blobs, seed)


def expected_from(blobs: dict, seed: bytes) -> dict:
    """The seeded answer over {board path: bytes} (files, or program regions "@...")."""
    import hashlib
    import hmac

    out, total = [], hmac.new(seed, digestmod=hashlib.sha256)
    for path in sorted(blobs):
        d = hmac.new(seed, path.encode() + b"\0" + blobs[path], hashlib.sha256).digest()
        total.update(path.encode() + b"\0" + d)
        out.append([path, d.hex()])
    return {"files": out, "digest": total.hexdigest()}


def compare_answer(expected: dict, got: dict) -> list[tuple[str, str]]:
    """Problems between the host's expected seeded answer and the board's."""
    exp = dict(map(tuple, expected["files"]))
    have = dict(map(tuple, got.get("files") or []))
    problems = []
    for path in sorted(set(exp) | set(have)):
        if path not in have:
            problems.append((path, "missing"))
        elif path not in exp:
            problems.append((path, "unlisted (not in the host's build)"))
        elif exp[path] != have[path]:
            problems.append((path, "mismatch"))
    if not problems and got.get("digest") != expected["digest"]:
        problems.append(("(all files)", "seeded digest differs"))
    return problems


def new_seed() -> bytes:
    import secrets

    return secrets.token_bytes(32)


def verify(port: str, board: str = "auto", source: bool | None = None,
           progress=print, root: Path = REPO, seed: bytes | None = None) -> VerifyResult:
    """Board vs the host's build, with a fresh random seed (GLI-style): the board answers
    an HMAC of every file under the seed (pitboss.store.integrity.seeded_answer), so no stored
    answer fits. A production board answers the `verify` protocol line from its running
    firmware; a board in service mode answers over the raw REPL with the checker's source
    sent from here, and also reports its manifest and file list.
    source=None: the mode the board's manifest records (mpy if it has none)."""
    from host_tools.link.protolink import PRODUCTION, probe

    progress = progress or (lambda msg: None)
    seed = seed or new_seed()
    with steps.open_port(port) as dev:
        if probe(dev) == PRODUCTION:
            return _verify_production(dev, board, source, progress, root, seed)
        info = steps.describe(dev, all_planned(board, root))
        try:
            answer = steps.report(steps.run(
                dev, ["exec", steps.board_code("seeded(%r)" % seed.hex())], steps.TIMEOUT_QUERY))
        finally:
            steps.restart_loop(dev)  # the table runs again after the raw REPL
    name = steps.resolve_board(board, info["platform"])
    minfo, _ = integrity.parse_manifest(info["manifest"] or "")
    if source is None:
        source = minfo.get("mode") == "source"
    mode = "source" if source else "mpy"
    # The build's files are read (hashed, their regions made) under the lock too: another
    # flash or verify from this checkout rebuilds build/mpy/<board>/ from scratch, and a
    # CI run's verify once found halting.mpy gone under it.
    with build_lock(build_dir(root)):
        files = build(name, source, decode_sys_mpy(info["mpy"]), build_dir(root), root)
        return _verify_files(name, mode, files, info, answer, seed, progress)


def _verify_files(name, mode, files, info, answer, seed, progress) -> VerifyResult:
    """A service board's hashes and seeded `answer` (`info`: what it reported) against the
    host's build `files` (read here: the caller holds the build's lock)."""
    if info.get("romfs"):  # the pitboss image: its program flash, not files
        return _verify_program(name, mode, files, info, answer, seed, progress)
    final = manifest_text(files, name, mode, integrity.COMPLETE)
    problems = _manifest_problems(info["manifest"], final)
    for f in files:
        got = info["hashes"].get(f.dest)
        if got is None:
            problems.append((f.dest, "missing"))
        elif got != f.sha256:
            problems.append((f.dest, "mismatch"))
    built = {f.dest for f in files} | {MANIFEST}
    for path in info.get("files") or ():
        if path not in built:
            problems.append((path, "unlisted (not in the host's build)"))
    for p in compare_answer(expected_answer(files, final, seed), answer):
        if p not in problems and (p[0], "missing") not in problems:
            problems.append(p)
    return _verify_result(name, mode, problems, files, progress)


def _manifest_problems(have: str | None, final: str) -> list[tuple[str, str]]:
    """The board's manifest text `have` against the host's complete one."""
    if have is None:
        return [(MANIFEST, "no manifest")]
    problems = []
    if integrity.parse_manifest(have)[0].get("state") != integrity.COMPLETE:
        problems.append((MANIFEST, "pending (a flash did not finish)"))
    if have != final:
        problems.append((MANIFEST, "differs from the host's build"))
    return problems


def _verify_program(name, mode, files, info, answer, seed, progress) -> VerifyResult:
    """verify() on the pitboss image (service mode): the manifest lists the program
    regions (host_tools/deploy/romfs_deploy.py), and no code may be on littlefs."""
    from host_tools.deploy import romfs_deploy

    regions = romfs_deploy.program_for(files, bool(info.get("frozen")))
    final = romfs_deploy.manifest_text(regions, name, mode, integrity.COMPLETE)
    problems = _manifest_problems(info["manifest"], final)
    for path in info.get("files") or ():
        problems.append((path, "code on littlefs (the pitboss image runs only its own "
                               "program flash)"))
    blobs = dict(regions)
    blobs[MANIFEST] = final.encode()
    for p in compare_answer(expected_from(blobs, seed), answer):
        if p not in problems:
            problems.append(p)
    return _verify_result(name, mode, problems, regions, progress, "program regions")


def _verify_production(dev, board, source, progress, root, seed) -> VerifyResult:
    from host_tools.link.protolink import LinkError, ProtocolLink

    try:
        with ProtocolLink(dev) as link:
            r = link.request("verify " + seed.hex(), timeout=120)
    except LinkError as e:
        raise FlashError(str(e))
    if not r.get("ok"):
        raise FlashError("the board refused verify: %s" % (r.get("error"),))
    name = steps.resolve_board(board, r["platform"])
    if name != r["board"]:
        raise FlashError("the board says it is %r, not %r" % (r["board"], name))
    if source is None:
        source = r.get("mode") == "source"
    mode = "source" if source else "mpy"
    with build_lock(Path(root) / "build"):  # (held while the files are read: verify())
        files = build(name, source, decode_sys_mpy(r["mpy"]), Path(root) / "build", root)
        return _verify_answer(name, mode, files, r, seed, progress)


def _verify_answer(name, mode, files, r, seed, progress) -> VerifyResult:
    """A production board's `verify` answer `r` against the host's build `files`."""
    if any(p.startswith("@") for p, _ in r.get("files") or ()):
        from host_tools.deploy import romfs_deploy  # the pitboss image: program regions

        # The release image's manifest lists its core alone (the firmware frozen in it).
        release = not any(p.startswith("@romfs/") for p, _ in r.get("files") or ())
        regions = romfs_deploy.program_for(files, release)
        final = romfs_deploy.manifest_text(regions, name, mode, integrity.COMPLETE)
        problems = compare_answer(expected_from(dict(regions, **{MANIFEST: final.encode()}),
                                                seed), r)
        counted, what = regions, "program regions"
    else:
        final = manifest_text(files, name, mode, integrity.COMPLETE)
        problems = compare_answer(expected_answer(files, final, seed), r)
        counted, what = files, "files"
    if r.get("state") != integrity.COMPLETE:
        problems.append((MANIFEST, "not complete (%s)" % r.get("state")))
    if r.get("sealed") is False:
        problems.append((integrity.SEAL, "the seal does not match the manifest"))
    return _verify_result(name, mode, problems, counted, progress, what)


def _verify_result(name, mode, problems, files, progress, what="files") -> VerifyResult:
    result = VerifyResult(name, mode, problems, seeded=True)
    if result.ok:
        progress("ok: %d %s on the board match the %s build for %s (fresh seed)"
                 % (len(files), what, mode, name))
    else:
        for path, what in problems:
            progress("MISMATCH %s: %s" % (path, what))
    return result
