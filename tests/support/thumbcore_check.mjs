// Checks host_tools/emu/pico/thumbcore.wasm (fix 8) against rp2040js's own core; run by
// tests/host/test_pico_thumbcore.py with the checkout's node_modules.
//
// Two RP2040s start every trial from the same state: random registers (pointing into a
// data window in SRAM, at SRAM's, flash's and the bootrom's edges, at peripherals, or
// anywhere), random flags, thread or handler mode, random code in SRAM or flash (or the
// real bootrom's), a clock alarm at a random time. Board A runs rp2040js's
// executeInstruction one instruction at a time, ticking the clock after each, as the run
// loop did; board B runs the same number of instructions as board.mjs runs them now:
// batches in the module up to the next alarm, rp2040js's core for what the module leaves
// to it. After each trial the registers, flags, cycles, mode, PRIMASK, the clock, the
// data and code windows, every access outside SRAM/flash/bootrom (address, value, the
// clock and cycle count when it happened, in order) and the alarm's firing must agree.
// Prints one JSON line of counts; exits 1 at the first disagreement, naming it.
import { quiet, xorshift32 } from './xorshift.mjs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { STOP, attach } from '../../host_tools/emu/pico/wasmcore.mjs';
import { romFunc } from '../../host_tools/emu/pico/flash.mjs';

const nm = process.env.PITBOSS_NODE_MODULES;
const esm = path.resolve(nm, 'rp2040js', 'dist', 'esm');
process.env.PITBOSS_PICO_FASTCORE = '0';
const { RP2040 } = await import(pathToFileURL(path.join(esm, 'index.js')).href);
const { readFileSync } = await import('node:fs');
const BOOTROM = process.env.PITBOSS_PICO_BOOTROM;

function fail(msg) {
  console.log(JSON.stringify({ ok: false, error: msg }));
  process.exit(1);
}

const rnd = xorshift32(Number(process.env.THUMBCORE_SEED) || 0x6d2b79f5);  // the same trials every run
console.warn = () => {};
console.log = ((log) => (...a) => (typeof a[0] === 'string' && a[0].startsWith('{') ? log(...a) : 0))(console.log);

const NS = 8;
const RAM = 0x20000000, SRAM_END = RAM + 264 * 1024, FLASH = 0x10000000;
const CODE = 0x20001000, FCODE = 0x10100000, DATA = 0x20010000, WINDOW = 0x2000;
const TRIALS = Number(process.env.THUMBCORE_TRIALS || 40000);
const PROGRAM = 12;  // instructions a trial runs

const boards = [new RP2040(), new RP2040()];
const logs = [[], []];
boards.forEach((b, k) => {
  b.logger = quiet;
  if (BOOTROM) b.loadBootrom(new Uint32Array(readFileSync(BOOTROM).buffer.slice(0)));
  b.onBreak = () => {};
});
// The bootrom's bit and memory routines (memcpy, memset, popcount, ...), from its table.
const ROM_ENTRIES = BOOTROM ? ['P3', 'R3', 'L3', 'T3', 'MS', 'S4', 'MC', 'C4'].map(
  (c) => romFunc(boards[0].bootrom, c.charCodeAt(0) | (c.charCodeAt(1) << 8))) : [];
const fast = attach(boards[1], {
  nsPerCycle: NS, bytes: process.env.THUMBCORE_WASM ? readFileSync(process.env.THUMBCORE_WASM) : null });
if (!fast) fail('PITBOSS_PICO_WASMCORE=0: nothing to check');
// Every access the module leaves to rp2040js, as both boards make it (board A makes all of
// its accesses through these methods: the SRAM, flash and bootrom ones are not logged).
const fastAddr = (a) => {
  const u = a >>> 0;
  return u === 0xd0000000 || (u >= RAM && u < SRAM_END) || (u >= FLASH && u < 0x14000000) || u < 0x4000
    || (u >= 0xd0000060 && u < 0xd0000080) || (u >= 0xd0000100 && u < 0xd0000180)  // divider, spinlocks
    || u === 0x40054024 || u === 0x40054028;  // the timer's raw count
};
boards.forEach((b, k) => {
  for (const m of ['readUint32', 'readUint16', 'readUint8']) {
    const orig = b[m].bind(b);
    b[m] = (a) => {
      const v = orig(a);
      if (!fastAddr(a)) logs[k].push(`${m} ${a} -> ${v} @${b.clock.nanos}/${b.core.cycles}`);
      return v;
    };
  }
  for (const m of ['writeUint32', 'writeUint16', 'writeUint8']) {
    const orig = b[m].bind(b);
    b[m] = (a, v) => {
      if (!fastAddr(a)) logs[k].push(`${m} ${a} <- ${v} @${b.clock.nanos}/${b.core.cycles}`);
      orig(a, v);
    };
  }
});

