// Fix 8 (DEVELOPERS.md, "Pico board"): rp2040js 1.4.1's Cortex-M0+ core, instruction for
// instruction, in C compiled to WebAssembly (thumbcore.wasm, built by build_thumbcore.sh),
// for speed. The budget session's wall time is the emulator's instruction rate (issue 27,
// docs/bench.md); V8 runs rp2040js's interpreter at ~35 M instructions a CPU second, and
// compiling blocks to JavaScript did not pay (docs/bench.md, "Tried and not kept").
//
// What it is: each body below is rp2040js's executeInstruction branch for the same
// encoding, with JavaScript's number semantics written out (doubles where a sum can pass
// 2^32, ToInt32 where a bitwise operator applies, ToUint32 where a register is stored), so
// it computes what rp2040js computes, quirks included (a shift by 0 in ASRS/LSRS register
// form sets C from bit 31; ROR sets C from the result; PC keeps its Thumb bit after an
// exception entry). tests/support/thumbcore_check.mjs runs random instruction sequences
// on both from the same state and compares registers, flags, cycles, memory, the clock and
// every peripheral access.
//
// What it leaves to rp2040js (board.mjs runs the JavaScript core for that instruction):
// anything touching state the JavaScript side owns - exceptions (SVC, an exception return
// by BX/POP in handler mode), MRS/MSR of anything but APSR and PRIMASK, WFE/WFI/SEV/YIELD,
// BKPT/UDF (the flash model's hooks), unknown encodings - and any fetch outside SRAM,
// flash or the bootrom. PRIMASK (CPS, MRS, MSR: the SDK's save_and_disable_interrupts,
// tens of thousands a round) is kept here; where rp2040js then looks for interrupts
// (CPSIE, MSR PRIMASK) the batch ends. Loads and stores reach SRAM, flash, the bootrom,
// the SIO's CPUID, divider and spinlocks and the timer's raw count here; any other is
// made by rp2040js's own methods through an import, with the clock brought up to that
// instruction first, and the batch ends after it, so the JavaScript side sees every
// peripheral's effect (an interrupt, an alarm, the flash busy) before the next
// instruction, as it did with rp2040js alone.
#include <stdint.h>

#define IMPORT(name) __attribute__((import_module("env"), import_name(name)))
#define EXPORT(name) __attribute__((export_name(name)))

// rp2040js's own methods (wasmcore.mjs): address as a JavaScript number (it may pass 2^32
// where rp2040js's sum does), `before` the batch's cycles before this instruction.
IMPORT("r32") uint32_t js_r32(double addr, uint32_t before);
IMPORT("r16") uint32_t js_r16(double addr, uint32_t before);
IMPORT("r8") uint32_t js_r8(double addr, uint32_t before);
IMPORT("w32") void js_w32(double addr, double value, uint32_t before);
IMPORT("w16") void js_w16(double addr, double value, uint32_t before);
IMPORT("w8") void js_w8(double addr, double value, uint32_t before);

#define RAM_START 0x20000000u
#define SRAM_SIZE (264u * 1024u)
#define FLASH_START 0x10000000u
#define FLASH_END 0x14000000u
#define FLASH_SIZE (16u * 1024u * 1024u)
#define BOOTROM_SIZE (16u * 1024u)
#define APB_START 0x40000000u
#define SIO_START 0xd0000000u

// The memories rp2040js's RP2040 reads and writes (wasmcore.mjs points its typed arrays here).
static uint32_t regs[16];
static uint8_t flags[8] __attribute__((aligned(4)));  // N, Z, C, V, PRIMASK.PM, interruptsUpdated (set: ends the batch)
static uint32_t bootrom[BOOTROM_SIZE / 4];
static uint32_t sram_w[SRAM_SIZE / 4];
static uint32_t flash_w[FLASH_SIZE / 4];
#define SRAM ((uint8_t *)sram_w)
#define FLASH ((uint8_t *)flash_w)
// State shared with rp2040js's objects (wasmcore.mjs makes their fields views of these):
// the SIO's divider and spinlocks, the clock at the batch's start.
static double shared_f64[6];   // clock ns at the batch's start, ns a cycle, divider
                               // dividend, divisor, quotient, remainder (JS numbers)
