// rp2040js, from where host_tools chose it ($PITBOSS_NODE_MODULES: the checkout's
// node_modules, or ~/.pitboss/node for an installed pitboss), else by resolution. An ES
// module's bare import resolves only from its own folder upward, and an installed
// host_tools/emu/pico/ has no node_modules above it: the wheel's Pico could not start.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const chosen = process.env.PITBOSS_NODE_MODULES;
const mod = await import(chosen
  ? pathToFileURL(path.resolve(chosen, 'rp2040js', 'dist', 'esm', 'index.js')).href
  : 'rp2040js');
export const { RP2040, ConsoleLogger, LogLevel, GPIOPinState, USBCDC } = mod;
