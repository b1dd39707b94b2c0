// The host's control socket: one JSON object per line in, one JSON reply per line out.
//   {"cmd": "cycles"}                                  -> cycles, ns (emulated), boot figures,
//                                                       usb_starved (usbcdc.mjs), cpu_s (this
//                                                       process's user CPU), wasm (batches and
//                                                       instructions run by fix 8)
//   {"cmd": "profile", "on": true|false}               start sampling the program counter
//                                                       (every 64th instruction) / stop:
//                                                       samples [[pc, n], ...] (docs/bench.md);
//                                                       "card": true samples only while a
//                                                       shoe's frame waits for its ack
//   {"cmd": "lines"}                                   chip ns of each protocol line since
//                                                       the last call, from its newline to
//                                                       its reply's (usbcdc.mjs), and clears
//   {"cmd": "cut", "at_cycle": N} | {"cmd": "cut", "now": true}
//   {"cmd": "cut", "flash_ops": K, "keep": B}           the (K+1)th flash erase/program from
//                                                       now is cut after B bytes
//   {"cmd": "uart", "id": 1, "hex": "...", "wait": true} bytes onto UARTn's RX at its baud;
//                                                       wait: reply once all are on the line
//   {"cmd": "uart_tx", "id": 1}                         what the firmware sent (and clears it)
//   {"cmd": "shoe", "id": 1, "hex": "...", "timeout_ms": 100, "wait": true}
//                                                       frames (12 bytes each) to the
//                                                       acknowledging shoe on UARTn (uart.mjs):
//                                                       one at a time, resent until acked, on
//                                                       the emulated clock; wait: reply once
//                                                       all are acknowledged
//   {"cmd": "shoe_state", "id": 1}                      its counts (frames, sends, resends,
//                                                       bytes dropped on the line)
//   {"cmd": "i2c", "present": false}                    the display (un)plugged
//   {"cmd": "display"}                                  its state and display RAM
//   {"cmd": "rfid", "present": b, "deck": [...], "replace": b, "crc_stalls": b, "irq_stalls": b}
//   {"cmd": "gpio", "pin": N, "value": 0|1|null}        null: back to its pull resistor
//   {"cmd": "flash", "erase_ms": E, "page_ms": P}       flash operation counts and time spent
//                                                       (E, P: set the timing from now on)
//   {"cmd": "hang"}                                     the core stops executing (a chip
//                                                       stuck with interrupts off); time and
//                                                       the watchdog run on
import { createServer } from 'node:net';
import { unlinkSync } from 'node:fs';

export function serveControl(path, board) {
  try { unlinkSync(path); } catch { /* not there */ }
  const handle = (req, reply) => {
    const { core, clock, flash, uarts, shoes, gpio, display, rfid, stats } = board;
    switch (req.cmd) {
      case 'cycles':
        return reply({ cycles: core.cycles, ns: clock.nanos, usb_starved: board.cdc.starved(),
                       ...stats, cpu_s: process.cpuUsage().user / 1e6,
                       // fix 8: batches run in thumbcore.wasm and their instructions
                       wasm: board.fast ? { runs: board.fast.runs, executed: board.fast.executed } : null });
      case 'lines': {
        const ns = board.cdc.lineNs;
        board.cdc.lineNs = [];
        return reply({ ns });
      }
      case 'cut':
        if (req.now) { reply({ ok: true }); return setImmediate(board.cutNow); }
        if (req.at_cycle !== undefined) { board.cutAt(req.at_cycle); return reply({ ok: true }); }
        flash.armCut(req.flash_ops || 0, req.keep || 0);
        board.wake();
        return reply({ ok: true });
      case 'uart': {
        const line = uarts[req.id ?? 1];
        line.write(Buffer.from(req.hex || '', 'hex'));
        board.wake();
        const done = () => reply({ ok: true, sent: line.sent, overruns: line.overruns, ns: clock.nanos });
        return req.wait ? line.whenDrained(done) : done();
      }
      case 'shoe': {
        const shoe = shoes[req.id ?? 1];
        const data = Buffer.from(req.hex || '', 'hex');
        if (data.length % 12) return reply({ error: 'shoe: frames are 12 bytes each' });
        const frames = [];
        for (let i = 0; i < data.length; i += 12) frames.push([...data.subarray(i, i + 12)]);
        shoe.deal(frames, req.timeout_ms);
        board.wake();
        const done = () => reply({ ok: true, ...shoe.state(), ns: clock.nanos, cycles: core.cycles });
        return req.wait ? shoe.whenDone(done) : done();
      }
      case 'profile':  // {"on": true} starts sampling; {"on": false} stops: [[pc, n], ...]
        return reply({ samples: board.profile(!!req.on, !!req.card) });
      case 'shoe_state':
        return reply({ ...shoes[req.id ?? 1].state(), ns: clock.nanos, cycles: core.cycles });
      case 'uart_tx': {
        const line = uarts[req.id ?? 1];
        return reply({ hex: Buffer.from(line.tx.splice(0)).toString('hex') });
      }
      case 'i2c':
        if (req.present !== undefined) display.present = !!req.present;
        return reply({ ok: true, present: display.present });
      case 'display':
        return reply(display.state());
      case 'rfid':
        if (req.present !== undefined) rfid.present = !!req.present;
        if (req.crc_stalls !== undefined) rfid.crcStalls = !!req.crc_stalls;
        if (req.irq_stalls !== undefined) rfid.irqStalls = !!req.irq_stalls;
        if (req.deck) rfid.present_deck(req.deck, !!req.replace);
        return reply({ ok: true, ...rfid.state() });
      case 'gpio':
        if (req.value === null) gpio.release(req.pin);
        else if (req.value !== undefined) gpio.set(req.pin, req.value);
        board.wake();
        return reply({ ok: true, pins: gpio.snapshot() });
      case 'hang':
        board.hang();
        return reply({ ok: true, cycles: core.cycles, ns: clock.nanos });
      case 'flash':
        // erase_ms / page_ms: change the flash chip's timing from now on (flash.mjs)
        if (req.erase_ms !== undefined) flash.eraseNs = Math.round(req.erase_ms * 1e6);
        if (req.page_ms !== undefined) flash.pageNs = Math.round(req.page_ms * 1e6);
        return reply({ ops: flash.ops, erased: flash.bytesErased, programmed: flash.bytesProgrammed,
                       sectors_erased: flash.erases, pages_programmed: flash.pages,
                       busy_ns: flash.busyTotalNs, erase_ns: flash.eraseNs, page_ns: flash.pageNs });
      default:
        return reply({ error: `unknown command ${JSON.stringify(req.cmd)}` });
    }
  };
  const server = createServer((sock) => {
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        const reply = (obj) => { if (!sock.destroyed) sock.write(JSON.stringify(obj) + '\n'); };
        try {
          handle(JSON.parse(line), reply);
        } catch (e) {
          reply({ error: String(e.message || e) });
        }
      }
    });
    sock.on('error', () => {});
  });
  server.listen(path);
  server.unref();
  return server;
}
