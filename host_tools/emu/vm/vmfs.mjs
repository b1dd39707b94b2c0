// Helpers shared by run.mjs and bridge.mjs: copy a host directory tree into the VM's
// emscripten filesystem (__pycache__ never goes to the board), and blocking writes.
import fs from "node:fs";
import path from "node:path";

export function copyIntoVM(FS, hostDir, vmDir, skip = () => false) {
  FS.mkdirTree(vmDir);
  for (const ent of fs.readdirSync(hostDir, { withFileTypes: true })) {
    if (ent.name === "__pycache__" || skip(ent.name)) continue;
    const h = path.join(hostDir, ent.name), v = path.posix.join(vmDir, ent.name);
    if (ent.isDirectory()) copyIntoVM(FS, h, v, skip);
    else if (ent.isFile()) FS.writeFile(v, fs.readFileSync(h));
  }
}

// Write all of buf to fd synchronously; a non-blocking pipe or pty that is full (EAGAIN)
// is waited on briefly, so output is never dropped.
export function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try { off += fs.writeSync(fd, buf, off); }
    catch (e) { if (e.code !== "EAGAIN") throw e; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2); }
  }
}
