// The free heap in C, for the table loop's low-water mark (pitboss.loop: App.note_mem after
// every line and card). gc.mem_free() is gc_info(), which walks every block of the heap
// one at a time to also find the largest free run and count 1- and 2-block objects: ~8 ms
// of chip time on the emulated Pico's 246 KB heap, 16-22% of a protocol line's profile
// (docs/bench.md, "Where the chip's cycles go"). Only the free count is needed here, and
// the allocation table gives it 32 bits (16 blocks) at a time: a word that is all zero is
// 16 free blocks, others are counted two bits per block.
// The module pitboss_heap: free(), the same number as gc.mem_free(); since(), the bytes
// allocated since the last collection; alloc(), the same number as gc.mem_alloc();
// max_block(), the longest run of free blocks in bytes; started(), ticks_ms() when this
// run of MicroPython began.
// It runs on the VM's thread like every other Python call, and reads the table as
// gc_info() does (no lock is taken there either without threads in the table's firmware).

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "py/gc.h"
#include "py/mpstate.h"
#include "py/pystack.h"
#include "py/runtime.h"
#include "py/smallint.h"
#include "hardware/timer.h"

#if MICROPY_GC_SPLIT_HEAP
#define NEXT_AREA(area) ((area)->next)
#else
#define NEXT_AREA(area) (NULL)
#endif

// Free blocks (2-bit AT_FREE fields: 00) in one allocation-table byte.
static inline size_t free_in(uint8_t b) {
    return ((b & 0x03) == 0) + ((b & 0x0c) == 0) + ((b & 0x30) == 0) + ((b & 0xc0) == 0);
}

static mp_obj_t pitboss_heap_free(void) {
    size_t blocks = 0;
    for (mp_state_mem_area_t *area = &MP_STATE_MEM(area); area != NULL; area = NEXT_AREA(area)) {
        const uint8_t *p = area->gc_alloc_table_start;
        size_t n = area->gc_alloc_table_byte_len;
        size_t i = 0;
        for (; i < n && ((uintptr_t)(p + i) & 3); i++) {
            blocks += free_in(p[i]);
        }
        for (; i + 4 <= n; i += 4) {
            uint32_t w;
            memcpy(&w, p + i, 4);  // aligned above: one load
            if (w == 0) {
                blocks += 16;
            } else {
                blocks += free_in(w) + free_in(w >> 8) + free_in(w >> 16) + free_in(w >> 24);
            }
        }
        for (; i < n; i++) {
            blocks += free_in(p[i]);
        }
    }
    return MP_OBJ_NEW_SMALL_INT(blocks * MICROPY_BYTES_PER_GC_BLOCK);
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_free_obj, pitboss_heap_free);

// The heap in use, in bytes: gc.mem_alloc()'s figure (the pool's blocks that are not
// free) without gc_info()'s block-by-block walk (see max_block below).
static mp_obj_t pitboss_heap_alloc(void) {
    size_t pool = 0;
    for (mp_state_mem_area_t *area = &MP_STATE_MEM(area); area != NULL; area = NEXT_AREA(area)) {
        pool += area->gc_pool_end - area->gc_pool_start;
    }
    return MP_OBJ_NEW_SMALL_INT(pool - MP_OBJ_SMALL_INT_VALUE(pitboss_heap_free()));
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_alloc_obj, pitboss_heap_alloc);

// Bytes allocated since the last collection: the collector's own count (it collects
// once this reaches gc.threshold()), so the loop can collect in the gap after a card's
// acknowledgement or a line's reply only when enough garbage may have built up to run a
// collection inside the next card's path, instead of after every card (pitboss.loop).
static mp_obj_t pitboss_heap_since(void) {
    #if MICROPY_GC_ALLOC_THRESHOLD
    return MP_OBJ_NEW_SMALL_INT(MP_STATE_MEM(gc_alloc_amount) * MICROPY_BYTES_PER_GC_BLOCK);
    #else
    return mp_const_none;
    #endif
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_since_obj, pitboss_heap_since);

// The largest single allocation that would succeed now, in bytes: the longest run of free
// blocks (gc_info()'s max_free, which micropython.mem_info() prints as "max free sz").
// `mem` found it by bisecting trial bytearray allocations, a collection at each of ~18
// steps, and took gc.mem_alloc() from gc_info(), a block-by-block walk of the whole heap:
// a `mem` line was 382 ms of busy chip time on the release image, in which the table
// dealt no card; with this and alloc() it is 20 ms (issue 27). Read here from the
// allocation table as free() reads it: a zero word is 16 free blocks.
static mp_obj_t pitboss_heap_max_block(void) {
    size_t best = 0;
    for (mp_state_mem_area_t *area = &MP_STATE_MEM(area); area != NULL; area = NEXT_AREA(area)) {
        const uint8_t *p = area->gc_alloc_table_start;
        size_t n = area->gc_alloc_table_byte_len;
        size_t run = 0;
        for (size_t i = 0; i < n; i++) {
            uint8_t b = p[i];
            if (b == 0 && ((uintptr_t)(p + i) & 3) == 0 && i + 4 <= n) {
                uint32_t w;
                memcpy(&w, p + i, 4);
                if (w == 0) {  // 16 free blocks
                    run += 16;
                    i += 3;
                    continue;
                }
            }
            for (int k = 0; k < 8; k += 2) {  // AT_FREE is 00; a head or a tail ends a run
                if (((b >> k) & 3) == 0) {
                    run++;
                } else {
                    if (run > best) {
                        best = run;
                    }
                    run = 0;
                }
            }
        }
        if (run > best) {
            best = run;
        }
    }
    return MP_OBJ_NEW_SMALL_INT(best * MICROPY_BYTES_PER_GC_BLOCK);
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_max_block_obj, pitboss_heap_max_block);

