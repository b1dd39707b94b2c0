// Fix 8 (DEVELOPERS.md, "Pico board"): rp2040js's core run in batches by thumbcore.wasm
// (thumbcore.c says what it is and what it leaves to rp2040js). This module gives the
// WebAssembly module the RP2040's memories (rp2040js's SRAM, flash, bootrom and the core's
// registers become views of the module's memory, so both cores and every peripheral see
// the same bytes), rp2040js's own memory methods for every other address, and the run
// loop (board.mjs) one call: run(limit, max).
//
// Timing is rp2040js's: a batch stops at the clock's next alarm (the instruction that
// reaches it is the last, as when the clock is ticked after each one), and before a
// peripheral is read or written the clock and the core's cycle count are brought up to
// that instruction, which then ends the batch. A batch never starts with an interrupt
// to check (core.interruptsUpdated): the JavaScript core takes that instruction.
//
// PITBOSS_PICO_WASMCORE=0 keeps the JavaScript core alone (a comparison run).
import { readFileSync } from 'node:fs';
import { checkSram } from './fastcore.mjs';

const SRAM_SIZE = 264 * 1024;
const FLASH_SIZE = 16 * 1024 * 1024;
const BOOTROM_WORDS = 4096;
const MAX_BATCH = 0x7fffffff;  // cycles a batch may run when no alarm is set
export const STOP = ['limit', 'javascript', 'io'];

/** The module's bytes (committed beside its source; build_thumbcore.sh rebuilds them). */
export function wasmBytes() {
  return readFileSync(new URL('./thumbcore.wasm', import.meta.url));
}

/** Moves mcu's memories into the module and returns { step(max) -> instructions, stop,
 *  runs, executed }; null when PITBOSS_PICO_WASMCORE=0. Call it right after
 *  `new RP2040()`, before anything holds mcu.flash or mcu.sram (the bootrom, the UF2, the
 *  flash file). nsPerCycle: the run loop's clock step. */
export function attach(mcu, { nsPerCycle = 8, bytes = null } = {}) {
  if (process.env.PITBOSS_PICO_WASMCORE === '0') return null;
  checkSram(mcu);  // (thumbcore.c stores straight into SRAM, as fastcore's stores do)
  const core = mcu.core;
  const clock = mcu.clock;
  let synced = 0;  // cycles of the current batch already given to the clock
  let shared32 = null;  // (set below: the divider's extra cycles are its [2])
  let flags = null;
  function flagsOut() {  // the core's fields as the module has them
    core.N = flags[0] === 1;
    core.Z = flags[1] === 1;
    core.C = flags[2] === 1;
    core.V = flags[3] === 1;
    core.PM = flags[4] === 1;
  }
  function give(cycles) {  // the batch's cycles up to `cycles` to core.cycles and the clock
    if (shared32[2]) {  // the divider's, counted in core.cycles only (as rp2040js does)
      core.cycles += shared32[2];
      shared32[2] = 0;
    }
    const d = cycles - synced;
    if (d > 0) {
      synced = cycles;
      core.cycles += d;
      clock.tick(d * nsPerCycle);
    }
  }
  function sync(before) {
    // A peripheral may look at the core (an interrupt raised while it waits enters the
    // exception at once, stacking the flags), and at the clock.
    flagsOut();
    give(before);
  }
  const env = {
    r32: (a, b) => { sync(b); return mcu.readUint32(a); },
    r16: (a, b) => { sync(b); return mcu.readUint16(a); },
    r8: (a, b) => { sync(b); return mcu.readUint8(a); },
    w32: (a, v, b) => { sync(b); mcu.writeUint32(a, v); },
    w16: (a, v, b) => { sync(b); mcu.writeUint16(a, v); },
    w8: (a, v, b) => { sync(b); mcu.writeUint8(a, v); },
  };
  const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes || wasmBytes()), { env }).exports;
  const buf = ex.memory.buffer;

  const sram = new Uint8Array(buf, ex.sram(), SRAM_SIZE);
  sram.set(mcu.sram);
  mcu.sram = sram;
  mcu.sramView = new DataView(buf, sram.byteOffset, SRAM_SIZE);
  const flash = new Uint8Array(buf, ex.flash(), FLASH_SIZE);
  flash.set(mcu.flash);
  mcu.flash = flash;
  mcu.flash16 = new Uint16Array(buf, flash.byteOffset, FLASH_SIZE / 2);
  mcu.flashView = new DataView(buf, flash.byteOffset, FLASH_SIZE);
  const bootrom = new Uint32Array(buf, ex.bootrom(), BOOTROM_WORDS);
  bootrom.set(mcu.bootrom);
  mcu.bootrom = bootrom;
  const regs = new Uint32Array(buf, ex.regs(), 16);
  regs.set(core.registers);
  core.registers = regs;
  flags = new Uint8Array(buf, ex.flags(), 6);  // N Z C V, PRIMASK.PM, interruptsUpdated
  // The SIO's divider and spinlocks live in the module (thumbcore.c runs them); rp2040js's
  // SIO reads and writes the same numbers through these properties.
  const f64 = new Float64Array(buf, ex.shared_f64(), 6);
  shared32 = new Int32Array(buf, ex.shared_i32(), 3);
  const sio = mcu.sio;
  const share = (name, arr, i) => {
    arr[i] = sio[name];
    Object.defineProperty(sio, name, { get: () => arr[i], set: (v) => { arr[i] = v; } });
  };
  share('divDividend', f64, 2);
  share('divDivisor', f64, 3);
  share('divQuotient', f64, 4);
  share('divRemainder', f64, 5);
  share('divCSR', shared32, 0);
  share('spinLock', shared32, 1);
  f64[1] = nsPerCycle;

  const fast = {
    stop: 0,      // why the last run stopped (STOP's index)
    runs: 0,      // batches run
    executed: 0,  // instructions run by the module
    /** Up to `max` instructions, stopping at the clock's next alarm; the clock and
     *  core.cycles are advanced. Returns the instructions run: 0 when the next one is the
     *  JavaScript core's (an interrupt to check first, or one the module leaves to it). */
    step(max) {
      const alarm = clock.nextAlarm;
      const limit = alarm === null ? MAX_BATCH
        : Math.min(MAX_BATCH, Math.ceil((alarm.nanos - clock.nanos) / nsPerCycle));
      if (core.interruptsUpdated || limit <= 0) {
        this.stop = 1;  // ('javascript')
        return 0;
      }
      flags[0] = core.N ? 1 : 0;
      flags[1] = core.Z ? 1 : 0;
      flags[2] = core.C ? 1 : 0;
      flags[3] = core.V ? 1 : 0;
      flags[4] = core.PM ? 1 : 0;
      flags[5] = 0;
      f64[0] = clock.nanos;  // (the timer's raw count: the clock at the batch's start)
      synced = 0;
      const cycles = ex.run(limit, max, core.currentMode === 1 ? 1 : 0);
      flagsOut();
      if (flags[5]) core.interruptsUpdated = true;  // CPSIE, MSR PRIMASK
      give(cycles);
      const n = ex.executed();
      this.stop = ex.stop();
      this.runs++;
      this.executed += n;
      return n;
    },
  };
  return fast;
}

