// GPIO input levels as the outside world drives them. A level the host set (at boot with
// --gpio N=V, or later over the control socket) holds; any other input pin follows its pull
// resistor, as a floating-but-pulled pin does on the chip (rp2040js leaves every input
// low, which would read the Pico's pulled-up buttons as pressed).
// A switch the host holds stays held through a reset of the chip, as a real switch does:
// with `held` (board.mjs --held FILE, kept by vboard's daemon across the restarts it does
// after a watchdog reset) every change is written to FILE, and a chip started with FILE
// present takes its levels from it instead of --gpio.
import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { GPIOPinState } from './rp2040.mjs';

export class GPIOLevels {
  constructor(mcu, levels = {}, held = null) {
    this.mcu = mcu;
    this.forced = {};
    this.held = held;
    if (held && existsSync(held)) levels = JSON.parse(readFileSync(held, 'utf8'));
    for (const [pin, v] of Object.entries(levels)) this.set(Number(pin), v);
    mcu.gpio.forEach((p, i) => {
      p.addListener((state) => this._follow(i, state));
    });
  }

  set(pin, value) {
    const p = this.mcu.gpio[pin];
    if (!p) throw new Error(`no GPIO ${pin}`);
    this.forced[pin] = value ? 1 : 0;
    p.setInputValue(!!value);
    this._keep();
  }

  release(pin) {
    delete this.forced[pin];
    this._follow(pin, this.mcu.gpio[pin].value);
    this._keep();
  }

  _keep() {
    if (!this.held) return;
    writeFileSync(this.held + '.tmp', JSON.stringify(this.forced));
    renameSync(this.held + '.tmp', this.held);
  }

  _follow(pin, state) {
    if (pin in this.forced) return;
    if (state === GPIOPinState.InputPullUp) this.mcu.gpio[pin].setInputValue(true);
    else if (state === GPIOPinState.InputPullDown) this.mcu.gpio[pin].setInputValue(false);
  }

  /** Pin -> {out: level driven by the chip or null, in: input level} for the host. */
  snapshot() {
    return this.mcu.gpio.map((p) => ({
      out: p.outputEnable ? (p.outputValue ? 1 : 0) : null,
      in: p.inputValue ? 1 : 0,
    }));
  }
}