static int32_t shared_i32[3];  // divider CSR, spinlocks, core cycles the divider added
#define NANOS0 shared_f64[0]
#define NS_PER_CYCLE shared_f64[1]
#define DIV_DIVIDEND shared_f64[2]
#define DIV_DIVISOR shared_f64[3]
#define DIV_QUOTIENT shared_f64[4]
#define DIV_REMAINDER shared_f64[5]
#define DIV_CSR shared_i32[0]
#define SPINLOCKS shared_i32[1]
#define EXTRA_CYCLES shared_i32[2]
EXPORT("shared_f64") double *p_shared_f64(void) { return shared_f64; }
EXPORT("shared_i32") int32_t *p_shared_i32(void) { return shared_i32; }
static uint32_t executed;  // instructions in the last run
static uint32_t stop;      // why the last run stopped (STOP_*)

EXPORT("regs") uint32_t *p_regs(void) { return regs; }
EXPORT("flags") uint8_t *p_flags(void) { return flags; }
EXPORT("bootrom") uint32_t *p_bootrom(void) { return bootrom; }
EXPORT("sram") uint8_t *p_sram(void) { return SRAM; }
EXPORT("flash") uint8_t *p_flash(void) { return FLASH; }
EXPORT("executed") uint32_t p_executed(void) { return executed; }
EXPORT("stop") uint32_t p_stop(void) { return stop; }

enum { STOP_LIMIT = 0, STOP_JS = 1, STOP_IO = 2 };

typedef uint32_t u32u __attribute__((aligned(1)));
typedef uint16_t u16u __attribute__((aligned(1)));

static inline uint32_t ld32(const uint8_t *p) { return *(const u32u *)p; }
static inline uint32_t ld16(const uint8_t *p) { return *(const u16u *)p; }
static inline void st32(uint8_t *p, uint32_t v) { *(u32u *)p = v; }
static inline void st16(uint8_t *p, uint32_t v) { *(u16u *)p = (uint16_t)v; }

// The batch's state for the memory paths.
static uint32_t before;  // cycles of the batch before the current instruction
static int io;           // the current instruction went through rp2040js

// ---- the SIO's divider and spinlocks, the timer's raw count: rp2040js's code for them ----
// The SDK divides with the SIO's divider (five accesses a division), takes spinlocks in
// its critical sections and reads the timer's raw count for every time check: together
// 85% of what ended batches on a Pai Gow round. Each is written here as rp2040js has it
// (sio.js, peripherals/timer.js), on state the JavaScript objects share.
static uint32_t to_u32(double x) {  // ToUint32
  if (!(x == x) || x == 1.0 / 0.0 || x == -1.0 / 0.0) return 0;
  return (uint32_t)(int64_t)x;  // (truncates toward zero; |x| < 2^63 here)
}

static void divide(int is_signed) {  // SIO.updateHardwareDivider
  if (DIV_DIVISOR == 0) {
    DIV_QUOTIENT = DIV_DIVIDEND > 0 ? -1 : 1;
    DIV_REMAINDER = DIV_DIVIDEND;
  } else if (is_signed) {
    int32_t a = (int32_t)to_u32(DIV_DIVIDEND), b = (int32_t)to_u32(DIV_DIVISOR);
    DIV_QUOTIENT = (double)a / (double)b;
    if (b == 0) {  // (a divisor that is 0 only as an int32: JavaScript's x % 0)
      DIV_REMAINDER = 0.0 / 0.0;
    } else {
      int64_t r = (int64_t)a % (int64_t)b;
      DIV_REMAINDER = r == 0 && a < 0 ? -0.0 : (double)r;  // (JavaScript's % keeps -0)
    }
  } else {
    uint32_t a = to_u32(DIV_DIVIDEND), b = to_u32(DIV_DIVISOR);
    DIV_QUOTIENT = (double)a / (double)b;
    DIV_REMAINDER = b ? (double)(a % b) : 0.0 / 0.0;
  }
  DIV_CSR = 3;
  EXTRA_CYCLES += 8;  // (rp2040js adds them to core.cycles, not to the instruction)
}

#define SIO_DIV 0xd0000060u       // UDIVIDEND .. CSR (0x78)
#define SIO_SPINLOCK 0xd0000100u  // SPINLOCK0 .. SPINLOCK31
#define TIMERAWH 0x40054024u
#define TIMERAWL 0x40054028u

