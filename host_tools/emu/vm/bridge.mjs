// The virtual board: MicroPython 1.27 (WebAssembly) REPL speaking raw bytes on stdin/stdout,
// the way a board's UART does. host_tools/emu/vboard.py puts a pseudo-terminal in front of it so
// the real `mpremote connect <pty>` works.
//
//   node host_tools/emu/vm/bridge.mjs [--flash-dir DIR] [--heap BYTES]
//                                 [--switch service|production] [--ready-file PATH]
//
// Three fixes make mpremote work against this port (found by trying; see DEVELOPERS.md):
//  (a) raw-paste probe 0x05 'A' 0x01 is answered "R\x00" here: the port's raw-paste mode is
//      broken, and "R\x00" makes mpremote fall back to plain raw REPL;
//  (b) replProcessChar() returning non-zero (Ctrl-D = soft reboot) is done here: print
//      "MPY: soft reboot", reset Python state, replInit() again;
//  (c) emscripten errno numbers in "OSError: N" / "[Errno N]" output are rewritten to
//      MicroPython's, because mpremote's `fs` commands match on e.g. "OSError: 2".
// Flash: --flash-dir DIR is loaded into "/" at start, and after every input burst that could
// have run code, changed files are written back (temp file + rename) BEFORE the output of that
// burst is sent, so once mpremote sees a command finish, a SIGKILL cannot lose its writes.
// (This emscripten build has no NODEFS, so a write-through mount is not possible.)
// Power-on: /boot.py then /main.py run, as on a real board. The logic-door service switch
// (--switch, default production: nothing held) is pitboss_board.SERVICE. In production the
// firmware's main() hands back its loop body (pitboss_board.main_loop) instead of
// blocking on stdin (this VM cannot), and from then on every input byte goes to it: no
// byte reaches the REPL, Ctrl-C/Ctrl-A/Ctrl-D included, exactly as on a board whose main
// loop runs with kbd_intr(-1). If the loop ever raises, it has exited: the REPL takes
// over, as it would on a board (so the firmware must never let that happen).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { copyIntoVM, writeAll } from "./vmfs.mjs";

const PKG = "@micropython/micropython-webassembly-pyscript";
const here = path.dirname(fileURLToPath(import.meta.url));

let flashDir = null, heap = 2 * 1048576, service = false, readyFile = null, ctlPath = null;
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === "--flash-dir") flashDir = path.resolve(process.argv[++i]);
  else if (a === "--heap") heap = parseInt(process.argv[++i], 10);
  else if (a === "--ready-file") readyFile = path.resolve(process.argv[++i]);
  else if (a === "--ctl") ctlPath = path.resolve(process.argv[++i]);
  else if (a === "--switch") {
    const v = process.argv[++i];
    if (v !== "service" && v !== "production") { process.stderr.write(`bridge.mjs: --switch service|production\n`); process.exit(2); }
    service = v === "service";
  }
  else { process.stderr.write(`bridge.mjs: unknown argument ${a}\n`); process.exit(2); }
}

// ---- output: collected per burst, errno-fixed, written synchronously -------------------
let out = [];
const ERRNO = { 44: 2, 20: 17, 54: 20, 31: 21, 55: 39 };
// emscripten -> MicroPython/Linux numbering: ENOENT EEXIST ENOTDIR EISDIR ENOTEMPTY, the
// ones mpremote's fs commands rely on. Kept to these few because the rewrite is textual:
// firmware that raises a hard-coded Linux number (e.g. OSError(20)) is rewritten too.
function fixErrno(text) {
  return text
    .replace(/OSError: (\d+)/g, (m, n) => (n in ERRNO ? `OSError: ${ERRNO[n]}` : m))
    .replace(/\[Errno (\d+)\]/g, (m, n) => (n in ERRNO ? `[Errno ${ERRNO[n]}]` : m));
}
function flushOut() {
  if (!out.length) return;
  const raw = Buffer.from(out); out = [];
  // latin1 keeps every byte as one char, so the rewrite never corrupts binary/UTF-8 data.
  writeAll(1, Buffer.from(fixErrno(raw.toString("latin1")), "latin1"));
}
const emit = (s) => { for (const b of Buffer.from(s, "latin1")) out.push(b); };

