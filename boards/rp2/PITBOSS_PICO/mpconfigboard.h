// The pitboss image for the Raspberry Pi Pico: RPI_PICO plus a ROMFS partition for the
// table firmware and a raw journal region beside littlefs. The sizes
// (MICROPY_HW_ROMFS_BYTES, MICROPY_HW_FLASH_STORAGE_BYTES) come from
// modules/pitboss_layout.py through mpconfigboard.cmake: that file is the one place.
#define MICROPY_HW_BOARD_NAME                   "Raspberry Pi Pico (pitboss)"

// MicroPython's USB serial receive callback is renamed tud_cdc_rx_cb_mp: cdc_rx/cdc_rx.c
// is the tud_cdc_rx_cb here, copying whole runs into the stdin ring while Ctrl-C is off
// and calling this one for the rest.
#define MICROPY_WRAP_TUD_CDC_RX_CB(name) name##_mp

// Python frames on a stack of their own, not the GC heap (heap/heap.c says why). Its size
// comes out of the heap; the deepest the firmware went is pitboss_heap.pystack()[1].
#define MICROPY_ENABLE_PYSTACK                  (1)
#define PITBOSS_PYSTACK_BYTES                   (4608)
void pitboss_pystack_init(void);
#define MICROPY_BOARD_EARLY_INIT()              pitboss_pystack_init()
// ... and the soft reset's time kept (heap.c: pitboss_heap.started()), so boot figures
// after one count from it, not from the power-on.
void pitboss_soft_reset(void);
#define MICROPY_BOARD_START_SOFT_RESET()        pitboss_soft_reset()


// The VM's map lookup cache (py/map.c: the last slot each name was found at, for
// attributes, globals and methods), 128 bytes by default. Measured on the emulated Pico
// (release image, three six-seat Pai Gow rounds, 147 cards, frame to acknowledgement):
// 128: p50 3.68 / p99 4.84 ms; 1024: 3.53 / 4.50 ms; 4096: 3.44 / 4.62 ms. Stock
// MicroPython picks a name's byte by its qstr object shifted right twice, whose low bit
// is always 0, so those 1,024 bytes held 512 names; patches/0002 shifts by three, and 512
// bytes hold the same names in the same slots' classes. Each byte comes out of the GC
// heap: the boot after a power cycle with a full journal missed the 180 KB budget by 800
// B with 1,024 (docs/bench.md).
#define MICROPY_OPT_MAP_LOOKUP_CACHE_SIZE       (512)

// The collector's mark stack, 64 entries by default (2 bytes each on the rp2 port). At 64
// it overflowed in every collection of a running table (a block with more unmarked
// children than the stack has room for is enough), and each overflow costs
// gc_deal_with_stack_overflow: a walk of the whole heap's allocation table and the marks
// again. Measured on the emulated Pico (release image, six-seat Pai Gow rounds): a
// collection 1.34 M -> 0.59 M cycles with 256 entries, the deepest any collection went
// over a short budget session 105 entries; 128 keeps that with some spare, and an
// overflow is only slower, never wrong. Each entry comes out of the GC heap
// (docs/bench.md, 2026-12-07, "The collector's mark stack").
#define MICROPY_ALLOC_GC_STACK_SIZE             (128)

// The USB serial's receive ring, 512 bytes by default; its bytes come out of the GC heap
// too. Half is enough: the receive is flow-controlled (what does not fit stays in
// TinyUSB's own FIFO and the host waits: cdc_rx/cdc_rx.c), and the table's loop empties
// the ring at every pass. It pays for the mark stack above.
#define MICROPY_HW_STDIN_BUFFER_LEN             (256)