// A word read from one of these, or -1.
static int64_t io_rd32(uint32_t u) {
  if (u - SIO_DIV <= 0x18) {
    switch (u - SIO_DIV) {
      case 0x00: case 0x08: return to_u32(DIV_DIVIDEND);
      case 0x04: case 0x0c: return to_u32(DIV_DIVISOR);
      case 0x10: DIV_CSR &= ~2; return to_u32(DIV_QUOTIENT);
      case 0x14: return to_u32(DIV_REMAINDER);
      default: return (uint32_t)DIV_CSR;
    }
  }
  if (u - SIO_SPINLOCK <= 0x7c) {
    int32_t bit = (int32_t)(1u << ((u - SIO_SPINLOCK) >> 2));
    if (SPINLOCKS & bit) return 0;
    SPINLOCKS |= bit;
    return (uint32_t)bit;
  }
  if (u == TIMERAWL || u == TIMERAWH) {
    double time = (NANOS0 + (double)before * NS_PER_CYCLE) / 1000;  // clock.nanos / 1000
    if (u == TIMERAWL) return to_u32(time);
    return to_u32(time / 4294967296.0);  // Math.floor (time >= 0)
  }
  return -1;
}

// A word written to one of these: 1, else 0.
static int io_wr32(uint32_t u, uint32_t v) {
  if (u - SIO_DIV <= 0x14) {
    switch (u - SIO_DIV) {
      case 0x00: DIV_DIVIDEND = v; divide(0); break;
      case 0x08: DIV_DIVIDEND = v; divide(1); break;
      case 0x04: DIV_DIVISOR = v; divide(0); break;
      case 0x0c: DIV_DIVISOR = v; divide(1); break;
      case 0x10: DIV_QUOTIENT = v; DIV_CSR = 3; break;
      default: DIV_REMAINDER = v; DIV_CSR = 3; break;
    }
    return 1;
  }
  if (u - SIO_SPINLOCK <= 0x7c) {
    SPINLOCKS &= ~(int32_t)(1u << ((u - SIO_SPINLOCK) >> 2));
    return 1;
  }
  return 0;
}

// ---- memory: rp2040js's RP2040 methods, their SRAM/flash/bootrom paths inline -----------
// a: the address as rp2040js's body computed it (a double there: int64 here).
// (rp2040.readUint32 and writeUint32 take the address >>> 0 first: a base plus a negative
// offset in a register, a sum past 2^32 there, is the address below it. SIO's CPUID, a
// constant 0 in rp2040js (one core), is read by every MP_STATE_THREAD of MicroPython's
// threaded rp2 port: answered here, it does not end the batch.)
#define SIO_CPUID SIO_START
static uint32_t rd32(int64_t a) {
  uint32_t u = (uint32_t)a;
  if (!(u & 3)) {
    if (u - RAM_START < SRAM_SIZE - 3) return ld32(SRAM + (u - RAM_START));  // (the commonest)
    if (u < BOOTROM_SIZE) return bootrom[u >> 2];
    if (u >= FLASH_START && u < FLASH_END) {
      uint32_t off = u & 0xffffff;
      if (off + 3 < FLASH_SIZE) return ld32(FLASH + off);
    } else if (u == SIO_CPUID) {
      return 0;
    } else {
      int64_t v = io_rd32(u);
      if (v >= 0) return (uint32_t)v;
    }
  }
  io = 1;
  return js_r32((double)a, before);
}

static uint32_t rd16(int64_t a) {
  if (a >= RAM_START && a + 1 < RAM_START + SRAM_SIZE) return ld16(SRAM + (a - RAM_START));
  if (a >= FLASH_START && a + 1 < FLASH_START + FLASH_SIZE) return ld16(FLASH + (a - FLASH_START));
  io = 1;
  return js_r16((double)a, before);
}

static uint32_t rd8(int64_t a) {
  if (a >= RAM_START && a < RAM_START + SRAM_SIZE) return SRAM[a - RAM_START];
  if (a >= FLASH_START && a < FLASH_START + FLASH_SIZE) return FLASH[a - FLASH_START];
  io = 1;
  return js_r8((double)a, before);
}

// Stores: rp2040js looks a peripheral up first; none is mapped over SRAM (wasmcore.mjs
// checks at start), so an aligned SRAM word goes straight in, as fastcore.mjs does.
static void wr32(int64_t a, uint32_t v) {
  uint32_t u = (uint32_t)a;
  if (u >= RAM_START && u + 3 < RAM_START + SRAM_SIZE && !(u & 3)) {
    st32(SRAM + (u - RAM_START), v);
    return;
  }
  if (!(u & 3) && io_wr32(u, v)) return;
  io = 1;
  js_w32((double)a, (double)v, before);
}

static void wr16(int64_t a, uint32_t v) {
  if (a >= RAM_START && a + 1 < RAM_START + SRAM_SIZE) {
    st16(SRAM + (a - RAM_START), v);
    return;
  }
  io = 1;
  js_w16((double)a, (double)v, before);
}