// (Not SysTick: its CSR written with random values reloads at 0, and rp2040js then ticks
// that alarm forever, on both boards.)
const EDGES = [RAM, SRAM_END - 4, SRAM_END - 2, SRAM_END - 1, SRAM_END, SRAM_END + 2, FLASH,
  FLASH + 0xfffffc, FLASH + 0xfffffe, FLASH + 0x1000000, 0x11000010, 0x13fffffc, 0x3ffc,
  0x4000, 0xd0000000, 0xd0000004, 0xd000001c, 0xd000007c, 0xd0000180, 0xd0000140, 0x40054028, 0x4005400c, 0x40008000,
  0xe000e100, 0xe000ed08, 0x50100000, 0xfffffff9, 0xfffffffc, 0x7ffffffe];
function regValue() {
  const r = rnd() % 10;
  if (r < 5) return DATA + (rnd() & (WINDOW - 1) & ~(rnd() & 1 ? 3 : 0));
  if (r < 7) return EDGES[rnd() % EDGES.length] - (rnd() & 1 ? 0 : (rnd() & 0x3c));
  if (r < 8) return (rnd() & 0xff);
  return rnd();
}

// Instructions weighted to the ones the firmware runs, with raw random halfwords too.
const SHAPES = [
  () => rnd() & 0xffff,
  () => 0x6800 | (rnd() & 0x7ff), () => 0x6000 | (rnd() & 0x7ff), // LDR/STR imm
  () => 0x5000 | (rnd() & 0xfff),                                  // register offset
  () => 0x7000 | (rnd() & 0xfff), () => 0x8000 | (rnd() & 0xfff),  // byte/half imm
  () => 0x9000 | (rnd() & 0xfff),                                  // SP relative
  () => 0x4000 | (rnd() & 0x3ff),                                  // data processing
  () => 0x4400 | (rnd() & 0x3ff),                                  // high registers, BX
  () => 0x4700 | (rnd() & 0xf8),                                   // BX/BLX
  () => 0xb400 | (rnd() & 0x1ff), () => 0xbc00 | (rnd() & 0x1ff),  // PUSH/POP
  () => 0xbd00 | (rnd() & 0xff),                                   // POP {.., pc}
  () => 0xc000 | (rnd() & 0xfff),                                  // LDM/STM
  () => 0xd000 | (rnd() & 0xfff),                                  // B<c>, UDF, SVC
  () => 0xe000 | (rnd() & 0x7ff),                                  // B
  () => 0x0000 | (rnd() & 0x3fff), () => 0x2000 | (rnd() & 0x1fff),
  () => 0xb000 | (rnd() & 0xfff), () => 0xbf00 | (rnd() & 0x70),
  () => 0xa000 | (rnd() & 0xfff), () => 0x4800 | (rnd() & 0x7ff),
  () => [0xb672, 0xb662][rnd() & 1],
];
const WIDE = [
  () => [0xf000 | (rnd() & 0x7ff), 0xf800 | (rnd() & 0x7ff)],  // BL
  () => [0xf3bf, 0x8f40 | (rnd() & 0x2f)],                     // DMB/DSB/ISB and others
  () => [0xf3ef, 0x8000 | (rnd() & 0xfff)],                    // MRS
  () => [0xf380 | (rnd() & 0xf), 0x8800 | (rnd() & 0xff)],     // MSR
  () => [rnd() & 0xffff, rnd() & 0xffff],
];

