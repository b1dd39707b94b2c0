// Copy a host directory tree into the VM's emscripten filesystem (shared by run.mjs and
// bridge.mjs). __pycache__ is host-only noise and never goes to the board.
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
