// An NXP MFRC522 on an SPI bus (rp2040js RPSPI + its chip-select GPIO), with ISO/IEC 14443-3
// type A tags passing its antenna in a given order: a deck going through the shoe.
//
// The chip side follows the datasheet (rev 3.9): SPI address byte (8.1.2.3: bit 7 read, the
// register in bits 6..1; a read's value comes out during the next byte), the register file,
// the 64-byte FIFO, Idle / CalcCRC / Transceive / SoftReset, ComIrqReg and DivIrqReg
// set/clear (Set1/Set2), BitFramingReg (StartSend, TxLastBits, RxAlign), ErrorReg and
// CollReg. The tag side walks IDLE -> READY -> cascade levels -> ACTIVE -> HALT with
// REQA/WUPA, ANTICOLLISION, SELECT (BCC, CRC_A) and HLTA for 4-, 7- and 10-byte UIDs.
// tests/support/fake_mfrc522.py is the same model in Python (used by the host tests); this one
// runs on the emulated bus so the firmware's real driver and machine.SPI are exercised.
//
// Deck: entries in the order they pass the antenna; an entry is one tag, or several at
// once (a collision). An entry is in the field for one read: the REQA/WUPA after the one
// that found it brings the next entry. Faults per entry: bad_bcc, bad_sak_crc, parity,
// silent (leaves right after answering REQA), naks_halt. Chip faults: absent (MISO low),
// crc_stalls, irq_stalls.
const IDLE = 0, READY = 1, ACTIVE = 2, HALT = 3;

export function crcA(data, crc = 0x6363) {
  for (let b of data) {
    b ^= crc & 0xff;
    b ^= (b << 4) & 0xff;
    crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xffff;
  }
  return crc;
}

function bitsOf(data, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push((data[i >> 3] >> (i & 7)) & 1);
  return out;
}

function bytesOf(bits) {
  const out = new Uint8Array((bits.length + 7) >> 3);
  bits.forEach((v, i) => { if (v) out[i >> 3] |= 1 << (i & 7); });
  return out;
}

class Tag {
  constructor(uid, faults = {}) {
    if (![4, 7, 10].includes(uid.length)) throw new Error(`a UID is 4, 7 or 10 bytes, not ${uid.length}`);
    this.uid = Uint8Array.from(uid);
    this.sak = 0x08;
    this.atqa = uid.length === 4 ? 0x0004 : uid.length === 7 ? 0x0044 : 0x0084;
    this.state = IDLE;
    this.level = 0;
    this.f = faults;
  }

  get levels() { return { 4: 1, 7: 2, 10: 3 }[this.uid.length]; }

  cln(level) {
    const u = this.uid;
    const part = level < this.levels - 1 ? [0x88, ...u.subarray(3 * level, 3 * level + 3)]
      : [...u.subarray(3 * level, 3 * level + 4)];
    let bcc = part[0] ^ part[1] ^ part[2] ^ part[3];
    if (this.f.bad_bcc) bcc ^= 0xff;
    return [...part, bcc];
  }

  receive(data, nbits) {
    if (nbits === 7 && (data[0] === 0x26 || data[0] === 0x52)) {
      if (this.state === IDLE || (this.state === HALT && data[0] === 0x52)) {
        this.state = READY; this.level = 0;
        return bitsOf([this.atqa & 0xff, this.atqa >> 8], 16);
      }
      if (this.state !== HALT) this.state = IDLE;
      return null;
    }
    if (this.state === READY && nbits >= 16 && data[0] === [0x93, 0x95, 0x97][this.level]) {
      if (this.f.silent) return null;
      const nvb = data[1];
      const cln = this.cln(this.level);
      if (nvb === 0x70 && nbits === 72) {
        const c = crcA(data.subarray(0, 7));
        const same = cln.every((v, i) => data[2 + i] === v);
        if (c !== (data[7] | (data[8] << 8)) || !same) { this.state = IDLE; return null; }
        const last = this.level === this.levels - 1;
        const sak = last ? this.sak : 0x04;
        if (last) this.state = ACTIVE; else this.level++;
        let s = crcA([sak]);
        if (this.f.bad_sak_crc) s ^= 0x0101;
        return bitsOf([sak, s & 0xff, s >> 8], 24);
      }
      const known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0f);
      if (nbits !== 16 + known || known > 40) { this.state = IDLE; return null; }
      const mine = bitsOf(cln, 40);
      const sent = bitsOf(data.subarray(2), known);
      for (let i = 0; i < known; i++) if (sent[i] !== mine[i]) return null;
      return mine.slice(known);
    }
    if (this.state === ACTIVE && nbits === 32 && data[0] === 0x50 && data[1] === 0) {
      if (crcA(data.subarray(0, 2)) === (data[2] | (data[3] << 8))) {
        if (this.f.naks_halt) return [0, 0, 0, 0];
        this.state = HALT;
        return null;
      }
    }
    if (this.state === READY || this.state === ACTIVE) this.state = IDLE;
    return null;
  }
}

const RESET = { 0x01: 0x20, 0x0a: 0x00, 0x0e: 0x80, 0x11: 0x3f, 0x14: 0x80 };

export class MFRC522 {
  constructor(mcu, spi, { cs, present = true, version = 0x92 }) {
    this.present = present;
    this.version = version;
    this.crcStalls = false;
    this.irqStalls = false;
    this.deck = [];          // entries not yet in the field: [{tags: [Tag...]}]
    this.field = null;       // the entry at the antenna
    this.fieldAsked = false; // it has answered a REQA/WUPA (its one read is under way)
    this.read = 0;           // entries that have passed the antenna
    this.exchanges = 0;
    this._reset();
    this._first = true;
    this._addr = 0;
    this._readMode = false;
    spi.onTransmit = (v) => spi.completeTransmit(this._xfer(v & 0xff));
    mcu.gpio[cs].addListener((state) => { if (state === 0) this._first = true; });
  }

