"""MFRC522 driver against a simulated chip and tags (tests/support/fake_mfrc522.py)."""
import pytest

from tests.support import fake_mfrc522 as F
from pitboss.hw.mfrc522 import MFRC522, RFIDError

UID4 = bytes.fromhex("DEADBEEF")
UID7 = bytes.fromhex("04A1B2C3D4E5F6")
UID10 = bytes.fromhex("0811223344556677889A")


def make(*tags, **chip_kw):
    chip, spi, cs, rst = F.reader(tags, **chip_kw)
    sleeps = []
    rc = MFRC522(spi, cs, rst, sleep_ms=sleeps.append)
    return rc, chip, cs, rst


def test_init_configures_the_chip():
    rc, chip, cs, rst = make()
    r = chip.regs
    assert rc.version == 0x92
    assert 0x0F in chip.log  # SoftReset
    assert (r[0x2A], r[0x2B]) == (0x80, 0xA9)  # TAuto, 40 kHz timer
    assert r[0x2C] << 8 | r[0x2D] == 400  # 10 ms at 40 kHz
    assert r[0x15] == 0x40 and r[0x11] == 0x3D  # 100 % ASK, CRC preset 6363
    assert r[0x14] & 0x03 == 0x03  # antenna on
    assert r[0x0E] & 0x80 == 0  # ValuesAfterColl cleared
    assert rst.history[:2] == [0, 1] and cs.v == 1


def test_spi_address_byte_is_the_datasheets():
    # 8.1.2.3: bit 7 = read, bits 6..1 = address. VersionReg (0x37) read -> 0xEE.
    chip, spi, cs, rst = F.reader([])
    seen = []
    xfer = chip.xfer
    chip.xfer = lambda b: seen.append(b) or xfer(b)
    MFRC522(spi, cs, None, sleep_ms=lambda ms: None)
    assert seen[:2] == [0x02, 0x0F]  # first: write SoftReset (0x0F) to CommandReg (0x01)
    assert 0xEE in seen  # read VersionReg


@pytest.mark.parametrize("uid", [UID4, UID7, UID10], ids=["4-byte", "7-byte", "10-byte"])
def test_reads_uids_of_every_cascade_level(uid):
    tag = F.Tag(uid, sak=0x00)
    rc, chip, _, _ = make(tag)
    assert rc.read_uid() == uid
    assert rc.sak == 0x00 and rc.atqa == 0x0044
    sels = [d[0] for d, n in chip.exchanges if n == 72]
    assert sels == [0x93, 0x95, 0x97][:len(uid) // 3]  # SELECT at each level
    assert tag.state == F.HALT


def test_select_frames_carry_a_crc_a_from_the_coprocessor():
    rc, chip, _, _ = make(F.Tag(UID7))
    rc.read_uid()
    assert chip.log.count(0x03) == 2 * 2 + 1  # CalcCRC: per level send + check, and HLTA
    for data, nbits in chip.exchanges:
        if nbits == 72:
            assert F.crc_a(data[:7]) == data[7] | data[8] << 8
    assert chip.exchanges[-1] == (bytes.fromhex("500057CD"), 32)  # HLTA, ISO's example CRC
    # ISO 14443-3 annex B examples: 00 00 -> A0 1E, 12 34 -> 26 CF (low byte first)
    assert rc.crc_a(b"\x00\x00", 2) == 0x1EA0 == F.crc_a(b"\x00\x00")
    assert rc.crc_a(b"\x12\x34", 2) == 0xCF26 == F.crc_a(b"\x12\x34")


def test_no_card_is_none_and_a_halted_card_needs_wupa():
    rc, chip, _, _ = make()
    assert rc.read_uid() is None
    chip.tags.append(F.Tag(UID4))
    assert rc.read_uid() == UID4
    assert rc.read_uid() is None  # halted: a card lying on the reader is read once
    assert rc.read_uid(wake=True) == UID4


def test_antenna_off_sees_nothing():
    rc, chip, _, _ = make(F.Tag(UID4))
    rc.antenna(False)
    assert rc.read_uid() is None
    rc.antenna(True)
    assert rc.read_uid() == UID4


def test_two_tags_are_a_collision_not_a_guess():
    rc, chip, _, _ = make(F.Tag(UID7), F.Tag(bytes.fromhex("04A1B2C3D4E5F7")))
    with pytest.raises(RFIDError) as e:
        rc.read_uid()
    assert e.value.kind == "collision" and isinstance(e.value, OSError)
    # different ATQAs already collide in the REQA answer
    rc, chip, _, _ = make(F.Tag(UID4, atqa=0x0004), F.Tag(UID7, atqa=0x0044))
    with pytest.raises(RFIDError, match="several tags"):
        rc.read_uid()


@pytest.mark.parametrize("fault, kind, text", [
    ("bad_sak_crc", "crc", "SAK CRC_A"),
    ("bad_bcc", "bcc", "UID check byte"),
    ("parity_error", "protocol", "ErrorReg 0x02"),
    ("silent_after_reqa", "protocol", "tag left during anticollision"),
])
def test_tag_faults(fault, kind, text):
    tag = F.Tag(UID7)
    setattr(tag, fault, True)
    rc, chip, _, _ = make(tag)
    with pytest.raises(RFIDError, match=text) as e:
        rc.read_uid()
    assert e.value.kind == kind


def test_a_tag_that_naks_halt_still_gives_its_uid():
    tag = F.Tag(UID4)
    tag.naks_halt = True
    rc, chip, _, _ = make(tag)
    assert rc.read_uid() == UID4  # the NAK is ignored: the UID was already checked
    assert tag.state == F.ACTIVE
    assert rc.halt() is False


def test_chip_faults_are_timeouts_not_hangs():
    rc, chip, _, _ = make(F.Tag(UID4))
    chip.crc_stalls = True
    with pytest.raises(RFIDError, match="CRC coprocessor") as e:
        rc.read_uid()
    assert e.value.kind == "timeout"
    rc, chip, _, _ = make(F.Tag(UID4))
    chip.irq_stalls = True
    with pytest.raises(RFIDError, match="did not finish a transceive"):
        rc.read_uid()
    rc, chip, _, _ = make(F.Tag(UID4))
    chip.dead = True  # unplugged after init: every register reads 0
    with pytest.raises(RFIDError) as e:
        rc.read_uid()
    assert e.value.kind == "timeout"


@pytest.mark.parametrize("version", [0x00, 0xFF])
def test_no_reader_on_the_bus(version):
    with pytest.raises(RFIDError, match="no MFRC522 on the SPI bus") as e:
        make(version=version)
    assert e.value.kind == "no_reader"


def test_dead_chip_at_init():
    chip, spi, cs, rst = F.reader([])
    chip.dead = True
    with pytest.raises(RFIDError) as e:
        MFRC522(spi, cs, rst, sleep_ms=lambda ms: None)
    assert e.value.kind == "no_reader"


def test_bad_timeout_is_refused_by_name():
    chip, spi, cs, rst = F.reader([])
    with pytest.raises(ValueError, match="timeout_ms 0"):
        MFRC522(spi, cs, rst, sleep_ms=lambda ms: None, timeout_ms=0)
