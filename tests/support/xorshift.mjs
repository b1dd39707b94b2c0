// The random streams of the emulator's differential checks (fastcore_check.mjs,
// thumbcore_check.mjs): xorshift32, so every run draws the same instructions and states.
export function xorshift32(seed) {
  let s = (seed >>> 0) || 0x2545f491;  // (0 would stay 0)
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

// rp2040js's logger, silent: the random accesses make it warn at every step.
export const quiet = { debug() {}, info() {}, warn() {}, error() {} };
