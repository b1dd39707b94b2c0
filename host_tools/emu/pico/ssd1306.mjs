// An SSD1306 128x64 on an I2C bus (rp2040js RPI2C): it acknowledges its address and decodes
// what the driver sends -- control bytes (Co, D/C#), the command set of the datasheet
// (rev 1.1, ch. 9-10: addressing modes, column/page windows, display on/off, inversion,
// contrast) and GDDRAM data -- into its own display memory, so a screenshot shows what the
// firmware's driver really drew. Unplugged, it acknowledges nothing.
const W = 128;
const PAGES = 8;
// Commands followed by argument bytes, and how many (datasheet table 9-1).
const ARGS = {
  0x20: 1, 0x21: 2, 0x22: 2, 0x81: 1, 0x8d: 1, 0xa8: 1, 0xd3: 1, 0xd5: 1, 0xd9: 1, 0xda: 1,
  0xdb: 1, 0xa3: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2a: 5,
};

export class SSD1306 {
  constructor(i2c, addr = 0x3c, present = true, clock = null) {
    this.clock = clock;
    this.lastWriteNs = 0;   // emulated time of the last display-RAM write
    this.addr = addr;
    this.present = present;
    this.ram = new Uint8Array(W * PAGES);
    this.on = false;
    this.inverted = false;
    this.contrast = 0x7f;
    this.mode = 2;          // page addressing after reset
    this.colStart = 0; this.colEnd = W - 1;
    this.pageStart = 0; this.pageEnd = PAGES - 1;
    this.col = 0; this.page = 0;
    this.writes = 0;        // data bytes received
    this.commands = 0;
    this.nacks = 0;
    this._selected = false;
    this._ctl = true;       // next byte is a control byte
    this._data = false;
    this._cont = false;     // Co=0: the rest of the transfer is one stream
    this._cmd = [];
    i2c.onConnect = (address, mode) => {
      const ack = this.present && address === this.addr;
      if (!ack) this.nacks++;
      this._selected = ack && mode === 0;
      this._ctl = true; this._cont = false;
      i2c.completeConnect(ack);
    };
    i2c.onWriteByte = (b) => {
      if (this._selected) this._byte(b);
      i2c.completeWrite(this._selected);
    };
    i2c.onReadByte = () => i2c.completeRead(this.present ? (this.on ? 0x03 : 0x43) : 0xff);
    i2c.onStop = () => { this._selected = false; i2c.completeStop(); };
  }

  _byte(b) {
    if (this._ctl) {
      this._data = !!(b & 0x40);
      this._cont = !(b & 0x80);
      this._ctl = false;
      return;
    }
    if (this._data) this._ram(b);
    else this._command(b);
    if (!this._cont) this._ctl = true;
  }

  _ram(b) {
    this.writes++;
    if (this.clock) this.lastWriteNs = this.clock.nanos;
    this.ram[this.page * W + this.col] = b;
    if (this.mode === 0) {            // horizontal
      if (++this.col > this.colEnd) {
        this.col = this.colStart;
        if (++this.page > this.pageEnd) this.page = this.pageStart;
      }
    } else if (this.mode === 1) {     // vertical
      if (++this.page > this.pageEnd) {
        this.page = this.pageStart;
        if (++this.col > this.colEnd) this.col = this.colStart;
      }
    } else if (++this.col >= W) {     // page mode: the column wraps within the page
      this.col = 0;
    }
  }

  _command(b) {
    const c = this._cmd;
    c.push(b);
    const need = ARGS[c[0]] || 0;
    if (c.length <= need) return;
    this.commands++;
    const op = c[0];
    if (op === 0x20) this.mode = c[1] & 3;
    else if (op === 0x21) {
      this.colStart = c[1] & 0x7f; this.colEnd = c[2] & 0x7f; this.col = this.colStart;
    } else if (op === 0x22) {
      this.pageStart = c[1] & 7; this.pageEnd = c[2] & 7; this.page = this.pageStart;
    } else if (op === 0x81) this.contrast = c[1];
    else if (op === 0xae || op === 0xaf) this.on = op === 0xaf;
    else if (op === 0xa6 || op === 0xa7) this.inverted = op === 0xa7;
    else if (op >= 0xb0 && op <= 0xb7) this.page = op & 7;
    else if (op <= 0x0f) this.col = (this.col & 0xf0) | op;
    else if (op >= 0x10 && op <= 0x1f) this.col = ((op & 0x0f) << 4) | (this.col & 0x0f);
    c.length = 0;
  }

  state() {
    return {
      present: this.present, on: this.on, inverted: this.inverted, contrast: this.contrast,
      writes: this.writes, commands: this.commands, nacks: this.nacks,
      last_write_ns: this.lastWriteNs,
      ram: Buffer.from(this.ram).toString('hex'),
    };
  }
}