// ---- VM --------------------------------------------------------------------------------
// The node_modules host_tools chose ($PITBOSS_NODE_MODULES), else the repo's, else resolution.
const chosen = process.env.PITBOSS_NODE_MODULES;
const local = chosen ? path.resolve(chosen, PKG, "micropython.mjs")
  : path.resolve(here, "..", "..", "..", "node_modules", PKG, "micropython.mjs");
const { loadMicroPython } = await import(
  chosen || fs.existsSync(local) ? local : `${PKG}/micropython.mjs`);
const mp = await loadMicroPython({
  heapsize: heap, linebuffer: false,
  stdout: (bytes) => { for (const b of bytes) out.push(b); },
  stderr: (bytes) => { for (const b of bytes) out.push(b); },
});
const FS = mp.FS;

// A board's root holds only its files: drop emscripten's /tmp and /home. /dev and /proc
// stay (the C runtime uses them) and are never synced.
const SPECIAL = new Set(["/dev", "/proc"]);
for (const d of ["/home/web_user", "/home", "/tmp"]) { try { FS.rmdir(d); } catch {} }

if (flashDir) {
  fs.mkdirSync(flashDir, { recursive: true });
  copyIntoVM(FS, flashDir, "/", (name) => name.startsWith(".pitboss-tmp-"));
}

// Honest identity: a ROM-like module `pitboss_board` (not a flash file) says which board this
// is; sys.implementation already says micropython 1.27 / 'JS with Emscripten'.
FS.writeFile("/pitboss_board.py",
  "# Provided by the virtual board (host_tools/emu/vm/bridge.mjs), not stored in flash.\n" +
  "import sys\nNAME = 'virtual'\nVIRTUAL = True\nMACHINE = sys.implementation._machine\n" +
  `SERVICE = ${service ? "True" : "False"}  # the logic-door switch at power-on\n`);
mp.runPython("import pitboss_board");
FS.unlink("/pitboss_board.py");

// What a real soft reset clears: imported modules, __main__'s names, a held heap lock, cwd.
const SOFT_RESET_PY = `
def _pb_reset():
    import sys, os, gc, micropython
    for k in list(sys.modules):
        if k != 'pitboss_board':
            del sys.modules[k]
    micropython.heap_lock()
    while micropython.heap_unlock():
        pass
    sys.modules['pitboss_board'].main_loop = None  # the loop ended with the reset
    sys.path[:] = ['', '.frozen', '/lib']
    sys.argv[:] = []
    os.chdir('/')
    g = globals()
    for k in list(g):
        if k != '__name__':
            del g[k]
    gc.collect()
_pb_reset()
`;

// ---- flash sync --------------------------------------------------------------------------
// snapshot: VM path -> Buffer (file) or null (dir), as last written to flashDir.
let snapshot = new Map();
function walkVM(dir = "/", acc = new Map()) {
  for (const name of FS.readdir(dir)) {
    if (name === "." || name === "..") continue;
    const p = dir === "/" ? `/${name}` : `${dir}/${name}`;
    if (SPECIAL.has(p)) continue;
    const st = FS.stat(p);
    if (FS.isDir(st.mode)) { acc.set(p, null); walkVM(p, acc); }
    else if (FS.isFile(st.mode)) acc.set(p, FS.readFile(p));
  }
  return acc;
}
function syncFlash() {
  if (!flashDir) return;
  const now = walkVM();
  // deletions first, deepest paths first, so directories are empty when removed
  const gone = [...snapshot.keys()].filter((p) => !now.has(p) ||
    (now.get(p) === null) !== (snapshot.get(p) === null)).sort().reverse();
  for (const p of gone) fs.rmSync(path.join(flashDir, p), { recursive: true, force: true });
  for (const [p, data] of now) {        // Map keeps walk order: parents before children
    const old = snapshot.get(p), host = path.join(flashDir, p);
    if (data === null) { if (old !== null || !snapshot.has(p)) fs.mkdirSync(host, { recursive: true }); continue; }
    if (old && old.length === data.length && Buffer.compare(old, data) === 0) continue;
    const tmp = path.join(path.dirname(host), `.pitboss-tmp-${path.basename(host)}`);
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, host);            // atomic per file: a kill leaves old or new, not half
  }
  snapshot = now;
}
if (flashDir) snapshot = walkVM();     // what was just loaded is already on disk

