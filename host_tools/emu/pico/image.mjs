// Loading the chip's two images: the B1 mask ROM (little-endian words at address 0) and a
// UF2 (512-byte blocks, each a payload for one flash address: the format the Pico's USB
// bootloader takes, so the emulated flash holds exactly what a dragged-on UF2 would).
import { readFileSync } from 'node:fs';

export const FLASH_BASE = 0x10000000;
export const FLASH_SIZE = 2 * 1024 * 1024; // the Pico's W25Q16JV

const UF2_MAGIC0 = 0x0a324655;
const UF2_MAGIC1 = 0x9e5d5157;
const UF2_MAGIC_END = 0x0ab16f30;
const UF2_FLAG_NOT_MAIN_FLASH = 0x1;

export function loadBootrom(path) {
  const b = readFileSync(path);
  if (b.length !== 16384) throw new Error(`${path}: a B1 bootrom is 16384 bytes, not ${b.length}`);
  const words = new Uint32Array(4096);
  for (let i = 0; i < 4096; i++) words[i] = b.readUInt32LE(i * 4);
  return words;
}

/** Write a UF2's payloads into `flash` (offsets from FLASH_BASE); returns the block count. */
export function loadUF2(path, flash) {
  const b = readFileSync(path);
  if (b.length % 512) throw new Error(`${path}: not a UF2 (size ${b.length} is not a multiple of 512)`);
  let n = 0;
  for (let off = 0; off < b.length; off += 512) {
    if (b.readUInt32LE(off) !== UF2_MAGIC0 || b.readUInt32LE(off + 4) !== UF2_MAGIC1 ||
        b.readUInt32LE(off + 508) !== UF2_MAGIC_END) {
      throw new Error(`${path}: block ${off / 512} has no UF2 magic`);
    }
    if (b.readUInt32LE(off + 8) & UF2_FLAG_NOT_MAIN_FLASH) continue;
    const addr = b.readUInt32LE(off + 12);
    const size = b.readUInt32LE(off + 16);
    if (size > 476 || addr < FLASH_BASE || addr + size > FLASH_BASE + FLASH_SIZE) {
      throw new Error(`${path}: block ${off / 512} targets 0x${addr.toString(16)}+${size}, outside the flash`);
    }
    flash.set(b.subarray(off + 32, off + 32 + size), addr - FLASH_BASE);
    n++;
  }
  return n;
}
