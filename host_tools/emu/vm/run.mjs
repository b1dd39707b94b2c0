// Script-mode runner for the MicroPython 1.27 WebAssembly VM (the "virtual board").
//
//   node host_tools/emu/vm/run.mjs [--mount HOSTDIR:VMDIR]... [--heap BYTES] [--pystack WORDS]
//                              (script.py | -c CODE) [args...]
//
// Host dirs are copied (not linked) into the VM's in-memory filesystem, so the script sees
// them the way a board sees its flash. The script runs as __main__ with sys.argv set and
// '/' importable; piped stdin feeds sys.stdin. Exit status: the script's SystemExit code,
// 1 for an uncaught exception (traceback on stderr, then a last stderr line
// "PITBOSS-VM-EXIT <code>"), 2 for usage errors, 3 if the VM itself failed.
// Why a wrapper: the port's own CLI prints the traceback and still exits 0, which would let
// a failing on-board test pass.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { copyIntoVM, writeAll } from "./vmfs.mjs";

const PKG = "@micropython/micropython-webassembly-pyscript";
const here = path.dirname(fileURLToPath(import.meta.url));

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\nusage: node run.mjs [--mount HOSTDIR:VMDIR]... ` +
    `[--heap BYTES] [--pystack WORDS] (script.py | -c CODE) [args...]\n`);
  process.exit(2);
}

function parseSize(s) {
  const m = /^(\d+)([kKmM]?)$/.exec(s);
  if (!m) usage(`bad size ${s}`);
  return parseInt(m[1], 10) * ({ k: 1024, m: 1048576 }[m[2].toLowerCase()] || 1);
}

// ---- arguments -------------------------------------------------------------------------
const mounts = [];
let heap = 2 * 1048576, pystack = 2048, scriptPath = null, code = null;
const argv = process.argv.slice(2);
let i = 0;
for (; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--mount") {
    const spec = argv[++i] || usage("--mount needs HOSTDIR:VMDIR");
    const k = spec.lastIndexOf(":");
    if (k <= 0) usage(`bad --mount ${spec}`);
    mounts.push([spec.slice(0, k), spec.slice(k + 1) || "/"]);
  } else if (a === "--heap") heap = parseSize(argv[++i] || usage("--heap needs BYTES"));
  else if (a === "--pystack") pystack = parseSize(argv[++i] || usage("--pystack needs WORDS"));
  else if (a === "-c") { code = argv[++i] ?? usage("-c needs CODE"); i++; break; }
  else if (a === "--") { i++; scriptPath = argv[i++] || usage("no script"); break; }
  else if (a.startsWith("-") && a !== "-") usage(`unknown option ${a}`);
  else { scriptPath = a; i++; break; }
}
if (code === null && scriptPath === null) usage("no script");
const scriptArgs = argv.slice(i);
const source = code !== null ? code
  : fs.readFileSync(scriptPath === "-" ? 0 : scriptPath, "utf8");
const scriptName = code !== null ? "-c" : scriptPath;

// ---- stdio -----------------------------------------------------------------------------
// Output is buffered and written synchronously, and flushed before every stdin read, so a
// host tool can talk to the script line by line (prompt, answer, prompt...).
let outBuf = [];
function flushOut() {
  if (outBuf.length) { writeAll(1, Buffer.from(outBuf)); outBuf = []; }
}
function onOut(bytes) {
  for (const b of bytes) outBuf.push(b);
  if (outBuf.length > 4096 || bytes[bytes.length - 1] === 10) flushOut();
}
function onErr(bytes) { flushOut(); writeAll(2, Buffer.from(bytes)); }

// stdin is read lazily (only when the script asks), so a script that never reads stdin does
// not block on an inherited terminal or pipe.
let inBuf = Buffer.alloc(0), inPos = 0, inEOF = false;
function onIn() {
  if (inPos >= inBuf.length && !inEOF) {
    flushOut();
    const chunk = Buffer.alloc(4096);
    for (;;) {
      try {
        const n = fs.readSync(0, chunk, 0, chunk.length, null);
        if (n === 0) inEOF = true;
        inBuf = chunk.subarray(0, n); inPos = 0;
        break;
      } catch (e) {
        if (e.code === "EAGAIN") { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); continue; }
        if (e.code === "EOF") { inEOF = true; break; }
        throw e;
      }
    }
  }
  return inPos < inBuf.length ? inBuf[inPos++] : null; // null = EOF for emscripten's TTY
}

// ---- VM --------------------------------------------------------------------------------
function findPackage() {
  // The node_modules host_tools chose ($PITBOSS_NODE_MODULES: the checkout's, or the
  // installed package's under ~/.pitboss), else the repo's (two levels up), else normal
  // resolution.
  const chosen = process.env.PITBOSS_NODE_MODULES;
  if (chosen) return path.resolve(chosen, PKG, "micropython.mjs");
  const local = path.resolve(here, "..", "..", "..", "node_modules", PKG, "micropython.mjs");
  if (fs.existsSync(local)) return local;
  return createRequire(import.meta.url).resolve(`${PKG}/micropython.mjs`);
}

// The wrapper runs the script in its own globals and turns every ending into an int in
// _pb_rc; heap_lock() left on by a failing script is undone so the traceback can print.
const WRAPPER = `
def _pb_main():
    import sys, os, micropython
    global _pb_rc
    os.chdir('/')
    sys.argv[:] = _pb_argv
    if '/' not in sys.path:
        sys.path.insert(1, '/')
    g = {'__name__': '__main__', '__file__': _pb_name}
    try:
        exec(compile(_pb_src, _pb_name, 'exec'), g)
        _pb_rc = 0
    except SystemExit as e:
        c = e.args[0] if e.args else None
        if c is None:
            _pb_rc = 0
        elif isinstance(c, int):
            _pb_rc = c
        else:
            print(c, file=sys.stderr)
            _pb_rc = 1
    except BaseException as e:
        micropython.heap_lock()
        while micropython.heap_unlock():
            pass
        sys.print_exception(e, sys.stderr)
        _pb_rc = 1
_pb_main()
`;

const { loadMicroPython } = await import(findPackage());
let rc;
try {
  const mp = await loadMicroPython({
    heapsize: heap, pystack, linebuffer: false,
    stdin: onIn, stdout: onOut, stderr: onErr,
  });
  for (const [h, v] of mounts) {
    if (!fs.statSync(h, { throwIfNoEntry: false })?.isDirectory()) usage(`not a directory: ${h}`);
    copyIntoVM(mp.FS, h, v);
  }
  mp.globals.set("_pb_src", source);
  mp.globals.set("_pb_name", scriptName);
  mp.runPython("_pb_argv = []");
  const pyArgv = mp.globals.get("_pb_argv");
  for (const a of [scriptName, ...scriptArgs]) pyArgv.append(a);
  mp.runPython(WRAPPER);
  rc = mp.globals.get("_pb_rc");
  if (typeof rc !== "number") rc = 1;
} catch (e) {
  // The wrapper itself failed (e.g. MemoryError while reporting) or the VM aborted.
  flushOut();
  process.stderr.write(`run.mjs: VM failure: ${e && e.message ? e.message : e}\n`);
  rc = 3;
}
flushOut();
if (rc !== 0) process.stderr.write(`PITBOSS-VM-EXIT ${rc}\n`);
process.exitCode = rc & 0xff;
