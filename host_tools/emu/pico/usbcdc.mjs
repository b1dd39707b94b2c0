// The USB host side of MicroPython's CDC serial, on top of rp2040js's USBCDC (which does
// the enumeration). Two of the five fixes live here:
//  2. rp2040js's host answers every OUT-endpoint read at once, with an empty packet when it
//     has nothing, so the chip takes a USB interrupt about every 10 us. A real host NAKs
//     until it has data: the read is held until bytes arrive.
//  4. Bytes from the host are kept in our own queue and handed over one read (at most the
//     size the firmware armed) at a time, instead of being pushed into rp2040js's 512-byte
//     FIFO, which drops what does not fit.
// It also counts the chip's cycles spent with a read armed and nothing from the host
// (starvedCycles): a pty delivers a burst in pieces, and the emulated chip runs on between
// them, so a drain's chip time is its cycles minus these.
import { USBCDC } from './rp2040.mjs';

export class CDCLink {
  /** onData(Uint8Array): bytes the board sent; onConnect(): the board enumerated;
   *  nanos(): the emulated clock, for the lines' chip time (lineNs). */
  constructor(mcu, onData, onConnect, nanos = () => 0) {
    this.core = mcu.core;
    this.usb = mcu.usbCtrl;
    this.cdc = new USBCDC(this.usb);
    this.queue = [];        // Uint8Array chunks from the host
    this.queued = 0;
    this.pending = 0;       // size of a held read (0: none)
    this.connected = false;
    this.starvedCycles = 0;
    this.starvedSince = -1; // cycle count when a read was armed with the queue empty
    // A line's chip time: from the read that handed the chip the line's newline to the
    // first newline the chip sends back (its reply), on the emulated clock. Unlike the
    // clock across a host's request, it leaves out the time the chip runs on while the
    // host (a pty and a Python process, slower than a real USB host) reads the reply and
    // writes the next line. One line at a time: a line sent before the previous one was
    // answered (or a reply with no line, a card's event) is not timed.
    this.nanos = nanos;
    this.lineAt = -1;       // emulated ns when the chip got a line's newline (-1: none)
    this.lineNs = [];       // chip ns of each line since the host last took them
    this.cdc.onSerialData = (data) => {
      if (this.lineAt >= 0 && data.includes(10)) {
        this.lineNs.push(this.nanos() - this.lineAt);
        this.lineAt = -1;
      }
      onData(data);
    };
    this.cdc.onDeviceConnected = () => {
      this.connected = true;
      onConnect();
      this._feed();
    };
    this.usb.onEndpointRead = (endpoint, size) => {
      if (endpoint !== this.cdc.outEndpoint) return;
      this.pending = size;
      this._feed();
      if (this.pending && !this.queued) this.starvedSince = this.core.cycles;
    };
  }

  /** Host -> board bytes. */
  write(bytes) {
    if (!bytes.length) return;
    if (this.starvedSince >= 0) {
      this.starvedCycles += this.core.cycles - this.starvedSince;
      this.starvedSince = -1;
    }
    this.queue.push(Uint8Array.from(bytes));
    this.queued += bytes.length;
    this._feed();
  }

  /** Cycles the chip ran with a read armed and no host bytes, up to now. */
  starved() {
    return this.starvedCycles + (this.starvedSince >= 0 ? this.core.cycles - this.starvedSince : 0);
  }

  _feed() {
    if (!this.pending || !this.queued || !this.connected) return;
    const out = new Uint8Array(Math.min(this.pending, this.queued));
    let n = 0;
    while (n < out.length) {
      const head = this.queue[0];
      const take = Math.min(head.length, out.length - n);
      out.set(head.subarray(0, take), n);
      n += take;
      if (take === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(take);
    }
    this.queued -= n;
    this.pending = 0;
    if (out.includes(10)) this.lineAt = this.nanos();
    this.usb.endpointReadDone(this.cdc.outEndpoint, out);
  }
}
