// USB serial input for the table's loop, in C: MicroPython's tud_cdc_rx_cb
// (shared/tinyusb/mp_usbd_cdc.c) moves TinyUSB's receive FIFO into the stdin ring one
// tud_cdc_read_char() at a time, and Python sees the ring only through a blocking read.
// Issue 29 item 9: a 1 MB junk line took 65.5 s of chip time byte by byte in Python, and
// 11.0 s when boards/pico.py dropped it from the ring found by scanning RAM (the stock
// image's only way in): a Python pass, two find()s over the ring and a share of a
// collection per 64-byte USB packet, plus the per-char receive loop (docs/bench.md).
//
// This file gives the pitboss image:
//  - tud_cdc_rx_cb: while Ctrl-C is an ordinary byte (mp_interrupt_char < 0, the table's
//    loop runs with micropython.kbd_intr(-1)), whole runs are copied into the ring with
//    tud_cdc_n_read; while a refused line is being dropped (pitboss_cdc.discard() armed
//    it) its bytes are read and thrown away here, up to its CR or LF, so the rest of a
//    junk line costs no Python at all. At the REPL (Ctrl-C armed) every byte goes through
//    MicroPython's loop as before. MicroPython's function (renamed tud_cdc_rx_cb_mp by
//    mpconfigboard.h) always runs last: it takes what did not fit and keeps its "ring
//    full, poll later" flag, so the flow control is the port's own.
//  - the module pitboss_cdc: any() (bytes waiting in the ring) and discard() (drop a
//    refused line's rest), used by boards/pico.py stdin().
// The receive callback and these functions all run on the VM's thread (TinyUSB's task is
// a scheduled callback or is run by the stdin poll), so they never interleave.

#include <stdbool.h>
#include <stdint.h>

#include "py/runtime.h"
#include "py/ringbuf.h"
#include "shared/runtime/interrupt_char.h"

// TinyUSB's (class/cdc/cdc_device.h) and MicroPython's renamed callback, declared here:
// MicroPython's qstr scan of user C modules runs without TinyUSB's include paths.
uint32_t tud_cdc_n_available(uint8_t itf);
uint32_t tud_cdc_n_read(uint8_t itf, void *buffer, uint32_t bufsize);
void tud_cdc_rx_cb_mp(uint8_t itf);

extern ringbuf_t stdin_ringbuf;

// A refused line's rest is being dropped as it arrives (discard() found no end in the
// ring and emptied it).
static bool dropping;

static inline bool line_end(uint8_t c) {
    return c == '\n' || c == '\r';
}

// Contiguous free bytes at iput (one slot stays empty: iget == iput means empty).
static uint32_t ring_room(void) {
    uint32_t get = stdin_ringbuf.iget, put = stdin_ringbuf.iput;
    return get > put ? get - put - 1 : stdin_ringbuf.size - put - (get == 0);
}

// Read and drop what waits up to a line end; the end and what follows it go into the
// (empty) ring. Returns false while the line goes on.
static bool drop_rest(uint8_t itf) {
    // The ring is empty while dropping: start it at 0 so a whole ring is one run.
    stdin_ringbuf.iget = stdin_ringbuf.iput = 0;
    uint8_t *buf = stdin_ringbuf.buf;
    uint32_t room = stdin_ringbuf.size - 1;
    for (;;) {
        uint32_t n = tud_cdc_n_available(itf);
        if (n == 0) {
            return false;
        }
        n = tud_cdc_n_read(itf, buf, n < room ? n : room);
        for (uint32_t i = 0; i < n; ++i) {
            if (line_end(buf[i])) {
                stdin_ringbuf.iget = i;
                stdin_ringbuf.iput = n;  // n < size
                return true;
            }
        }
        if (n == 0) {
            return false;
        }
    }
}

void tud_cdc_rx_cb(uint8_t itf) {
    if (mp_interrupt_char < 0) {
        if (dropping) {
            if (!drop_rest(itf)) {
                tud_cdc_rx_cb_mp(itf);  // nothing left for it: clears its pending flag
                return;
            }
            dropping = false;
        }
        // At most two runs: up to the end of the ring's array, then from its start.
        for (int run = 0; run < 2; ++run) {
            uint32_t avail = tud_cdc_n_available(itf);
            uint32_t room = ring_room();
            if (avail == 0 || room == 0) {
                break;
            }
            uint32_t put = stdin_ringbuf.iput;
            uint32_t n = tud_cdc_n_read(itf, stdin_ringbuf.buf + put, avail < room ? avail : room);
            put += n;
            stdin_ringbuf.iput = put >= stdin_ringbuf.size ? 0 : put;
            if (n < room) {
                break;
            }
        }
    } else {
        dropping = false;  // at the REPL every byte is MicroPython's again
    }
    tud_cdc_rx_cb_mp(itf);
}

// pitboss_cdc.any() -> bytes waiting in the USB input ring.
static mp_obj_t pitboss_cdc_any(void) {
    return MP_OBJ_NEW_SMALL_INT(ringbuf_avail(&stdin_ringbuf));
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_cdc_any_obj, pitboss_cdc_any);

// pitboss_cdc.discard() -> bytes of a refused line's rest dropped from the ring, up to
// (not including) its CR or LF. When the ring holds no end, it is emptied and the rest
// is dropped as it arrives (tud_cdc_rx_cb) until the end comes, so the caller reads the
// end itself next. Only while Ctrl-C is an ordinary byte; otherwise only the ring.
static mp_obj_t pitboss_cdc_discard(void) {
    ringbuf_t *r = &stdin_ringbuf;
    mp_int_t n = 0;
    while (r->iget != r->iput) {
        if (line_end(r->buf[r->iget])) {
            return MP_OBJ_NEW_SMALL_INT(n);
        }
        r->iget = r->iget + 1 == r->size ? 0 : r->iget + 1;
        ++n;
    }
    if (mp_interrupt_char < 0) {
        dropping = true;
    }
    return MP_OBJ_NEW_SMALL_INT(n);
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_cdc_discard_obj, pitboss_cdc_discard);

static const mp_rom_map_elem_t pitboss_cdc_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_pitboss_cdc) },
    { MP_ROM_QSTR(MP_QSTR_any), MP_ROM_PTR(&pitboss_cdc_any_obj) },
    { MP_ROM_QSTR(MP_QSTR_discard), MP_ROM_PTR(&pitboss_cdc_discard_obj) },
};
static MP_DEFINE_CONST_DICT(pitboss_cdc_globals, pitboss_cdc_globals_table);

const mp_obj_module_t pitboss_cdc_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&pitboss_cdc_globals,
};

MP_REGISTER_MODULE(MP_QSTR_pitboss_cdc, pitboss_cdc_module);
