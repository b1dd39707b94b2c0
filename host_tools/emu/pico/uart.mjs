// UARTs: fixes 3 and 6, and the host's bytes put on a UART's RX line at its baud rate.
//
// rp2040js 1.4.1 sets the TX interrupt again every time any UART register changes, so as
// soon as MicroPython's machine.UART enables it the chip never leaves the handler. A PL011
// raises TXINTR when its TX FIFO level passes the trigger level; this model's FIFO drains
// at once, so that transition is "a byte was written", and the flag stays clear otherwise.
const UARTDR = 0x0;
const UARTTXINTR = 1 << 5;

export function fixTxInterrupt(uart) {
  uart.checkInterrupts = function () {
    this.rp2040.setInterrupt(this.irq, !!(this.interruptStatus & this.interruptMask));
  };
  const write = uart.writeUint32.bind(uart);
  uart.writeUint32 = function (offset, value) {
    write(offset, value);
    if (offset === UARTDR) {
      this.interruptStatus |= UARTTXINTR;
      this.checkInterrupts();
    }
  };
}

// fix 6: the PL011's receive interrupts, as the RP2040 datasheet (4.2.6, "Interrupts")
// has them. rp2040js 1.4.1 raises RXINTR at every byte received. A PL011 raises it once the
// RX FIFO holds its trigger level (UARTIFLS: MicroPython's machine.UART sets 1/8 of the
// 32-entry FIFO, 4 bytes), and RTINTR, the receive timeout, once the FIFO is not empty and
// no byte has come for 32 bit periods (3.3 ms at 9600 baud). So a byte alone in the FIFO
// (a shoe frame's last, after the loop read the ones before it) wakes a core sleeping in
// its poll only 32 bit periods after it came. PITBOSS_PICO_UART_RX=eager keeps
// rp2040js's interrupt at every byte (the peer of a figure measured both ways).
const UARTIFLS = 0x34;
const UARTRXINTR = 1 << 4;
const UARTRTINTR = 1 << 6;
const RX_LEVELS = [4, 8, 16, 24, 28];  // UARTIFLS RXIFLSEL 0..4: 1/8 .. 7/8 of 32

export function fixRxInterrupt(uart, clock, baud) {
  if (process.env.PITBOSS_PICO_UART_RX === 'eager') return;
  let ifls = 0x12;  // the reset value: both FIFOs at 1/2
  const level = () => (uart.fifosEnabled ? (RX_LEVELS[(ifls >> 3) & 7] ?? 28) : 1);
  const timeout = clock.createAlarm(() => {
    timeout.scheduled = false;
    if (!uart.rxFIFO.empty) {
      uart.interruptStatus |= UARTRTINTR;
      uart.checkInterrupts();
    }
  });
  uart.feedByte = function (value) {
    this.rxFIFO.push(value);
    if (this.rxFIFO.itemCount >= level()) this.interruptStatus |= UARTRXINTR;
    timeout.schedule(Math.round(32e9 / baud()));  // each byte restarts the count
    this.checkInterrupts();
  };
  const read = uart.readUint32.bind(uart);
  uart.readUint32 = function (offset) {
    if (offset === UARTIFLS) return ifls;
    if (offset !== UARTDR) return read(offset);
    const value = this.rxFIFO.pull();
    if (this.rxFIFO.itemCount < level()) this.interruptStatus &= ~UARTRXINTR;
    if (this.rxFIFO.empty) this.interruptStatus &= ~UARTRTINTR;
    this.checkInterrupts();
    return value;
  };
  const write = uart.writeUint32.bind(uart);
  uart.writeUint32 = function (offset, value) {
    if (offset === UARTIFLS) ifls = value & 0x3f;
    else write(offset, value);
  };
}

/** Bytes fed into a UART's receiver one frame time apart (start + 8 data + stop bits at
 *  the baud rate the firmware programmed), on the emulated clock. */
export class UARTLine {
  constructor(mcu, uart, defaultBaud = 9600) {
    this.clock = mcu.clock;
    this.uart = uart;
    this.defaultBaud = defaultBaud;
    this.queue = [];
    this.sent = 0;         // bytes put on the line so far
    this.overruns = 0;     // bytes that found the RX FIFO full (lost, as on the chip)
    this.tx = [];          // what the firmware transmitted
    this.waiters = [];
    this.listeners = [];   // devices on the line that hear what the firmware sends
    uart.onByte = (b) => {
      if (this.tx.length < 65536) this.tx.push(b);
      for (const fn of this.listeners) fn(b);
    };
    this.alarm = this.clock.createAlarm(() => this._next());
  }

  get baud() {
    return this.uart.baudDivider ? this.uart.baudRate : this.defaultBaud;
  }

  write(bytes) {
    for (const b of bytes) this.queue.push(b & 0xff);
    if (!this.alarm.scheduled) this._schedule();
  }

  /** fn() once every byte written so far is on the line. */
  whenDrained(fn) {
    if (!this.queue.length) fn();
    else this.waiters.push(fn);
  }

  _schedule() {
    this.alarm.schedule(Math.round(10e9 / this.baud));
  }

