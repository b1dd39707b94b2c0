"""`pitboss bench --journal`: the journal on a flash region (pitboss.store.ringjournal), counted
on CPython with the firmware unchanged: every game at its full table plays seeded rounds
through the shoe on a raw region (pitboss.store.region.FlashRegion over host_tools.emu.nor_flash's
model, which counts erases and page programs), with the idle passes between rounds that
erase ahead as the main loop does. Printed:
- erases per round and pages programmed per dealt card, per game;
- the projected life of the region at ROUNDS_A_DAY rounds a day, assuming CYCLES erase
  cycles a sector (the W25Q16JV's datasheet minimum), the ring spreading erases evenly
  (tests/host/test_ringjournal.py checks that it does);
- a card's journal cost in flash time, from the unit costs measured on the emulated Pico
  (../shared/firmware/README.md): a page program into a raw region 0.84 ms; a synced
  littlefs write, which the file-backed region pays per page program, 48.7 ms mean.
Counts, not timings: the same on every machine."""
import tempfile

from host_tools.emu.nor_flash import NorFlash
from host_tools.table.auth import KeyStore
from host_tools.table.configurator import Configurator
from host_tools.table.rounds import play_rounds
from host_tools.table.targets import LocalTarget

CYCLES = 100_000  # erase cycles a sector (W25Q16JV datasheet: 100,000 minimum)
ROUNDS_A_DAY = 1000
RAW_PAGE_MS = 0.84  # measured: one 256-byte page into rp2.Flash(start=, len=), no erase
FILE_PROGRAM_MS = 48.7  # measured: a 48-byte littlefs append + flush + sync, mean
GAMES = {"pr-pai-gow": 6, "pr-pai-gow-a5-low": 6, "pa-three-card-prime": 7,
         "qc-caribbean": 7, "nj-5card": 7, "nj-3card": 7}
REGION_KB = (256, 512, 768)
LIFE_YEARS = 20  # issue 27's budget for the region at ROUNDS_A_DAY


def image_region_kb():
    """The pitboss image's raw journal region (pitboss_layout.JOURNAL_BYTES), in KB."""
    from host_tools.deploy.romfs_deploy import layout

    return layout()["JOURNAL_BYTES"] // 1024


def measure(rounds=30, sectors=128):
    """Per game: rounds played, erases, pages programmed, cards dealt, bytes journalled."""
    out = {}
    for game, seats in GAMES.items():
        root = tempfile.mkdtemp(prefix="pitboss-jbench-")
        nor = NorFlash(sectors, junk=True)  # used flash: each sector erased when first used
        from pitboss.store.region import FlashRegion

        t = LocalTarget(root, durable=False, region=lambda r, fs: FlashRegion(nor))
        conf = Configurator(t, "jb", KeyStore(root + "/keys"))
        conf.provision()
        assert conf.configure(game, seats)["ok"]
        ctl = t.app.ctl
        # From the second round on: the first one starts the journal.
        list(play_rounds(t, game, seats, 1, seed=1))
        for _ in range(20):
            ctl.idle()
        e0, p0, s0 = nor.erases, nor.pages, ctl.journal.last_seq
        cards = 0
        card_pages = 0
        real = ctl.shoe_card

        def counted(card, seq):
            nonlocal cards, card_pages
            p = nor.pages
            r = real(card, seq)
            cards += 1
            card_pages += nor.pages - p
            return r
        ctl.shoe_card = counted
        for r in play_rounds(t, game, seats, rounds, seed=2):
            assert r["ok"]
            for _ in range(20):
                ctl.idle()
        out[game] = {"seats": seats, "rounds": rounds, "erases": nor.erases - e0,
                     "pages": nor.pages - p0, "cards": cards, "card_pages": card_pages,
                     "records": ctl.journal.last_seq - s0,
                     "wear_spread": [min(nor.wear), max(nor.wear)]}
    return {"sectors": sectors, "games": out}


def life_years(sectors, erases_per_round):
    if not erases_per_round:
        return float("inf")
    return sectors * CYCLES / (erases_per_round * ROUNDS_A_DAY) / 365.25


def render(res):
    lines = ["journal on a flash region (CPython, the firmware's RegionJournal over a NOR "
             "model of %d sectors)" % res["sectors"],
             "assumed: %d erase cycles a sector, %d rounds a day; page program %.2f ms "
             "(raw), %.1f ms (a littlefs write + sync, file-backed)"
             % (CYCLES, ROUNDS_A_DAY, RAW_PAGE_MS, FILE_PROGRAM_MS),
             "%-20s %5s %8s %8s %8s  %s  %s" % (
                 "game", "seats", "erases/r", "pages/c", "raw ms/c", "file ms/c",
                 "life (years) at " + ", ".join("%d KB" % k for k in REGION_KB))]
    worst = 0
    for game, g in res["games"].items():
        epr = g["erases"] / g["rounds"]
        ppc = g["card_pages"] / max(1, g["cards"])
        worst = max(worst, epr)
        lines.append("%-20s %5d %8.2f %8.2f %8.2f  %8.1f  %s" % (
            game, g["seats"], epr, ppc, ppc * RAW_PAGE_MS, ppc * FILE_PROGRAM_MS,
            ", ".join("%.1f" % life_years(k // 4, epr) for k in REGION_KB)))
    need = worst * ROUNDS_A_DAY * 365.25 * LIFE_YEARS / CYCLES
    lines.append("%d years of the most erasing game (%.2f erases a round) needs a region of "
                 ">= %d sectors (%d KB)" % (LIFE_YEARS, worst, need + 1, (need + 1) * 4))
    kb = image_region_kb()
    least = life_years(kb // 4, worst)
    lines.append("the pitboss image's region (pitboss_layout.JOURNAL_BYTES): %d KB, %.1f years "
                 "for the most erasing game: %s the %d-year budget"
                 % (kb, least, "within" if least >= LIFE_YEARS else "UNDER", LIFE_YEARS))
    return "\n".join(lines)


def image_life(res):
    """{game: years} of the pitboss image's region at each game's erases a round."""
    sectors = image_region_kb() // 4
    return {game: life_years(sectors, g["erases"] / g["rounds"])
            for game, g in res["games"].items()}


def main(rounds=30):
    res = measure(rounds)
    print(render(res))
    return res