  _reset() {
    this.regs = new Uint8Array(64);
    for (const [r, v] of Object.entries(RESET)) this.regs[r] = v;
    this.regs[0x37] = this.version;
    this.fifo = [];
  }

  /** Tags for the antenna, in order: [{uid: hex or [hex, ...] (several = collision),
   *  faults: {...}}]; replace=true drops what had not passed yet. */
  present_deck(entries, replace) {
    const mk = (e) => ({
      tags: (Array.isArray(e.uid) ? e.uid : [e.uid]).map(
        (h) => new Tag(Buffer.from(h, 'hex'), e.faults || {})),
    });
    if (replace) { this.deck = []; this.field = null; }
    this.deck.push(...entries.map(mk));
  }

  _xfer(b) {
    if (!this.present) return 0;
    if (this._first) {
      this._first = false;
      this._addr = (b >> 1) & 0x3f;
      this._readMode = !!(b & 0x80);
      return 0;
    }
    if (this._readMode) {
      const v = this._readReg(this._addr);
      this._addr = (b >> 1) & 0x3f;
      return v;
    }
    this._writeReg(this._addr, b);
    return 0;
  }

  _readReg(r) {
    if (r === 0x09) return this.fifo.length ? this.fifo.shift() : 0;
    if (r === 0x0a) return this.fifo.length;
    return this.regs[r];
  }

  _writeReg(reg, v) {
    const r = this.regs;
    if (reg === 0x01) { r[1] = v & 0x30; this._command(v & 0x0f); }
    else if (reg === 0x04 || reg === 0x05) {
      const m = v & 0x7f;
      r[reg] = v & 0x80 ? r[reg] | m : r[reg] & ~m;
    } else if (reg === 0x09) {
      if (this.fifo.length >= 64) r[0x06] |= 0x10; else this.fifo.push(v);
    } else if (reg === 0x0a) {
      if (v & 0x80) { this.fifo = []; r[0x06] &= ~0x10; }
    } else if (reg === 0x0d) {
      r[0x0d] = v & 0x7f;
      if (v & 0x80 && (r[1] & 0x0f) === 0x0c) this._transceive();
    } else r[reg] = v;
  }

  _command(cmd) {
    const r = this.regs;
    if (cmd === 0x0f) this._reset();
    else if (cmd === 0x03) {
      if (this.crcStalls) return;
      const preset = [0x0000, 0x6363, 0xa671, 0xffff][r[0x11] & 3];
      const c = crcA(this.fifo, preset);
      r[0x22] = c & 0xff; r[0x21] = c >> 8;
      r[0x05] |= 0x04;
      r[1] = (r[1] & 0xf0) | 0x03;
    } else r[1] = (r[1] & 0xf0) | cmd;
  }

  _tagsInField(data, nbits) {
    const wake = nbits === 7 && (data[0] === 0x26 || data[0] === 0x52);
    if (wake && this.field && this.fieldAsked) {   // its read is over: it has passed
      this.field = null;
      this.read++;
    }
    if (!this.field && wake && this.deck.length) {
      this.field = this.deck.shift();
      this.fieldAsked = false;
    }
    if (wake && this.field) this.fieldAsked = true;
    return this.field ? this.field.tags : [];
  }

  _transceive() {
    const r = this.regs;
    const framing = r[0x0d];
    const txLast = framing & 7;
    const rxAlign = (framing >> 4) & 7;
    const data = Uint8Array.from(this.fifo);
    const nbits = txLast ? (data.length - 1) * 8 + txLast : data.length * 8;
    this.fifo = [];
    this.exchanges++;
    r[0x06] = 0;
    if (this.irqStalls) return;
    const answers = [];
    if (r[0x14] & 0x03) {
      for (const t of this._tagsInField(data, nbits)) {
        const a = t.receive(data, nbits);
        if (a !== null) answers.push([t, a]);
      }
    }
    if (!answers.length) { r[0x04] |= 0x40 | 0x01; return; }
    const n = Math.max(...answers.map(([, a]) => a.length));
    const bits = [];
    let coll = -1;
    for (let i = 0; i < n; i++) {
      const vals = new Set(answers.filter(([, a]) => i < a.length).map(([, a]) => a[i]));
      if (coll < 0 && vals.size > 1) coll = i;
      bits.push(coll >= 0 ? 0 : [...vals][0]);
    }
    if (coll >= 0) { r[0x06] |= 0x08; r[0x0e] = (r[0x0e] & 0x80) | ((coll + 1) & 0x1f); }
    else r[0x0e] = (r[0x0e] & 0x80) | 0x20;
    if (answers.some(([t]) => t.f.parity)) r[0x06] |= 0x02;
    const out = bytesOf([...new Array(rxAlign).fill(0), ...bits]);
    this.fifo = [...out];
    r[0x0c] = (r[0x0c] & 0xf8) | ((rxAlign + bits.length) & 7);
    r[0x04] |= 0x40 | 0x20 | 0x10 | (r[0x06] ? 0x02 : 0);
  }

  state() {
    return {
      present: this.present, waiting: this.deck.length, passed: this.read,
      in_field: this.field ? this.field.tags.map((t) => Buffer.from(t.uid).toString('hex')) : [],
      exchanges: this.exchanges,
    };
  }
}