static void wr8(int64_t a, uint32_t v) {
  if (a >= RAM_START && a < RAM_START + SRAM_SIZE) {
    SRAM[a - RAM_START] = (uint8_t)v;
    return;
  }
  io = 1;
  js_w8((double)a, (double)v, before);
}

// The instruction fetch (rp2040.readUint16 of PC & ~1): flash, SRAM or the bootrom here;
// anything else: -1 (left to the JavaScript core).
static int32_t fetch(uint32_t a) {
  if (a >= FLASH_START && a + 1 < FLASH_START + FLASH_SIZE) return (int32_t)ld16(FLASH + (a - FLASH_START));
  if (a >= RAM_START && a + 1 < RAM_START + SRAM_SIZE) return (int32_t)ld16(SRAM + (a - RAM_START));
  if (a < BOOTROM_SIZE) {
    uint32_t w = bootrom[a >> 2];
    return (int32_t)(a & 2 ? w >> 16 : w & 0xffff);
  }
  return -1;
}

// rp2040js's CortexM0Core.cyclesIO (addr >>> 0 first).
static inline uint32_t cycles_io(int64_t a, int write) {
  uint32_t u = (uint32_t)a;
  if (u >= SIO_START && u < SIO_START + 0x10000000u) return 0;
  if (u >= APB_START && u < APB_START + 0x10000000u) return write ? 4 : 3;
  return 1;
}

// ---- flags: substractUpdateFlags / addUpdateFlags on JavaScript numbers -------------------
static inline int32_t i32(int64_t x) { return (int32_t)(uint32_t)x; }  // ToInt32

static int64_t sub_flags(int64_t m, int64_t s) {
  int64_t r = m - s;
  uint32_t rb = (uint32_t)r >> 31, mb = (uint32_t)m >> 31, sb = (uint32_t)s >> 31;
  uint32_t v = (rb && !mb && sb) || (!rb && mb && !sb);
  *(uint32_t *)flags = rb | (uint32_t)((uint32_t)r == 0) << 8 | (uint32_t)(m >= s) << 16 | v << 24;
  return r;
}

static int64_t add_flags(int64_t a, int64_t b) {
  int64_t r = a + b;
  uint32_t u = (uint32_t)r;
  int64_t signed_sum = (int64_t)i32(a) + (int64_t)i32(b);
  *(uint32_t *)flags = (u >> 31) | (uint32_t)(u == 0) << 8 | (uint32_t)(r != (int64_t)u) << 16
                      | (uint32_t)((int64_t)i32(r) != signed_sum) << 24;
  return r;
}

static inline void nz(uint32_t r) {
  *(uint16_t *)flags = (uint16_t)((r >> 31) | (uint32_t)(r == 0) << 8);
}

static int cond_ok(uint32_t cond) {
  int N = flags[0], Z = flags[1], C = flags[2], V = flags[3], r = 0;
  switch (cond >> 1) {
    case 0: r = Z; break;
    case 1: r = C; break;
    case 2: r = N; break;
    case 3: r = V; break;
    case 4: r = C && !Z; break;
    case 5: r = N == V; break;
    case 6: r = N == V && !Z; break;
    case 7: r = 1; break;
  }
  return (cond & 1) && cond != 15 ? !r : r;
}

#define SP regs[13]
#define LR regs[14]
#define PC regs[15]
static inline void set_sp(int64_t v) { SP = (uint32_t)(i32(v) & ~3); }