// ---- REPL ----------------------------------------------------------------------------------
// A soft reset from the friendly REPL (Ctrl-D at ">>> ") runs boot.py and main.py again, as
// MicroPython's pyexec does; from the raw REPL (mpremote's) it does not.
let rawMode = false;
function softReboot() {
  emit("MPY: soft reboot\r\n");
  try { mp.runPython(SOFT_RESET_PY); } catch (e) { emit(`soft reset cleanup failed: ${e.message}\r\n`); }
  if (!rawMode && powerOn()) return;  // the firmware's main loop runs again
  mp.replInit();
}

// (a) raw-paste probe: hold 0x05 / 0x05 'A' until we know whether the probe is complete.
let held = [], heldTimer = null;
function feed(b) {
  if (b === 0x01) rawMode = true;       // Ctrl-A: raw REPL
  else if (b === 0x02) rawMode = false; // Ctrl-B: back to the friendly REPL
  if (mainLoop) { pump([b]); return; }  // main.py started the loop again (soft reset)
  if (mp.replProcessChar(b)) softReboot();
}
function releaseHeld() {
  clearTimeout(heldTimer); heldTimer = null;
  const h = held; held = [];
  for (const b of h) feed(b);
}
function processByte(b) {
  if (held.length === 0 && b === 0x05) { held.push(b); return; }
  if (held.length === 1 && b === 0x41) { held.push(b); return; }
  if (held.length === 2 && b === 0x01) { held = []; clearTimeout(heldTimer); heldTimer = null; emit("R\x00"); return; }
  if (held.length) releaseHeld();
  if (b === 0x05) { held.push(b); return; }
  feed(b);
}

// ---- power-on: boot.py, main.py ---------------------------------------------------------
function runFile(p) {
  try {
    mp.runPython(`def _pb_run():\n    import os\n    try:\n        os.stat(${JSON.stringify(p)})\n` +
      `    except OSError:\n        return\n    exec(open(${JSON.stringify(p)}).read(), {"__name__": "__main__"})\n` +
      `_pb_run()\ndel _pb_run\n`);
  } catch (e) { emit(`${e.message}\r\n`.replace(/\n/g, "\r\n").replace(/\r\r/g, "\r")); }
}
let mainLoop = false;
// /boot.py then /main.py; true if main.py handed the bridge its main loop.
function powerOn() {
  runFile("/boot.py");
  runFile("/main.py");
  mp.runPython("import pitboss_board as _pbb\n_pb_loop = getattr(_pbb, 'main_loop', None) is not None\ndel _pbb\n");
  mainLoop = mp.globals.get("_pb_loop") === true;
  mp.runPython("del _pb_loop");
  return mainLoop;
}
powerOn();
syncFlash();                           // what boot wrote (journal replay, tilts)

function pump(chunk) {
  if (service) {
    // Service mode: the loop runs with Ctrl-C on (kbd_intr(3)), so Ctrl-C is a
    // KeyboardInterrupt that ends main.py and leaves the REPL, as on a board: how mpremote
    // breaks in to flash or verify. Bytes after it go to the REPL.
    const i = Buffer.from(chunk).indexOf(0x03);
    if (i >= 0) {
      if (i > 0) pump(Buffer.from(chunk).subarray(0, i));
      emit("\r\nKeyboardInterrupt: the table's loop stopped (service mode)\r\n");
      mainLoop = false;
      rawMode = false;
      mp.replInit();
      for (const b of Buffer.from(chunk).subarray(i + 1)) processByte(b);
      return;
    }
  }
  try {
    mp.runPython(`_pb_mark = __import__('pitboss_board').main_loop(__import__('binascii').unhexlify('${Buffer.from(chunk).toString("hex")}'))`);
  } catch (e) {
    // The main loop raised: on a board that ends main.py and leaves the REPL.
    emit(`${e.message}\r\n`);
    mainLoop = false;
    mp.replInit();
  }
}

