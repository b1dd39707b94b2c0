// rp2040js, from where host_tools chose it ($PITBOSS_NODE_MODULES: the checkout's
// node_modules, or ~/.pitboss/node for an installed pitboss), else by resolution. An ES
// module's bare import resolves only from its own folder upward, and an installed
// host_tools/emu/pico/ has no node_modules above it: the wheel's Pico could not start.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Its instruction decoder is replaced by a table-driven one (fastcore.mjs, fix 7) before
// any core is built.
import { install } from './fastcore.mjs';

const chosen = process.env.PITBOSS_NODE_MODULES;
const indexUrl = chosen
  ? pathToFileURL(path.resolve(chosen, 'rp2040js', 'dist', 'esm', 'index.js')).href
  : import.meta.resolve('rp2040js');
const mod = await import(indexUrl);
export const fastcore = await install(new URL('./cortex-m0-core.js', indexUrl).href);
export const { RP2040, ConsoleLogger, LogLevel, GPIOPinState, USBCDC } = mod;
