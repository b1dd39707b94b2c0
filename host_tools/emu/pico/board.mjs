// The emulated Raspberry Pi Pico: stock MicroPython (a UF2) on rp2040js, its USB CDC serial
// on stdin/stdout, a control socket for the host (power cuts, the shoe's UART bytes, the
// display and reader models, GPIO levels, cycle counts). host_tools/emu/vboard.py runs it
// behind a pseudo-terminal (`pitboss board start --kind pico`).
//
//   node host_tools/emu/pico/board.mjs --uf2 FILE --bootrom FILE --flash FILE
//        [--ctl SOCKET] [--gpio N=0|1]... [--held FILE] [--no-display] [--no-rfid] [--reset-reason N]
//        [--flash-erase-ms MS] [--flash-page-ms MS]   (flash.mjs: 45 and 0.7 by default)
//
// A watchdog reset (the WDT not fed, or machine.reset()) ends this process with exit code
// WATCHDOG_EXIT after the flash file is complete; vboard's daemon then starts the chip
// again from that flash behind the same pty, with --reset-reason set, so the firmware's
// machine.reset_cause() reads WDT_RESET as on the chip. rp2040js 1.4.1 only logs a
// watchdog trigger.
//
// The rp2040js 1.4.1 fixes: flash.mjs (1), usbcdc.mjs (2, 4), uart.mjs (3, 6), the
// run loop below (5: an idle chip with no timer armed waits for input instead of spinning;
// one with a timer armed runs ahead of the wall clock only so far: LEAD_NS), and
// fastcore.mjs (7: the instruction decoder as a table, for speed; rp2040.mjs installs it),
// and wasmcore.mjs (8: rp2040js's core in WebAssembly, thumbcore.c, run in batches).
import { RP2040, ConsoleLogger, LogLevel, fastcore } from './rp2040.mjs';
import { checkSram } from './fastcore.mjs';
import { attach as attachWasmCore } from './wasmcore.mjs';
import { loadBootrom, loadUF2 } from './image.mjs';
import { FlashFile } from './flash.mjs';
import { CDCLink } from './usbcdc.mjs';
import { AckingShoe, UARTLine, fixRxInterrupt, fixTxInterrupt } from './uart.mjs';
import { GPIOLevels } from './gpio.mjs';
import { SSD1306 } from './ssd1306.mjs';
import { MFRC522 } from './mfrc522.mjs';
import { serveControl } from './control.mjs';

const NS_PER_CYCLE = 8; // 125 MHz
const WATCHDOG_EXIT = 75; // host_tools/emu/vboard_daemon.py: WATCHDOG_EXIT
const SLICE = 200000;   // instructions between looks at the host's input

function parseArgs(argv) {
  const a = { gpio: {}, display: true, rfid: true };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = () => argv[++i];
    if (k === '--uf2') a.uf2 = v();
    else if (k === '--bootrom') a.bootrom = v();
    else if (k === '--flash') a.flash = v();
    else if (k === '--ctl') a.ctl = v();
    else if (k === '--held') a.held = v();
    else if (k === '--gpio') {
      const [pin, level] = v().split('=');
      a.gpio[Number(pin)] = Number(level) ? 1 : 0;
    } else if (k === '--reset-reason') a.resetReason = Number(v());
    else if (k === '--no-display') a.display = false;
    else if (k === '--no-rfid') a.rfid = false;
    else if (k === '--flash-erase-ms') a.eraseMs = Number(v());
    else if (k === '--flash-page-ms') a.pageMs = Number(v());
    else throw new Error(`unknown argument ${k}`);
  }
  for (const need of ['uf2', 'bootrom', 'flash']) {
    if (!a[need]) throw new Error(`--${need} is required`);
  }
  return a;
}

const args = parseArgs(process.argv.slice(2));
const mcu = new RP2040();
// "Read from invalid SIO address 0x50/0x58" on every flash write is harmless noise.
mcu.logger = new ConsoleLogger(LogLevel.Error);
// Fix 8: batches of instructions in thumbcore.wasm (its memories become the chip's: before
// the bootrom, the UF2 or the flash file is loaded).
const fast = attachWasmCore(mcu, { nsPerCycle: NS_PER_CYCLE });
mcu.loadBootrom(loadBootrom(args.bootrom));
const core = mcu.core;
const clock = mcu.clock;
if (fastcore.startsWith('table')) checkSram(mcu);
else if (fastcore.startsWith('off:')) log(`rp2040js's own decoder (fix 7 ${fastcore})`);