if (!mainLoop) mp.replInit();
flushOut();                            // banner + ">>> " (none in production)
if (readyFile) fs.writeFileSync(readyFile, mainLoop ? "loop\n" : "repl\n");

// ---- side channel: the simulated shoe's UART, as the Pico emulator's control socket -----
// One JSON object per line in, one reply line out:
//   {"cmd": "uart", "id": 1, "hex": "..."}  bytes into the shoe UART's receive buffer
//                                            (boards/virtual.py BufferUART); the main loop
//                                            then runs a pass, so the cards are dealt
//   {"cmd": "uart_tx", "id": 1}              what the firmware sent on it (and clears it)
// Not through the REPL: the host's protocol lines and the shoe's bytes are two lines, as on
// a board. While mpremote holds the REPL the bytes wait in the UART's buffer.
const UART_PY = "__import__('pitboss.hw.board').hw.board.get().shoe_uart()";
function control(req) {
  if (req.cmd === "uart") {
    mp.runPython(`${UART_PY}.feed(__import__('binascii').unhexlify('${String(req.hex || "").replace(/[^0-9a-fA-F]/g, "")}'))`);
    if (mainLoop) pump(Buffer.alloc(0));
    syncFlash(); flushOut();
    return { ok: true, sent: (req.hex || "").length / 2 };
  }
  if (req.cmd === "uart_tx") {
    mp.runPython(`_pb_u = ${UART_PY}\n_pb_tx = __import__('binascii').hexlify(bytes(_pb_u.tx)).decode()\n_pb_u.tx[:] = b''\ndel _pb_u\n`);
    const hex = mp.globals.get("_pb_tx");
    mp.runPython("del _pb_tx");
    return { hex };
  }
  return { error: `unknown command ${JSON.stringify(req.cmd)}` };
}
if (ctlPath) {
  const net = await import("node:net");
  try { fs.unlinkSync(ctlPath); } catch {}
  const server = net.createServer((sock) => {
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        let reply;
        try { reply = control(JSON.parse(line)); } catch (e) { reply = { error: String(e.message || e) }; }
        if (!sock.destroyed) sock.write(JSON.stringify(reply) + "\n");
      }
    });
    sock.on("error", () => {});
  });
  server.listen(ctlPath);
  server.unref();
}

// The loop's idle passes. A board's loop polls its input every few ms whether or not a
// byte came (pitboss.loop.serve), which is what checks the shoe's timers: a torn frame
// nothing intact follows within RESEND_MS is a misdeal (docs/shoe-protocol.md). This VM
// cannot block, so the bridge runs an empty pass of the loop every TICK_MS while the loop
// owns the port. Flash is written back only when a pass changed something the loop
// reports (pitboss.loop.pump's return: the journal's last seq and the tilt count).
const TICK_MS = 50;
let lastMark = null;
function tick() {
  if (!mainLoop) return;
  pump(Buffer.alloc(0));
  const mark = mp.globals.get("_pb_mark");
  if (mark !== lastMark || out.length) { lastMark = mark; syncFlash(); flushOut(); }
}
setInterval(tick, TICK_MS).unref();

process.stdin.on("data", (chunk) => {
  if (mainLoop) { pump(chunk); syncFlash(); flushOut(); return; }
  let ran = false;
  for (const b of chunk) {
    processByte(b);
    if (b === 0x04 || b === 0x0d || b === 0x0a) ran = true;  // only these can execute code
  }
  if (held.length && !heldTimer) {
    // a lone Ctrl-E (paste mode) must not be held forever
    heldTimer = setTimeout(() => { releaseHeld(); syncFlash(); flushOut(); }, 50);
  }
  if (ran) syncFlash();                // persist BEFORE the client can see the command end
  flushOut();
});
process.stdin.on("end", () => { syncFlash(); flushOut(); process.exit(0); });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => { syncFlash(); process.exit(0); });