#if MICROPY_ENABLE_PYSTACK
// The Python stack (mpconfigboard.h: MICROPY_ENABLE_PYSTACK). Without it, every call of a
// Python function whose frame is over 44 bytes (locals, value stack, try blocks: most
// of the firmware's) takes its frame from the GC heap and gives it back on return. Each
// such frame is a first-fit search of the heap (gc_alloc, 12-21% of a protocol line's
// profile on the emulated Pico) and counts toward gc.threshold(), so collections came
// several times more often than the garbage asked for (issue 27: a redraw that kept no
// object "allocated" 1.3 KB, 80 bytes a row). Frames here are pushed and popped in
// order, and the collector scans the part in use (py/gc.c).
// Filled with a pattern at each (soft) reset, so pystack() can tell how deep it ever got.
#define PYSTACK_WORDS (PITBOSS_PYSTACK_BYTES / sizeof(mp_obj_t))
#define PYSTACK_UNTOUCHED ((mp_obj_t)(uintptr_t)0xA5A5A5A5)
static mp_obj_t pitboss_pystack[PYSTACK_WORDS];

// MICROPY_BOARD_EARLY_INIT and MICROPY_BOARD_START_SOFT_RESET: before the runtime first
// starts, and before it starts again after a soft reset.
void pitboss_pystack_init(void) {
    for (size_t i = 0; i < PYSTACK_WORDS; i++) {
        pitboss_pystack[i] = PYSTACK_UNTOUCHED;
    }
    mp_pystack_init(pitboss_pystack, &pitboss_pystack[PYSTACK_WORDS]);
}

// pystack() -> (bytes in use now, the most ever in use since reset, its size).
static mp_obj_t pitboss_heap_pystack(void) {
    size_t top = PYSTACK_WORDS;
    while (top > 0 && pitboss_pystack[top - 1] == PYSTACK_UNTOUCHED) {
        top--;
    }
    mp_obj_t t[3] = {
        MP_OBJ_NEW_SMALL_INT(mp_pystack_usage()),
        MP_OBJ_NEW_SMALL_INT(top * sizeof(mp_obj_t)),
        MP_OBJ_NEW_SMALL_INT(PYSTACK_WORDS * sizeof(mp_obj_t)),
    };
    return mp_obj_new_tuple(3, t);
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_pystack_obj, pitboss_heap_pystack);
#endif

// When this run of MicroPython began, in the chip's microseconds: 0 after a power-on or
// any hardware reset (the timer starts with the chip and .bss is zeroed), the soft reset's
// time after one. ticks_ms() counts from the power-on, so without it a boot's figures
// after a soft reset (`pitboss reset`, the end of `pitboss flash`) took in the time the
// board had been up before it: "imported" 18 s for an import of half a second.
static uint64_t pitboss_started_us;

// MICROPY_BOARD_START_SOFT_RESET: right after "MPY: soft reboot" (ports/rp2/main.c).
void pitboss_soft_reset(void) {
    pitboss_started_us = time_us_64();
    #if MICROPY_ENABLE_PYSTACK
    pitboss_pystack_init();
    #endif
}

// started() -> ticks_ms() when this run began (0 after a hardware reset), in ticks_ms()'s
// own range, so ticks_diff(ticks_ms(), started()) is the time since.
static mp_obj_t pitboss_heap_started(void) {
    return MP_OBJ_NEW_SMALL_INT(
        (mp_uint_t)(pitboss_started_us / 1000) & (MICROPY_PY_TIME_TICKS_PERIOD - 1));
}
static MP_DEFINE_CONST_FUN_OBJ_0(pitboss_heap_started_obj, pitboss_heap_started);

static const mp_rom_map_elem_t pitboss_heap_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_pitboss_heap) },
    { MP_ROM_QSTR(MP_QSTR_free), MP_ROM_PTR(&pitboss_heap_free_obj) },
    { MP_ROM_QSTR(MP_QSTR_since), MP_ROM_PTR(&pitboss_heap_since_obj) },
    { MP_ROM_QSTR(MP_QSTR_alloc), MP_ROM_PTR(&pitboss_heap_alloc_obj) },
    { MP_ROM_QSTR(MP_QSTR_max_block), MP_ROM_PTR(&pitboss_heap_max_block_obj) },
    { MP_ROM_QSTR(MP_QSTR_started), MP_ROM_PTR(&pitboss_heap_started_obj) },
    #if MICROPY_ENABLE_PYSTACK
    { MP_ROM_QSTR(MP_QSTR_pystack), MP_ROM_PTR(&pitboss_heap_pystack_obj) },
    #endif
};
static MP_DEFINE_CONST_DICT(pitboss_heap_globals, pitboss_heap_globals_table);

const mp_obj_module_t pitboss_heap_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&pitboss_heap_globals,
};

MP_REGISTER_MODULE(MP_QSTR_pitboss_heap, pitboss_heap_module);
