// UARTs: fix 3, and the host's bytes put on a UART's RX line at its baud rate.
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
    uart.onByte = (b) => { if (this.tx.length < 65536) this.tx.push(b); };
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
