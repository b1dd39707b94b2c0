// Fix 1 of docs (DEVELOPERS.md, "Pico board"): rp2040js 1.4.1 does not model the QSPI flash
// chip's erase and program commands, so writes by the firmware would vanish. The pico-sdk
// reaches the chip only through the bootrom's flash_range_erase / flash_range_program
// (looked up in the ROM function table by the codes 'RE' and 'RP'), so those two entry
// points get a BKPT; the handler does the operation on the flash array, writes the touched
// bytes through to the flash file, and returns to the caller (PC = LR).
//
// A power cut can be armed to land inside one of these operations: only the first `keep`
// bytes of it reach the chip, the file is written as far as that, and the emulator stops.
//
// Each operation takes the flash chip's time (issue 11, "no shoe byte lost to a flash
// write"): the firmware calls these routines with interrupts off (MicroPython's rp2
// flash driver, rp2_flash.c, brackets them with save_and_disable_interrupts), so while
// the chip erases or programs nothing runs: no UART interrupt empties the 32-byte RX
// FIFO, and bytes arriving beyond it are lost (uart.mjs counts them). The run loop
// (board.mjs) lets `busyNs` of emulated time pass without executing an instruction.
// Figures: Winbond W25Q16JV datasheet (the Pico's flash, Raspberry Pi Pico datasheet
// section 2.2), tSE sector erase (4 KB) 45 ms typical / 400 ms maximum; page program
// (256 bytes) 0.7 ms, the figure the issue takes (the JV's own typical is 0.4 ms, its
// maximum 3 ms). Both are board options (--flash-erase-ms, --flash-page-ms).
import { closeSync, existsSync, openSync, readSync, writeSync } from 'node:fs';
import { FLASH_SIZE } from './image.mjs';

const BKPT_ERASE = 0xbe01;
const BKPT_PROGRAM = 0xbe02;
const SECTOR = 4096;
const PAGE = 256;
export const ERASE_MS = 45;    // per 4 KB sector, typical (W25Q16JV tSE)
export const PAGE_MS = 0.7;    // per 256-byte page

function romCode(a, b) {
  return a.charCodeAt(0) | (b.charCodeAt(0) << 8);
}

/** Address (thumb bit cleared) of a bootrom function, from the table at *0x14. */
export function romFunc(bootrom, code) {
  const half = (addr) => (bootrom[addr >>> 2] >>> ((addr & 2) * 8)) & 0xffff;
  let p = half(0x14);
  for (;;) {
    const c = half(p);
    if (!c) throw new Error(`bootrom has no function ${code.toString(16)}`);
    if (c === code) return half(p + 2) & ~1;
    p += 4;
  }
}

function patchHalf(bootrom, addr, value) {
  const i = addr >>> 2;
  const shift = (addr & 2) * 8;
  bootrom[i] = (bootrom[i] & ~(0xffff << shift)) | (value << shift);
}

export class FlashFile {
  /** mcu: RP2040 with the bootrom loaded; path: the flash file (created from the current
   *  flash contents if missing). onCut(reason) is called when an armed cut lands. */
  constructor(mcu, path, onCut, { eraseMs = ERASE_MS, pageMs = PAGE_MS } = {}) {
    this.mcu = mcu;
    this.onCut = onCut;
    this.eraseNs = Math.round(eraseMs * 1e6);
    this.pageNs = Math.round(pageMs * 1e6);
    this.busyNs = 0;         // emulated time the chip still owes the operation just done
    this.busyTotalNs = 0;    // since start: time spent in erase/program, interrupts off
    this.erases = 0;         // sectors erased
    this.pages = 0;          // pages programmed
    this.ops = 0;            // completed erase/program operations since start
    this.bytesErased = 0;
    this.bytesProgrammed = 0;
    this.cutAfterOps = -1;   // armed: the op after this many more is cut short
    this.cutKeep = 0;
    const fresh = !existsSync(path);
    this.fd = openSync(path, fresh ? 'w+' : 'r+');
    if (fresh) {
      writeSync(this.fd, mcu.flash, 0, FLASH_SIZE, 0);
    } else {
      readSync(this.fd, mcu.flash, 0, FLASH_SIZE, 0);
    }
    const rom = mcu.bootrom;
    const erase = romFunc(rom, romCode('R', 'E'));
    const program = romFunc(rom, romCode('R', 'P'));
    patchHalf(rom, erase, BKPT_ERASE);
    patchHalf(rom, program, BKPT_PROGRAM);
    const prev = mcu.onBreak;
    mcu.onBreak = (code) => {
      if (code === (BKPT_ERASE & 0xff)) this._op(true);
      else if (code === (BKPT_PROGRAM & 0xff)) this._op(false);
      else prev(code);
    };
  }

  /** The firmware's image (from a UF2) over the file's copy: what flashing a UF2 does. */
  writeAll() {
    writeSync(this.fd, this.mcu.flash, 0, FLASH_SIZE, 0);
  }

  armCut(afterOps, keep) {
    this.cutAfterOps = afterOps;
    this.cutKeep = keep;
  }

  _op(erase) {
    const { mcu } = this;
    const core = mcu.core;
    const r = core.registers;
    // flash_range_erase(addr, count, block_size, block_cmd) /
    // flash_range_program(addr, data, count): addr is an offset into the flash.
    const addr = r[0] >>> 0;
    let count = erase ? r[1] >>> 0 : r[2] >>> 0;
    if (erase) count = Math.ceil(count / SECTOR) * SECTOR; // the chip erases whole sectors
    if (addr + count > FLASH_SIZE) count = Math.max(0, FLASH_SIZE - addr);
    let n = count;
    const cutting = this.cutAfterOps === 0;
    if (cutting) n = Math.min(count, this.cutKeep);
    const flash = mcu.flash;
    if (erase) {
      flash.fill(0xff, addr, addr + n);
      this.bytesErased += n;
    } else {
      const src = r[1] >>> 0;
      // NOR programming only clears bits.
      for (let i = 0; i < n; i++) flash[addr + i] &= mcu.readUint8(src + i);
      this.bytesProgrammed += n;
    }
    if (n) writeSync(this.fd, flash, addr, n, addr);
    const units = erase ? Math.ceil(n / SECTOR) : Math.ceil(n / PAGE);
    if (erase) this.erases += units; else this.pages += units;
    const ns = units * (erase ? this.eraseNs : this.pageNs);
    this.busyNs += ns;
    this.busyTotalNs += ns;
    if (cutting) {
      this.cutAfterOps = -1;
      this.onCut(`inside flash ${erase ? 'erase' : 'program'} #${this.ops + 1} at 0x${addr.toString(16)}: ` +
                 `${n} of ${count} bytes written`);
      return;
    }
    if (this.cutAfterOps > 0) this.cutAfterOps--;
    this.ops++;
    core.PC = r[14] & ~1; // return to the caller, as the ROM routine would
  }

  close() {
    closeSync(this.fd);
  }
}