// One instruction at PC. Returns its cycles, or 0 where the JavaScript core must run it
// (nothing has been changed then).
static uint32_t step(int handler) {
  uint32_t opc_pc = PC & ~1u;
  int32_t f = fetch(opc_pc);
  if (f < 0) return 0;
  uint32_t op = (uint32_t)f, op2 = 0;
  if (op >> 12 == 0xf || op >> 11 == 0x1d) {
    f = fetch(opc_pc + 2);  // (rp2040js reads it at PC & ~1 + 2 as a number)
    if (f < 0) return 0;
    op2 = (uint32_t)f;
  }
  uint32_t dc = 1;
  uint32_t *R = regs;
  uint32_t top = op >> 11;
  // Exits to JavaScript before anything changes.
  switch (op >> 8) {
    case 0x47:  // BX in handler mode to an EXC_RETURN value: exceptionReturn
      if (!(op & 0x80) && handler && (op & 7) == 0 && R[(op >> 3) & 0xf] >> 28 == 0xf) return 0;
      break;
    case 0xbd:  // POP {.., pc} in handler mode: peek the value BXWritePC will get
      if (handler) {
        int64_t a = SP;
        for (int i = 0; i < 8; i++) if (op & (1u << i)) a += 4;
        if (a > 0xffffffffLL || (a & 3)) return 0;
        uint32_t u = (uint32_t)a;
        if (!(u >= RAM_START && u + 3 < RAM_START + SRAM_SIZE)) return 0;
        if (ld32(SRAM + (u - RAM_START)) >> 28 == 0xf) return 0;
      }
      break;
    case 0xb6:
      if (op != 0xb672 && op != 0xb662) return 0;  // (CPSID i / CPSIE i run here)
      break;
    case 0xbe: case 0xbf: case 0xde: case 0xdf:
      if (op != 0xbf00) return 0;  // BKPT, hints (NOP runs here), UDF, SVC
      break;
  }
  PC = PC + 2;
  io = 0;
  switch (top) {  // (op >> 11: a jump table, not a chain of tests)
    case 0: case 1: case 2: {  // LSLS / LSRS / ASRS (immediate)
      uint32_t imm5 = (op >> 6) & 0x1f, in = R[(op >> 3) & 7];
      uint32_t rd = op & 7, r;
      if (top == 0) {
        r = in << imm5;
        if (imm5) flags[2] = (in >> (32 - imm5)) & 1;
      } else if (top == 1) {
        r = imm5 ? in >> imm5 : 0;
        flags[2] = (in >> (imm5 ? imm5 - 1 : 31)) & 1;
      } else {
        uint32_t n = imm5 ? imm5 : 32;
        r = n < 32 ? (uint32_t)((int32_t)in >> n) : (uint32_t)((int32_t)in >> 31);
        flags[2] = (in >> ((n - 1) & 31)) & 1;
      }
      R[rd] = r;
      nz(r);
      break;
    }
    case 3: {  // ADDS/SUBS register and 3-bit immediate
      uint32_t rn = R[(op >> 3) & 7], rd = op & 7, x = (op >> 6) & 7;
      switch ((op >> 9) & 3) {
        case 0: R[rd] = (uint32_t)add_flags(rn, R[x]); break;
        case 1: R[rd] = (uint32_t)sub_flags(rn, R[x]); break;
        case 2: R[rd] = (uint32_t)add_flags(rn, x); break;
        default: R[rd] = (uint32_t)sub_flags(rn, x); break;
      }
      break;
    }
    case 4: case 5: case 6: case 7: {  // MOVS / CMP / ADDS / SUBS with an 8-bit immediate
      uint32_t rdn = (op >> 8) & 7, imm8 = op & 0xff;
      switch (top) {
        case 4: R[rdn] = imm8; flags[0] = 0; flags[1] = imm8 == 0; break;
        case 5: sub_flags(R[rdn], imm8); break;
        case 6: R[rdn] = (uint32_t)add_flags(R[rdn], imm8); break;
        default: R[rdn] = (uint32_t)sub_flags(R[rdn], imm8); break;
      }
      break;
    }
    case 8: {
      if (op >> 10 == 0x10) {  // data processing, low registers
        uint32_t rm = (op >> 3) & 7, rdn = op & 7, a = R[rdn], b = R[rm], r;
        switch ((op >> 6) & 0xf) {
          case 0x0: r = a & b; R[rdn] = r; nz(r); break;  // ANDS
          case 0x1: r = a ^ b; R[rdn] = r; nz(r); break;  // EORS
          case 0x2: {  // LSLS (register)
            uint32_t n = b & 0xff;
            r = n >= 32 ? 0 : a << n;
            R[rdn] = r; nz(r);
            if (n) flags[2] = (a >> ((32 - n) & 31)) & 1;
            break;
          }
          case 0x3: {  // LSRS (register)
            uint32_t n = b & 0xff;
            r = n < 32 ? a >> n : 0;
            R[rdn] = r; nz(r);
            flags[2] = n <= 32 ? (a >> ((n - 1) & 31)) & 1 : 0;
            break;
          }
          case 0x4: {  // ASRS (register)
            uint32_t n = (b & 0xff) < 32 ? b & 0xff : 32;
            r = n < 32 ? (uint32_t)((int32_t)a >> n) : (uint32_t)((int32_t)a >> 31);
            R[rdn] = r; nz(r);
            flags[2] = (a >> ((n - 1) & 31)) & 1;
            break;
          }
          case 0x5: R[rdn] = (uint32_t)add_flags(b, (int64_t)a + flags[2]); break;  // ADCS
          case 0x6: R[rdn] = (uint32_t)sub_flags(a, (int64_t)b + (1 - flags[2])); break;  // SBCS
          case 0x7: {  // ROR
            uint32_t n = (b & 0xff) % 32;
            r = (a >> n) | (a << ((32 - n) & 31));
            R[rdn] = r; nz(r); flags[2] = r >> 31;
            break;
          }
          case 0x8: nz(a & b); break;  // TST (Rn is the low field)
          case 0x9: R[rdn] = (uint32_t)sub_flags(0, b); break;  // RSBS
          case 0xa: sub_flags(a, b); break;  // CMP
          case 0xb: add_flags(a, b); break;  // CMN
          case 0xc: r = a | b; R[rdn] = r; nz(r); break;  // ORRS
          case 0xd: r = a * b; R[rdn] = r; nz(r); break;  // MULS (Math.imul)
          case 0xe: r = a & ~b; R[rdn] = r; nz(r); break;  // BICS
          default: r = ~b; R[rdn] = r; nz(r); break;  // MVNS
        }
      } else if (op >> 8 == 0x44) {  // ADD (register), high registers
        uint32_t rm = (op >> 3) & 0xf, rdn = ((op & 0x80) >> 4) | (op & 7);
        int64_t l = rdn == 15 ? (int64_t)PC + 2 : R[rdn];
        int64_t r = rm == 15 ? (int64_t)PC + 2 : R[rm];
        int64_t s = l + r;
        if (rdn == 15) { PC = (uint32_t)(i32(s) & ~1); dc++; }
        else if (rdn == 13) SP = (uint32_t)(i32(s) & ~3);
        else R[rdn] = (uint32_t)s;
      } else if (op >> 8 == 0x45) {  // CMP (register), high registers
        sub_flags(R[((op >> 4) & 8) | (op & 7)], R[(op >> 3) & 0xf]);
      } else if (op >> 8 == 0x46) {  // MOV (register)
        uint32_t rm = (op >> 3) & 0xf, rd = ((op >> 4) & 8) | (op & 7);
        int64_t v = rm == 15 ? (int64_t)PC + 2 : R[rm];
        if (rd == 15) { dc++; v = i32(v) & ~1; }
        else if (rd == 13) v = i32(v) & ~3;
        R[rd] = (uint32_t)v;
      } else {  // BX / BLX (0x47)
        if (op & 7) { PC -= 2; return 0; }  // (no such encoding: JavaScript's warning)
        uint32_t rm = (op >> 3) & 0xf;
        if (op & 0x80) {
          LR = PC | 1;
          PC = R[rm] & ~1u;
        } else {
          PC = R[rm] & ~1u;  // BXWritePC, thread mode or not an EXC_RETURN (checked above)
        }
        dc++;
      }
      break;
    }
    case 9: {  // LDR (literal)
      int64_t a = (int64_t)(i32((int64_t)PC + 2) & (int32_t)0xfffffffc) + ((op & 0xff) << 2);
      dc += cycles_io(a, 0);
      R[(op >> 8) & 7] = rd32(a);
      break;
    }
    case 10: case 11: {  // load/store (register offset)
      int64_t a = (int64_t)R[(op >> 6) & 7] + R[(op >> 3) & 7];
      uint32_t rt = op & 7;
      uint32_t kind = (op >> 9) & 7;
      dc += cycles_io(a, kind < 3);
      switch (kind) {
        case 0: wr32(a, R[rt]); break;                          // STR
        case 1: wr16(a, R[rt]); break;                          // STRH
        case 2: wr8(a, R[rt]); break;                           // STRB
        case 3: R[rt] = (uint32_t)(int32_t)(int8_t)rd8(a); break;    // LDRSB
        case 4: R[rt] = rd32(a); break;                         // LDR
        case 5: R[rt] = rd16(a); break;                         // LDRH
        case 6: R[rt] = rd8(a); break;                          // LDRB
        default: R[rt] = (uint32_t)(int32_t)(int16_t)rd16(a); break; // LDRSH
      }
      break;
    }
    case 12: case 13: case 14: case 15: case 16: case 17: {  // load/store (immediate offset)
      uint32_t imm5 = (op >> 6) & 0x1f, rt = op & 7;
      int64_t base = R[(op >> 3) & 7];
      switch (top) {
        case 0xc: { int64_t a = base + (imm5 << 2); dc += cycles_io(a, 1); wr32(a, R[rt]); break; }
        case 0xd: { int64_t a = base + (imm5 << 2); dc += cycles_io(a, 0); R[rt] = rd32(a); break; }
        case 0xe: { int64_t a = base + imm5; dc += cycles_io(a, 1); wr8(a, R[rt]); break; }
        case 0xf: { int64_t a = base + imm5; dc += cycles_io(a, 0); R[rt] = rd8(a); break; }
        case 0x10: { int64_t a = base + (imm5 << 1); dc += cycles_io(a, 1); wr16(a, R[rt]); break; }
        default: { int64_t a = base + (imm5 << 1); dc += cycles_io(a, 0); R[rt] = rd16(a); break; }
      }
      break;
    }
    case 18: case 19: {  // STR / LDR (SP plus immediate)
      uint32_t rt = (op >> 8) & 7;
      int64_t a = (int64_t)SP + ((op & 0xff) << 2);
      if (top == 0x12) { dc += cycles_io(a, 1); wr32(a, R[rt]); }
      else { dc += cycles_io(a, 0); R[rt] = rd32(a); }
      break;
    }
    case 20: {  // ADR
      R[(op >> 8) & 7] = (uint32_t)((int64_t)(int32_t)(opc_pc & 0xfffffffc) + 4 + ((op & 0xff) << 2));
      break;
    }
    case 21: {  // ADD (Rd = SP plus immediate)
      R[(op >> 8) & 7] = (uint32_t)((int64_t)SP + ((op & 0xff) << 2));
      break;
    }
    case 22: case 23: {  // miscellaneous
      if (op >> 7 == 0x160) set_sp((int64_t)SP + ((op & 0x7f) << 2));        // ADD SP, #imm
      else if (op >> 7 == 0x161) set_sp((int64_t)SP - ((op & 0x7f) << 2));   // SUB SP, #imm
      else if (op >> 6 == 0x2c8) R[op & 7] = (uint32_t)(int32_t)(int16_t)R[(op >> 3) & 7];  // SXTH
      else if (op >> 6 == 0x2c9) R[op & 7] = (uint32_t)(int32_t)(int8_t)R[(op >> 3) & 7];   // SXTB
      else if (op >> 6 == 0x2ca) R[op & 7] = R[(op >> 3) & 7] & 0xffff;  // UXTH
      else if (op >> 6 == 0x2cb) R[op & 7] = R[(op >> 3) & 7] & 0xff;    // UXTB
      else if (op >> 9 == 0x5a) {  // PUSH
        uint32_t n = 0;
        for (int i = 0; i <= 8; i++) if (op & (1u << i)) n++;
        int64_t a = (int64_t)SP - 4 * n;
        for (int i = 0; i <= 7; i++) {
          if (op & (1u << i)) { wr32(a, R[i]); dc++; a += 4; }
        }
        if (op & 0x100) wr32(a, LR);
        set_sp((int64_t)SP - 4 * n);
      } else if (op >> 6 == 0x2e8) {  // REV
        uint32_t in = R[(op >> 3) & 7];
        R[op & 7] = (in << 24) | (((in >> 8) & 0xff) << 16) | (((in >> 16) & 0xff) << 8) | (in >> 24);
      } else if (op >> 6 == 0x2e9) {  // REV16
        uint32_t in = R[(op >> 3) & 7];
        R[op & 7] = (((in >> 16) & 0xff) << 24) | ((in >> 24) << 16) | ((in & 0xff) << 8) | ((in >> 8) & 0xff);
      } else if (op >> 6 == 0x2eb) {  // REVSH
        uint32_t in = R[(op >> 3) & 7];
        R[op & 7] = (uint32_t)(int32_t)(int16_t)(((in & 0xff) << 8) | ((in >> 8) & 0xff));
      } else if (op >> 9 == 0x5e) {  // POP
        int64_t a = SP;
        for (int i = 0; i <= 7; i++) {
          if (op & (1u << i)) { R[i] = rd32(a); a += 4; dc++; }
        }
        if (op & 0x100) {
          set_sp(a + 4);
          PC = rd32(a) & ~1u;  // BXWritePC (an EXC_RETURN in handler mode left above)
          dc += 2;
        } else {
          set_sp(a);
        }
      } else if (op == 0xbf00) {  // NOP
      } else if (op == 0xb672) {  // CPSID i
        flags[4] = 1;
      } else if (op == 0xb662) {  // CPSIE i: rp2040js looks for interrupts next
        flags[4] = 0;
        flags[5] = 1;
      } else {
        PC -= 2;
        return 0;
      }
      break;
    }
    case 24: case 25: {  // STMIA / LDMIA
      uint32_t rn = (op >> 8) & 7, list = op & 0xff;
      int64_t a = R[rn];
      for (int i = 0; i < 8; i++) {
        if (list & (1u << i)) {
          if (top == 0x18) wr32(a, R[i]); else R[i] = rd32(a);
          a += 4;
          dc++;
        }
      }
      if (!(list & (1u << rn))) R[rn] = (uint32_t)a;
      break;
    }
    case 26: case 27: {  // B (conditional); UDF and SVC left above
      int32_t imm8 = (op & 0xff) << 1;
      if (imm8 & 0x100) imm8 = (imm8 & 0x1ff) - 0x200;
      if (cond_ok((op >> 8) & 0xf)) { PC = (uint32_t)((int64_t)PC + imm8 + 2); dc++; }
      break;
    }
    case 28: {  // B
      int32_t imm11 = (op & 0x7ff) << 1;
      if (imm11 & 0x800) imm11 = (imm11 & 0x7ff) - 0x800;
      PC = (uint32_t)((int64_t)PC + imm11 + 2);
      dc++;
      break;
    }
    case 30: {
      if (op2 >> 14 == 3 && ((op2 >> 12) & 1)) {  // BL
        uint32_t imm11 = op2 & 0x7ff, j2 = (op2 >> 11) & 1, j1 = (op2 >> 13) & 1;
        uint32_t imm10 = op & 0x3ff, s = (op >> 10) & 1;
        uint32_t i1 = 1 - (s ^ j1), i2 = 1 - (s ^ j2);
        int32_t imm32 = (int32_t)(((s ? 0xffu : 0) << 24) | (i1 << 23) | (i2 << 22) | (imm10 << 12) | (imm11 << 1));
        LR = (uint32_t)(i32((int64_t)PC + 2) | 1);
        PC = (uint32_t)((int64_t)PC + 2 + imm32);
        dc += 2;
      } else if (op == 0xf3bf && ((op2 & 0xfff0) == 0x8f50 || (op2 & 0xfff0) == 0x8f40
                                  || (op2 & 0xfff0) == 0x8f60)) {  // DMB / DSB / ISB
        PC = PC + 2;
        dc += 2;
      } else if (op == 0xf3ef && op2 >> 12 == 8 && ((op2 & 0xff) == 16 || (op2 & 0xff) == 0)) {
        // MRS of PRIMASK or APSR (readSpecialRegister)
        R[(op2 >> 8) & 0xf] = (op2 & 0xff) == 16 ? flags[4]
          : ((uint32_t)flags[0] << 31) | ((uint32_t)flags[1] << 30) | ((uint32_t)flags[2] << 29) | ((uint32_t)flags[3] << 28);
        PC = PC + 2;
        dc += 2;
      } else if (op >> 4 == 0xf38 && op2 >> 8 == 0x88 && ((op2 & 0xff) == 16 || (op2 & 0xff) == 0)) {
        // MSR of PRIMASK (rp2040js then looks for interrupts) or APSR (writeSpecialRegister)
        uint32_t v = R[op & 0xf];
        if ((op2 & 0xff) == 16) {
          flags[4] = v & 1;
          flags[5] = 1;
        } else {
          flags[0] = v >> 31; flags[1] = (v >> 30) & 1; flags[2] = (v >> 29) & 1; flags[3] = (v >> 28) & 1;
        }
        PC = PC + 2;
        dc += 2;
      } else {
        PC -= 2;  // (as it was: other MRS/MSR, UDF.W, unknown encodings)
        return 0;
      }
      break;
    }
    default:  // 0xe800-0xefff, 0xf800-0xffff: no ARMv6-M instruction
      PC -= 2;
      return 0;
  }
  return dc;
}

// Runs instructions until `limit` cycles have passed (the clock's next alarm), `max`
// instructions ran, one went through rp2040js's memory methods (STOP_IO: the JavaScript
// side looks at interrupts, alarms and the flash before the next), or the next must run
// on the JavaScript core (STOP_JS). Returns the cycles run; executed() the instructions.
EXPORT("run") uint32_t run(uint32_t limit, uint32_t max, uint32_t handler) {
  uint32_t cycles = 0, n = 0;
  stop = STOP_LIMIT;
  while (cycles < limit && n < max) {
    before = cycles;
    uint32_t dc = step(handler);
    if (!dc) { stop = STOP_JS; break; }
    cycles += dc;
    n++;
    if (io || flags[5]) { stop = STOP_IO; break; }
  }
  executed = n;
  return cycles;
}
