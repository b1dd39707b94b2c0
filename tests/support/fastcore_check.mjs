// Checks host_tools/emu/pico/fastcore.mjs (fix 7) against rp2040js's own decoder; run by
// tests/test_pico_fastcore.py with the checkout's node_modules.
//   1. The branch taken, for every first halfword: by rp2040js's if/else chain and by the
//      table, for a spread of second halfwords; and for all 65,536 second halfwords where
//      the choice depends on it, for every first halfword of MSR/MRS/barriers/UDF.W and
//      every 16th of BL's (FASTCORE_ALL=1: every one, ~40 s).
//   2. Execution: random instructions run on two RP2040s, one with rp2040js's method and
//      one with the built one, from the same registers, flags and memory; after each, the
//      registers, flags, cycles and the memory the instructions reach must agree.
// Prints one JSON line of counts; exits 1 at the first disagreement, naming it.
import { quiet, xorshift32 } from './xorshift.mjs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { candidates, makeMethod, selectors, splitChain } from '../../host_tools/emu/pico/fastcore.mjs';

const nm = process.env.PITBOSS_NODE_MODULES;
const esm = path.resolve(nm, 'rp2040js', 'dist', 'esm');
const src = readFileSync(path.join(esm, 'cortex-m0-core.js'), 'utf8');
process.env.PITBOSS_PICO_FASTCORE = '0';  // import rp2040js's own classes, unpatched
const { RP2040 } = await import(pathToFileURL(path.join(esm, 'index.js')).href);
const irq = await import(pathToFileURL(path.join(esm, 'irq.js')).href);
const rpMod = await import(pathToFileURL(path.join(esm, 'rp2040.js')).href);

function fail(msg) {
  console.log(JSON.stringify({ ok: false, error: msg }));
  process.exit(1);
}

// ---- 1. the branch taken --------------------------------------------------------------
const { chain, table } = selectors(src);
const { branches } = splitChain(src);
const cand = candidates(branches);
const spread = [];
for (let i = 0; i < 16; i++) spread.push(i << 12, (i << 12) | 0xfff, (i << 12) | 0x8f5);
let compared = 0;
let wide = 0;
for (let op = 0; op < 65536; op++) {
  const depends = cand[op].length > 1;
  if (depends) wide++;
  const all = depends && (process.env.FASTCORE_ALL === '1' || (op & 0xf800) !== 0xf000
                          || (op & 0xf) === 0 || (op >> 4) === 0xf3b || (op >> 4) === 0xf3e
                          || (op >> 4) === 0xf38 || (op >> 4) === 0xf7f);
  const seconds = all ? null : spread;
  const n = all ? 65536 : seconds.length;
  for (let j = 0; j < n; j++) {
    const op2 = all ? j : seconds[j];
    const a = chain(op, op2);
    const b = table(op, op2);
    compared++;
    if (a !== b) {
      fail(`opcode 0x${op.toString(16)} 0x${op2.toString(16)}: the chain takes branch ${a} `
           + `(${branches[a].cond}), the table ${b} (${branches[b].cond})`);
    }
  }
}

// ---- 2. execution ---------------------------------------------------------------------
const { method: fast, cases } = makeMethod(src, { MAX_HARDWARE_IRQ: irq.MAX_HARDWARE_IRQ, ...rpMod });

const rnd = xorshift32(0x2545f491);  // the same instructions every run
// rp2040js's SIO reports stray addresses with console.warn: the random stores make many.
console.warn = () => {};
const boards = [new RP2040(), new RP2040()];
for (const b of boards) b.logger = quiet;
const CODE = 0x20000100;   // the instruction under test
const DATA = 0x20010000;   // where the registers point: loads and stores stay in SRAM
const WINDOW = 0x2000;
const STEPS = Number(process.env.FASTCORE_STEPS || 300000);
const seen = new Set();
const data = new Uint8Array(WINDOW);  // the memory the registers point into, new every 1,024
for (let s = 0; s < STEPS; s++) {
  const op = rnd() & 0xffff;
  const op2 = rnd() & 0xffff;
  const regs = [];
  for (let r = 0; r < 13; r++) regs.push(rnd() & 1 ? DATA + (rnd() & (WINDOW - 4) & ~3) : rnd());
  const sp = DATA + WINDOW / 2 + (rnd() & 0x3fc);
  const flags = rnd() & 15;
  if ((s & 1023) === 0) for (let i = 0; i < WINDOW; i++) data[i] = rnd() & 0xff;
  boards.forEach((b, k) => {
    const c = b.core;
    b.sram.set(data, DATA - 0x20000000);
    b.writeUint16(CODE, op);
    b.writeUint16(CODE + 2, op2);
    for (let r = 0; r < 13; r++) c.registers[r] = regs[r];
    c.SP = sp;
    c.registers[14] = CODE + 0x41;
    c.PC = CODE;
    c.N = !!(flags & 8); c.Z = !!(flags & 4); c.C = !!(flags & 2); c.V = !!(flags & 1);
    c.cycles = 0;
    c.waiting = false;
    c.PM = false;
    if (k === 0) c.executeInstruction(); else fast.call(c);
  });
  const [x, y] = boards.map((b) => b.core);
  const diff = [];
  for (let r = 0; r < 16; r++) if (x.registers[r] !== y.registers[r]) diff.push(`r${r}`);
  for (const f of ['N', 'Z', 'C', 'V', 'cycles', 'waiting', 'PM', 'SP', 'PC']) {
    if (x[f] !== y[f]) diff.push(f);
  }
  const mx = boards[0].sram.subarray(DATA - 0x20000000, DATA - 0x20000000 + WINDOW);
  const my = boards[1].sram.subarray(DATA - 0x20000000, DATA - 0x20000000 + WINDOW);
  if (Buffer.compare(mx, my)) diff.push('memory');
  if (diff.length) {
    fail(`step ${s}: opcode 0x${op.toString(16)} 0x${op2.toString(16)}: differs in ${diff.join(', ')}`);
  }
  seen.add(table(op, op2));
}
console.log(JSON.stringify({
  ok: true, branches: branches.length, cases, selector_pairs: compared,
  wide_first_halfwords: wide, executed: STEPS, branches_executed: seen.size,
}));