let out = [];           // board -> host bytes, written once per slice
let running = true;
let cutAtCycle = -1;
const stats = { boot_ready_cycles: null, boot_ready_ns: null };

function log(msg) {
  process.stderr.write(`pico: ${msg}\n`);
}

function flushOut() {
  if (out.length) {
    process.stdout.write(Buffer.concat(out));
    out = [];
  }
}

function powerCut(reason) {
  running = false;
  log(`power cut ${reason} (cycle ${core.cycles}, ${clock.nanos} ns)`);
  flushOut();
  flash.close();
  process.exit(0);
}

const flash = new FlashFile(mcu, args.flash, powerCut, { eraseMs: args.eraseMs, pageMs: args.pageMs });

// The watchdog (WATCHDOG_BASE): its REASON register as the chip keeps it across the reset
// (1 = timer, 2 = forced), and a trigger ends this run for the daemon to restart.
const watchdog = mcu.peripherals[0x40058];
if (args.resetReason) watchdog.reason = args.resetReason;
watchdog.onWatchdogTrigger = () => {
  running = false;
  log(`watchdog reset (reason ${watchdog.reason}) at cycle ${core.cycles}, ${clock.nanos} ns`);
  flushOut();
  flash.close();
  process.exit(WATCHDOG_EXIT + (watchdog.reason === 2 ? 1 : 0));
};
// Load the firmware from the UF2 over whatever the file held, as the USB bootloader would.
loadUF2(args.uf2, mcu.flash);
flash.writeAll();

const cdc = new CDCLink(mcu, (data) => out.push(Buffer.from(data)), () => {
  stats.boot_ready_cycles = core.cycles;
  stats.boot_ready_ns = clock.nanos;
  log(`usb serial up at cycle ${core.cycles}`);
  process.stderr.write('PITBOSS-PICO-READY\n');
}, () => clock.nanos);

for (const u of mcu.uart) fixTxInterrupt(u);
const uarts = [new UARTLine(mcu, mcu.uart[0]), new UARTLine(mcu, mcu.uart[1])];
for (const line of uarts) fixRxInterrupt(line.uart, clock, () => line.baud);
// The acknowledging shoe as a device on each UART, dealt through the control socket.
const shoes = uarts.map((line) => new AckingShoe(clock, line));
const gpio = new GPIOLevels(mcu, args.gpio, args.held);
const display = new SSD1306(mcu.i2c[0], 0x3c, args.display, clock);
const rfid = new MFRC522(mcu, mcu.spi[0], { cs: 17, rst: 20, present: args.rfid });

mcu.core.PC = 0x10000000;
mcu.core.registers[13] = 0x20041000; // harmless if the bootrom path resets it

// ---- run loop ---------------------------------------------------------------------------
// Pacing (issue 27): a waiting chip's clock jumps to its next alarm, but it may run ahead
// of the wall clock only by LEAD_NS since the host last spoke (a line, a shoe's frames,
// a pin). Unpaced, a table waiting for its host ran its idle passes back to back, some
// 400 a wall second on one of CI's two cores, against the host it was waiting for; and
// a minute's pause of the host was hours of chip time. Busy chip time is slower than
// the wall here, so the device models' timing (UART bytes, the shoe's resends) still
// runs at the clock's pace, not the wall's.
const LEAD_NS = 100e6;
let anchorWall = process.hrtime.bigint();
let anchorChip = 0;
function hostSpoke() {
  anchorWall = process.hrtime.bigint();
  anchorChip = clock.nanos;
}
function aheadNs(to) {  // how far chip time `to` is past what the wall allows
  return to - anchorChip - Number(process.hrtime.bigint() - anchorWall) - LEAD_NS;
}

// What the host already handed a device model (a shoe's frames not yet acknowledged, an
// RFID deck still to pass the antenna) is its input still arriving: the chip is not
// waiting for the host then, and runs unpaced, as while the host writes; the lead counts
// from the last of it. (With thumbcore.wasm a six-seat Pai Gow round takes ~0.4 s of
// CPU; paced from the host's last word, the 1.1 s of its frames at 9600 baud held it
// to ~1 s of wall time.)
let inputPending = false;
function hostInputPending() {
  for (const s of shoes) if (!s.idle) return true;
  return rfid.deck.length > 0;
}

let scheduled = false;
let timer = null;
function wake() {
  if (timer !== null) {  // input during a paced wait: run now
    clearTimeout(timer);
    timer = null;
    scheduled = false;
  }
  if (!scheduled && running) {
    scheduled = true;
    setImmediate(run);
  }
}