const data = new Uint8Array(WINDOW);
const stats = { trials: 0, module: 0, javascript: 0, io: 0, alarms: 0, handler: 0 };
for (let t = 0; t < TRIALS; t++) {
  if (process.env.THUMBCORE_DEBUG) process.stderr.write(`${t}\n`);
  const code = [];
  while (code.length < PROGRAM * 2 + 8) {
    if (rnd() % 8 === 0) code.push(...WIDE[rnd() % WIDE.length]());
    else code.push(SHAPES[rnd() % SHAPES.length]());
  }
  const where = rnd() % 8;
  // SRAM, flash, or a bootrom routine (its reboot code, started anywhere, arms the
  // watchdog at 0, which rp2040js then reloads forever, on both boards)
  const start = where < 5 || !ROM_ENTRIES.length ? CODE : where < 7 ? FCODE
    : ROM_ENTRIES[rnd() % ROM_ENTRIES.length] + 2 * (rnd() % 4);
  const regs = [];
  for (let r = 0; r < 13; r++) regs.push(regValue() >>> 0);
  const sp = DATA + WINDOW / 2 + (rnd() & 0x3fc);
  const lr = rnd() & 1 ? (CODE + (rnd() & 0x3e)) | 1 : [0xfffffff1, 0xfffffff9, 0xfffffffd][rnd() % 3];
  const fl = rnd() & 15;
  const handler = rnd() % 4 === 0;
  const alarmNs = rnd() % 6 === 0 ? NS * (rnd() % 40) + (rnd() & 7) : -1;
  if ((t & 255) === 0) for (let i = 0; i < WINDOW; i++) data[i] = rnd() & 0xff;
  const fired = [[], []];
  const pcOdd = rnd() % 16 === 0 ? 1 : 0;
  const pm = rnd() % 3 === 0;  // PC keeps its Thumb bit after an exception entry
  boards.forEach((b, k) => {
    const c = b.core;
    b.sram.set(data, DATA - RAM);
    // a stack frame an exception return can pop: words pointing back into the code
    for (let i = 0; i < 8; i++) b.sram.set([0x21, 0x10, 0x00, 0x20], sp - RAM + 32 + 4 * i);
    for (let i = 0; i < code.length; i++) {
      if (start === CODE) { b.sram[CODE - RAM + 2 * i] = code[i] & 0xff; b.sram[CODE - RAM + 2 * i + 1] = code[i] >> 8; }
      else if (start === FCODE) { b.flash[FCODE - FLASH + 2 * i] = code[i] & 0xff; b.flash[FCODE - FLASH + 2 * i + 1] = code[i] >> 8; }
    }
    for (let r = 0; r < 13; r++) c.registers[r] = regs[r];
    c.SP = sp;
    c.registers[14] = lr;
    c.PC = start | pcOdd;
    c.N = !!(fl & 8); c.Z = !!(fl & 4); c.C = !!(fl & 2); c.V = !!(fl & 1);
    c.cycles = 0;
    c.waiting = false;
    c.PM = pm;
    c.currentMode = handler ? 1 : 0;
    c.IPSR = handler ? 16 + 5 : 0;
    c.interruptsUpdated = false;
    c.pendingInterrupts = 0;
    c.pendingSVCall = false;
    logs[k].length = 0;
    while (b.clock.nextAlarm) b.clock.nextAlarm.cancel();
    if (alarmNs >= 0) {
      b.clock.createAlarm(() => fired[k].push(`${b.clock.nanos}/${c.cycles}`)).schedule(alarmNs);
    }
  });
  const [A, B] = boards;
  // Board A: rp2040js, an instruction and a clock tick at a time.
  for (let i = 0; i < PROGRAM; i++) A.clock.tick(A.core.executeInstruction() * NS);
  // Board B: the run loop's way.
  let done = 0;
  while (done < PROGRAM) {
    const n = fast.step(PROGRAM - done);
    done += n;
    stats.module += n;
    if (STOP[fast.stop] === 'io' && n) stats.io++;
    if (done >= PROGRAM) break;
    if (n && STOP[fast.stop] !== 'javascript') continue;
    B.clock.tick(B.core.executeInstruction() * NS);
    stats.javascript++;
    done++;
  }
  const x = A.core, y = B.core;
  const diff = [];
  for (let r = 0; r < 16; r++) if (x.registers[r] !== y.registers[r]) diff.push(`r${r} ${x.registers[r].toString(16)} ${y.registers[r].toString(16)}`);
  for (const f of ['N', 'Z', 'C', 'V', 'cycles', 'waiting', 'PM', 'currentMode', 'IPSR', 'interruptsUpdated', 'pendingSVCall', 'bankedSP']) {
    if (x[f] !== y[f]) diff.push(`${f} ${x[f]} ${y[f]}`);
  }
  if (A.clock.nanos !== B.clock.nanos) diff.push(`clock ${A.clock.nanos} ${B.clock.nanos}`);
  for (const f of ['divDividend', 'divDivisor', 'divQuotient', 'divRemainder', 'divCSR', 'spinLock']) {
    if (!Object.is(A.sio[f], B.sio[f])) diff.push(`sio.${f} ${A.sio[f]} ${B.sio[f]}`);
  }
  for (const [lo, n] of [[DATA - RAM, WINDOW], [CODE - RAM, 256], [sp - RAM - 64, 256]]) {
    if (Buffer.compare(A.sram.subarray(lo, lo + n), B.sram.subarray(lo, lo + n))) diff.push(`sram at 0x${(lo + RAM).toString(16)}`);
  }
  if (Buffer.compare(A.flash.subarray(FCODE - FLASH, FCODE - FLASH + 256), B.flash.subarray(FCODE - FLASH, FCODE - FLASH + 256))) diff.push('flash');
  if (logs[0].join('\n') !== logs[1].join('\n')) diff.push(`accesses:\n  A ${logs[0].join('\n    ')}\n  B ${logs[1].join('\n    ')}`);
  if (fired[0].join() !== fired[1].join()) diff.push(`alarm ${fired[0]} ${fired[1]}`);
  if (diff.length) {
    const hex = code.slice(0, PROGRAM * 2).map((h) => h.toString(16).padStart(4, '0')).join(' ');
    fail(`trial ${t}: code at 0x${start.toString(16)} [${hex}], handler ${handler}: ${diff.join('; ')}`);
  }
  stats.trials++;
  if (fired[0].length) stats.alarms++;
  if (handler) stats.handler++;
}
console.log(JSON.stringify({ ok: true, ...stats }));