  _next() {
    this.alarm.scheduled = false;
    const b = this.queue.shift();
    if (b !== undefined) {
      if (this.uart.rxFIFO.full) this.overruns++;
      else this.uart.feedByte(b);
      this.sent++;
    }
    if (this.queue.length) this._schedule();
    else for (const fn of this.waiters.splice(0)) fn();
  }
}

// ---- a shoe on the line: the acknowledged link, on the emulated clock -----------------
// docs/shoe-protocol.md, "Acknowledgement": the shoe sends one frame, and sends it again
// `timeoutMs` after it is on the line until the controller's `+SSSSKKKK\n` for its
// sequence number comes back on the UART's TX line; then the next frame. Its timer runs on
// the emulated clock, so it fires while the chip sits in a flash erase with interrupts off,
// as a real shoe's does, and those bytes meet a full FIFO (UARTLine.overruns).
const ACK = 0x2b;          // '+'
const LF = 0x0a;
const ACK_LEN = 10;

function crc16(bytes) {    // CRC-16/CCITT-FALSE, as pitboss.hw.shoe
  let crc = 0xffff;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function ackSeq(buf) {     // the seq of a well-formed acknowledgement, or -1
  if (buf.length !== ACK_LEN || buf[0] !== ACK || buf[9] !== LF) return -1;
  const text = String.fromCharCode(...buf.slice(1, 9));
  if (!/^[0-9A-F]{8}$/.test(text)) return -1;
  const seq = parseInt(text.slice(0, 4), 16);
  return crc16([seq >> 8, seq & 0xff]) === parseInt(text.slice(4), 16) ? seq : -1;
}

export class AckingShoe {
  constructor(clock, line) {
    this.clock = clock;
    this.line = line;
    this.queue = [];       // frames still to deal (12-byte arrays)
    this.cur = null;       // the frame waiting for its acknowledgement
    this.seq = -1;
    this.timeoutNs = 100e6;
    this.frames = 0;       // frames acknowledged
    this.sends = 0;        // frames put on the line, resends included
    this.acks = 0;         // well-formed acknowledgements heard (any seq)
    this.rx = [];
    this.waiters = [];
    // Per acknowledged frame: emulated ns from the last byte of its first send on the
    // line to its acknowledgement heard, resends included: how long the shoe waits for
    // a card (issue 27's budget).
    this.latencyNs = [];
    this.sentEndNs = 0;
    this.firstSend = true;
    this.timer = clock.createAlarm(() => { this.timer.scheduled = false; this._resend(); });
    this.after = clock.createAlarm(() => { this.after.scheduled = false; this._next(); });
    line.listeners.push((b) => this._heard(b));
  }

  get byteNs() {
    return Math.round(10e9 / this.line.baud);
  }

  deal(frames, timeoutMs) {
    if (timeoutMs) this.timeoutNs = Math.round(timeoutMs * 1e6);
    for (const f of frames) this.queue.push(f);
    if (!this.cur && !this.after.scheduled) this._next();
  }

  /** fn() once every frame dealt so far is acknowledged. */
  whenDone(fn) {
    if (this.idle) fn();
    else this.waiters.push(fn);
  }

  get idle() {
    return !this.cur && !this.queue.length && !this.after.scheduled;
  }

  state() {
    return { frames: this.frames, sends: this.sends, resends: this.sends - this.frames - (this.cur ? 1 : 0),
             acks: this.acks, queued: this.queue.length + (this.cur ? 1 : 0),
             dropped: this.line.overruns, timeout_ms: this.timeoutNs / 1e6,
             latency_ns: this.latencyNs };
  }

  _next() {
    this.cur = this.queue.shift() || null;
    if (!this.cur) {
      if (this.timer.scheduled) this.timer.cancel();
      for (const fn of this.waiters.splice(0)) fn();
      return;
    }
    this.seq = parseInt(String.fromCharCode(...this.cur.slice(3, 7)), 16);
    this.firstSend = true;
    this._send();
  }

  _send() {
    this.line.write(this.cur);
    this.sends++;
    if (this.firstSend) this.sentEndNs = this.clock.nanos + this.line.queue.length * this.byteNs;
    this.firstSend = false;
    // The timer starts once the frame's last byte is on the line.
    this.timer.schedule(this.line.queue.length * this.byteNs + this.timeoutNs);
  }

  _resend() {
    if (this.cur) this._send();
  }

  _heard(b) {
    if (b === ACK) this.rx = [];
    this.rx.push(b);
    if (b !== LF) {
      if (this.rx.length > ACK_LEN) this.rx = [];
      return;
    }
    const seq = ackSeq(this.rx);
    this.rx = [];
    if (seq < 0) return;
    this.acks++;
    if (this.cur && seq === this.seq) {
      this.frames++;
      this.latencyNs.push(this.clock.nanos - this.sentEndNs);
      this.cur = null;
      if (this.timer.scheduled) this.timer.cancel();
      // The acknowledgement takes ACK_LEN byte times to reach the shoe (the model's TX
      // is instant); only then does it send the next frame.
      this.after.schedule(ACK_LEN * this.byteNs);
    }
  }
}