// control 'profile': the program counter sampled every 64th instruction (a developer's
// tool: where a figure's cycles go, mapped to functions with the image's ELF).
// PITBOSS_PICO_PROFILE=1 in the environment starts it at power-on (the boot's profile);
// PITBOSS_PICO_PROFILE_MS=A-B samples only from A to B ms of chip time after power-on
// (one step of the boot, not the idle passes that follow its first line).
let profile = process.env.PITBOSS_PICO_PROFILE ? { n: 0, pcs: new Map() } : null;
const [profileFrom, profileUntil] = (process.env.PITBOSS_PICO_PROFILE_MS || '0-0')
  .split('-').map((ms) => Number(ms) * 1e6);

// A card's path only (control 'profile' with "card": true): some shoe's frame has its
// last byte on the line and no acknowledgement yet, the window of issue 27's card budget.
function cardPending() {
  for (const s of shoes) if (s.cur && clock.nanos >= s.sentEndNs) return true;
  return false;
}

let hung = false;  // control 'hang': no instruction runs, the clock (and watchdog) go on

function run() {
  scheduled = false;
  let idle = false;
  if (hung) {
    clock.tick(SLICE * NS_PER_CYCLE);  // a watchdog reset ends the process from in here
    flushOut();
    wake();
    return;
  }
  let pause = 0;
  for (let i = 0; i < SLICE; i++) {
    if (flash.busyNs > 0) {
      // A flash erase/program in progress, interrupts off: time (and the UART lines, the
      // timers, the watchdog) runs on, no instruction executes (flash.mjs).
      const ns = flash.busyNs;
      flash.busyNs = 0;
      clock.tick(ns);
      if (!running) return;
    }
    if (core.waiting) {
      const next = clock.nanosToNextAlarm;
      if (!clock.nextAlarm) { idle = true; break; }  // fix 5: nothing can happen until input
      if (next > 0) {
        const pending = hostInputPending();
        if (pending || inputPending) hostSpoke();  // (the lead counts from the last of it)
        inputPending = pending;
        const ahead = aheadNs(clock.nanos + next);
        if (ahead > 0) { pause = Math.min(Math.ceil(ahead / 1e6), 1000); break; }
      }
      clock.tick(next > 0 ? next : 0);
      i += 64;
    } else {
      if (profile && (++profile.n & 63) === 0
          && (!profileUntil || (clock.nanos >= profileFrom && clock.nanos < profileUntil))
          && (!profile.card || cardPending())) {
        const pc = core.PC;
        profile.pcs.set(pc, (profile.pcs.get(pc) || 0) + 1);
      }
      // A batch in thumbcore.wasm up to the clock's next alarm (fix 8), except while
      // profiling (a sample per instruction), with a cut armed at a cycle, or with an
      // interrupt to check: then, and for what the module leaves to it, rp2040js's core.
      const n = fast !== null && profile === null && cutAtCycle < 0 ? fast.step(SLICE - i) : 0;
      if (n > 0) {
        i += n - 1;
      } else {
        clock.tick(core.executeInstruction() * NS_PER_CYCLE);
        if (cutAtCycle >= 0 && core.cycles >= cutAtCycle) {
          powerCut(`at cycle ${cutAtCycle}`);
          return;
        }
      }
    }
    if (!running) return;
  }
  flushOut();
  if (pause) {
    scheduled = true;
    timer = setTimeout(() => { timer = null; scheduled = false; run(); }, pause);
  } else if (!idle) wake();
}

process.stdin.on('data', (chunk) => {
  hostSpoke();
  cdc.write(chunk);
  wake();
});
process.stdin.on('end', () => {
  log('host closed stdin: stopping');
  flushOut();
  flash.close();
  process.exit(0);
});
process.on('SIGTERM', () => {
  flushOut();
  flash.close();
  process.exit(0);
});

if (args.ctl) {
  serveControl(args.ctl, {
    mcu, core, clock, flash, uarts, shoes, gpio, display, rfid, stats, cdc, fast,
    wake() { hostSpoke(); wake(); },  // a control command: the host spoke
    cutAt(cycle) { cutAtCycle = cycle; },
    cutNow() { powerCut('now (host)'); },
    profile(on, card) {
      const was = profile;
      profile = on ? { n: 0, pcs: new Map(), card } : null;
      return was ? [...was.pcs.entries()] : [];
    },
    hang() { hung = true; log(`hung by the host at cycle ${core.cycles}`); wake(); },
  });
}
wake();
