// Fix 7 (DEVELOPERS.md, "Pico board"): the emulator's speed, not its behaviour.
// rp2040js 1.4.1 decodes each Thumb instruction by testing it against its ~100 encodings
// in turn (CortexM0Core.executeInstruction, one if/else-if chain in alphabetical order of
// mnemonic): a load or a store, the commonest instructions, passes some sixty tests first.
// Profiled on the budget session (docs/bench.md), that chain was half the host's CPU time,
// and the session's wall time is the CI budget issue 27 misses.
//
// This module builds, once per process, the same method with the chain replaced by one
// jump: a table over all 65,536 first halfwords gives the branch the chain would take.
// The branches' bodies are rp2040js's own source text, unchanged and in the same order;
// only how one is found changes. Where the chain's choice also depends on the second
// halfword of a 32-bit instruction (BL, MSR, MRS, DSB/DMB/ISB, UDF.W), the case for that
// first halfword keeps the chain's remaining tests, in order, for those branches only.
//
// The table is derived by evaluating each branch's condition for every first halfword,
// with the second halfword as an object that records being read: a condition that never
// reads it is decided by the first halfword alone; one that reads it stays a test. So the
// derivation follows rp2040js's own conditions, whatever their order, and
// tests/test_pico_fastcore.py checks the choice against the original chain's for every
// first halfword (with second halfwords of each shape) and runs programs on both cores.
//
// Also the memory writes: RP2040.writeUint32 looks a peripheral up before it tries SRAM,
// so every store to the stack or the heap paid a sparse-object lookup first. SRAM is
// tried first here; no peripheral lives in SRAM's address range (checked when installed),
// so the result is the same.
//
// PITBOSS_PICO_FASTCORE=0 keeps rp2040js's own methods (for a comparison run).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const HEAD = '    executeInstruction() {\n';
const BRANCH = /^        (else )?if \((.*)\) \{$/;

/** The chain of executeInstruction's source: { pre, branches: [{cond, body}], tail }. */
export function splitChain(src) {
  const start = src.indexOf(HEAD);
  if (start < 0) throw new Error('rp2040js: no executeInstruction() found');
  const end = src.indexOf('\n    }\n', start);
  const lines = src.slice(start + HEAD.length, end).split('\n');
  // The chain starts at the first 8-space `if (` of the method after the opcode fetch.
  let i = lines.findIndex((l) => l.startsWith('        let deltaCycles'));
  if (i < 0) throw new Error('rp2040js: executeInstruction has no deltaCycles');
  const pre = lines.slice(0, i + 1);
  i++;
  const branches = [];
  let cur = null;
  let comment = [];
  for (; i < lines.length; i++) {
    const l = lines[i];
    if (cur === null) {
      const m = BRANCH.exec(l);
      if (m && (branches.length === 0) === !m[1]) {
        cur = { cond: m[2], body: [...comment] };
        comment = [];
      } else if (l === '        else {' && branches.length) {
        cur = { cond: null, body: [...comment] };
        comment = [];
      } else if (/^        \/\//.test(l) || l.trim() === '') {
        comment.push(l);
      } else {
        break;  // past the chain
      }
    } else if (l === '        }') {
      branches.push(cur);
      const last = cur.cond === null;
      cur = null;
      if (last) { i++; break; }
    } else {
      cur.body.push(l);
    }
  }
  if (cur !== null || !branches.length || branches[branches.length - 1].cond !== null) {
    throw new Error('rp2040js: executeInstruction\'s chain is not the expected if/else shape');
  }
  return { pre, branches, tail: lines.slice(i) };
}

/** For each first halfword, the branches the chain may take, in order: every branch whose
 *  condition depends on the second halfword, up to the first decided by the first alone. */
export function candidates(branches) {
  const tests = branches.map((b) => b.cond === null ? null
    : new Function('opcode', 'opcode2', `return !!(${b.cond});`));
  let read = false;
  const probe = { valueOf() { read = true; return 0; } };
  const out = new Array(65536);
  for (let op = 0; op < 65536; op++) {
    const list = [];
    for (let k = 0; k < branches.length; k++) {
      if (tests[k] === null) { list.push(k); break; }
      read = false;
      const hit = tests[k](op, probe);
      if (read) list.push(k);        // decided by the second halfword: keep the test
      else if (hit) { list.push(k); break; }
    }
    out[op] = list;
  }
  return out;
}

/** Source of executeInstruction with the chain as a switch over TABLE[opcode].
 *  `body(k)`, if given, replaces branch k's body (the tests' selectors). */
export function buildSource(src, body) {
  const { pre, branches, tail } = chainOf(src, body);
  const cand = candidates(branches);
  const kinds = new Map();  // candidate list (as text) -> case number
  const table = new Uint16Array(65536);
  const cases = [];
  for (let op = 0; op < 65536; op++) {
    const key = cand[op].join(',');
    let n = kinds.get(key);
    if (n === undefined) {
      n = cases.length;
      kinds.set(key, n);
      cases.push(cand[op]);
    }
    table[op] = n;
  }
  const out = [...pre, '        switch (TABLE[opcode]) {'];
  cases.forEach((list, n) => {
    out.push(`        case ${n}: {`);
    list.forEach((k, j) => {
      const b = branches[k];
      const last = j === list.length - 1;
      if (last && b.cond !== null && list.length === 1) {
        out.push(...b.body);  // decided by the first halfword alone
      } else if (b.cond === null || last) {
        // The last candidate: the chain would take it here (its condition is true for
        // this first halfword, whatever the second), or the final else.
        out.push(j ? '        else {' : '        {', ...b.body, '        }');
      } else {
        out.push(`        ${j ? 'else ' : ''}if (${b.cond}) {`, ...b.body, '        }');
      }
    });
    out.push('        break; }');
  });
  out.push('        }', ...tail);
  return { source: out.join('\n'), table, cases: cases.length, branches: branches.length };
}

function chainOf(src, body) {
  const c = splitChain(src);
  if (body) c.branches = c.branches.map((b, k) => ({ cond: b.cond, body: [body(k)] }));
  return c;
}

/** Two functions (opcode, opcode2) -> the index of the branch taken: by rp2040js's chain,
 *  and by the table (tests/support/fastcore_check.mjs compares them). */
export function selectors(src) {
  const ret = (k) => `            return ${k};`;
  const { branches } = chainOf(src, ret);
  const chain = branches.map((b, k) => b.cond === null
    ? `else {\n${b.body[0]}\n}` : `${k ? 'else ' : ''}if (${b.cond}) {\n${b.body[0]}\n}`).join('\n');
  const built = buildSource(src, ret);
  const switchSrc = built.source.split('\n');
  const from = switchSrc.findIndex((l) => l.startsWith('        switch ('));
  const to = switchSrc.lastIndexOf('        }');
  return {
    chain: new Function('opcode', 'opcode2', chain),
    table: new Function('TABLE', 'return (opcode, opcode2) => {\n'
      + switchSrc.slice(from, to + 1).join('\n') + '\n};')(built.table),
  };
}

/** The table-driven executeInstruction for rp2040js's core source `src`, its module-level
 *  declarations (constants, sign extension, enums: rp2040js's own text between its
 *  imports and the class) in scope, and the three values it imports. */
export function makeMethod(src, { MAX_HARDWARE_IRQ, APB_START_ADDRESS, SIO_START_ADDRESS }) {
  const built = buildSource(src);
  const a = src.indexOf('\n', src.lastIndexOf('\nimport ', src.indexOf('export class')) + 1);
  const preamble = src.slice(a, src.indexOf('export class CortexM0Core')).replace(/^export /gm, '');
  const make = new Function('MAX_HARDWARE_IRQ', 'APB_START_ADDRESS', 'SIO_START_ADDRESS', 'TABLE',
    `${preamble}\nreturn function executeInstruction() {\n${built.source}\n    };`);
  return { method: make(MAX_HARDWARE_IRQ, APB_START_ADDRESS, SIO_START_ADDRESS, built.table),
           branches: built.branches, cases: built.cases };
}

/** Installs the table-driven executeInstruction and the SRAM-first writeUint32 on
 *  rp2040js's classes (the module at coreUrl: rp2040js's dist/esm/cortex-m0-core.js).
 *  Returns what was done, for the board's log. */
export async function install(coreUrl) {
  if (process.env.PITBOSS_PICO_FASTCORE === '0') return 'off (PITBOSS_PICO_FASTCORE=0)';
  const coreMod = await import(coreUrl);
  const irq = await import(new URL('./irq.js', coreUrl).href);
  const rp = await import(new URL('./rp2040.js', coreUrl).href);
  const src = readFileSync(fileURLToPath(coreUrl), 'utf8');
  let built;
  try {
    built = makeMethod(src, { MAX_HARDWARE_IRQ: irq.MAX_HARDWARE_IRQ, ...rp });
  } catch (e) {
    // Another rp2040js than the one package-lock.json pins, whose method has another
    // shape: its own decoder runs (slower, the same behaviour), and the board says so.
    return `off: ${e.message}`;
  }
  coreMod.CortexM0Core.prototype.executeInstruction = built.method;
  installWrites(rp.RP2040);
  return `table-driven decode (${built.branches} encodings, ${built.cases} cases), SRAM-first stores`;
}

const RAM_START = 0x20000000;

function installWrites(RP2040) {
  const original = RP2040.prototype.writeUint32;
  RP2040.prototype.writeUint32 = function writeUint32(address, value) {
    const off = (address >>> 0) - RAM_START;
    if (off >= 0 && off + 3 < this.sram.length) {
      this.sramView.setUint32(off, value, true);
      return;
    }
    original.call(this, address, value);
  };
}

/** Throws if a peripheral is mapped where SRAM is (the SRAM-first store would skip it). */
export function checkSram(mcu) {
  for (let a = RAM_START; a < RAM_START + mcu.sram.length; a += 0x4000) {
    if (mcu.findPeripheral(a)) {
      throw new Error(`a peripheral at 0x${a.toString(16)}, inside SRAM: the fast store is wrong`);
    }
  }
}
