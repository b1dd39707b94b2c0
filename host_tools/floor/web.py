"""The pit view: a read-only web page served by the collector (Starlette on uvicorn).

    /                        the grid: every table's game, round, state (open, dealing,
                             settled, tilted, offline), last settlement, today's hold
    /table/ID                a table: its recent rounds, tilts and anomalies
    /table/ID/round/N        a round: every hand's cards and the settlement
    /events                  server-sent events: the grid's data whenever it changes
    /api/tables, /api/table/ID, /api/round/ID/N, /api/summary     the same as JSON

Read-only: GET only, from the database. Nothing on a page or in an answer comes from the
key store (the collector's KeyStore is never handed to this module), and the journal
records' MACs are not shown either: a test fetches every page and looks for each key.
"""
import asyncio
import html
import json

from starlette.applications import Starlette
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from host_tools.floor import queries as q

SUITS = {"s": ("\u2660", "blk"), "h": ("\u2665", "red"), "d": ("\u2666", "red"),
         "c": ("\u2663", "blk")}
CSS = """
body{font-family:system-ui,sans-serif;background:#0b3d2e;color:#eee;margin:0}
header{background:#062419;padding:10px 18px;display:flex;gap:18px;align-items:baseline}
header h1{margin:0;font-size:20px}header a{color:#9fd}main{padding:14px 18px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:10px}
.t{background:#0f5140;border-radius:8px;padding:9px 11px;border-left:6px solid #777;
color:#eee;text-decoration:none;display:block}
.t b{font-size:16px}.t .g{font-size:12px;color:#bcd}.t .s{font-weight:600;float:right}
.t .l{font-size:13px;margin-top:4px}
.open{border-color:#3a8ee6}.dealing{border-color:#e6c23a}.settled{border-color:#3ae67a}
.tilted{border-color:#ff3b3b;background:#5a1717}.offline{border-color:#555;background:#2a2f2d;
color:#999}
table.r{border-collapse:collapse;margin:8px 0}table.r td,table.r th{padding:4px 9px;
border-bottom:1px solid #1d6b55;text-align:left}table.r a{color:#9fd}
.card{display:inline-block;background:#fff;border-radius:4px;padding:1px 4px;margin:1px;
font-weight:700;min-width:22px;text-align:center}.card.red{color:#c00}.card.blk{color:#111}
.neg{color:#ff9a9a}.pos{color:#9fffb0}.note{color:#bcd;font-size:13px}
#live{font-size:12px;color:#9fd}
"""


def card(c):
    c = str(c)
    if c.startswith("Jk"):
        return '<span class="card blk">%s</span>' % html.escape(c)
    rank, suit = c[:-1], c[-1:]
    sym, color = SUITS.get(suit, (suit, "blk"))
    return '<span class="card %s">%s%s</span>' % (color, html.escape(rank), sym)


def cards(seq):
    return " ".join(card(c) for c in seq or ())


def money(v):
    if v is None:
        return "-"
    return '<span class="%s">%+d</span>' % ("neg" if v < 0 else "pos", v)


def page(title, body, script=""):
    return HTMLResponse(
        "<!doctype html><html><head><meta charset=utf-8><title>%s</title><style>%s</style>"
        "</head><body><header><h1>pitboss floor</h1><a href=\"/\">tables</a>"
        "<span id=live></span></header><main>%s</main>%s</body></html>"
        % (html.escape(title), CSS, body, script))


GRID_JS = """<script>
function esc(s){return String(s==null?'-':s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]))}
function tile(t){
  var lr=t.last_round, last=lr?('#'+lr.round+(lr.void?' void':' '+(lr.house_net>=0?'+':'')+lr.house_net)):'-';
  var hold=t.hold==null?'-':t.hold.toFixed(2)+'%';
  return '<a class="t '+t.state+'" id="t-'+esc(t.board)+'" data-state="'+t.state+'" href="/table/'+encodeURIComponent(t.board)+'">'
   +'<span class="s">'+esc(t.state)+(t.tilts?' '+esc(t.tilts):'')+'</span><b>'+esc(t.board)+'</b>'
   +'<div class="g">'+esc(t.game)+' &middot; round '+esc(t.round)+'</div>'
   +'<div class="l">last '+esc(last)+' &middot; today hold '+esc(hold)+'</div>'
   +(t.anomalies?'<div class="l neg">'+t.anomalies+' anomalies</div>':'')+'</a>';
}
function draw(ts){document.getElementById('grid').innerHTML=ts.map(tile).join('');
  document.getElementById('live').textContent='live '+new Date().toISOString().slice(11,19)+' UTC';}
var es=new EventSource('/events');
es.addEventListener('tables',function(e){draw(JSON.parse(e.data));});
es.onerror=function(){document.getElementById('live').textContent='reconnecting...';};
</script>"""


def make_app(db, config, collector=None):
    """The pit view over `db` (host_tools.floor.collector.DB: a store on its own
    thread); `collector` gives the change counter the events follow."""

    async def tables(_):
        return await db.run(q.tables)

    async def grid(request):
        ts = await tables(request)
        body = ('<div class=grid id=grid>%s</div><p class=note>%d tables. The grid follows '
                'the collector live (server-sent events); a tile opens its table.</p>'
                % ("".join(_tile(t) for t in ts), len(ts)))
        return page("pit view", body, GRID_JS)

    async def table_page(request):
        board = request.path_params["board"]
        data = await db.run(_table_data, board)
        if data is None:
            return page("no table", "<p>No table %s on this floor.</p>" % html.escape(board))
        t, rounds, tilts, anomalies = data
        rows = "".join(
            "<tr><td><a href=\"/table/%s/round/%d\">#%d</a></td><td>%s</td><td>%s</td>"
            "<td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>"
            % (html.escape(board, True), r["round"], r["round"], html.escape(r["game"]),
               q.iso(r["at"]), r["wagered"], r["paid"], money(r["house_net"]),
               html.escape(r["void"] or "")) for r in rounds)
        trows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                        % (q.iso(x["at"]), x["action"], html.escape(x["code"]),
                           html.escape(x["operator"] or "")) for x in tilts)
        arows = "".join("<tr><td>%s</td><td>%s</td><td>%s..%s</td><td>%d</td><td>%s</td></tr>"
                        % (q.iso(a["last_seen"]), html.escape(a["kind"]), a["seq_from"],
                           a["seq_to"], a["count"], html.escape(a["detail"] or ""))
                        for a in anomalies)
        body = ("<h2>%s</h2><div class=grid>%s</div><h3>Recent rounds</h3><table class=r id="
                "rounds><tr><th>round</th><th>game</th><th>settled (UTC)</th><th>drop</th>"
                "<th>paid</th><th>house</th><th>void</th></tr>%s</table><h3>Tilts</h3>"
                "<table class=r id=tilts><tr><th>time</th><th>action</th><th>code</th>"
                "<th>operator</th></tr>%s</table><h3>Anomalies</h3><table class=r id="
                "anomalies><tr><th>last seen</th><th>kind</th><th>seqs</th><th>count</th>"
                "<th>detail</th></tr>%s</table>"
                % (html.escape(board), _tile(t), rows, trows, arows))
        # Live: the page reloads itself when a round ends, a tilt comes or goes, an
        # anomaly is found or the table goes off the line (not at every card). Once the
        # reader leaves (a round's link followed), the stream is closed and no reload
        # comes: a reload of this page while the round's page is still loading would
        # cancel that navigation, and the reader would stay here.
        js = ("<script>var v=null;var es=new EventSource('/events');"
              "addEventListener('beforeunload',function(){es.close();});"
              "es.addEventListener('tables',function(e){var t=JSON.parse(e.data).filter("
              "function(x){return x.board==%s})[0];var k=JSON.stringify([t.last_round,"
              "t.tilts,t.anomalies,t.online]);if(v!==null&&k!==v){es.close();"
              "location.reload();}v=k;});</script>" % json.dumps(board))
        return page(board, body, js)

    async def round_page(request):
        board = request.path_params["board"]
        n = request.path_params["number"]
        r = await db.run(q.round_detail, board, n)
        if r is None:
            return page("no round", "<p>The floor holds no round %d of %s.</p>"
                        % (n, html.escape(board)))
        return page("%s round %d" % (board, n), _round_html(r))

    async def api_tables(request):
        return JSONResponse(await tables(request))

    async def api_table(request):
        data = await db.run(_table_data, request.path_params["board"])
        if data is None:
            return JSONResponse({"error": "no such table"}, 404)
        t, rounds, tilts, anomalies = data
        return JSONResponse({"table": t, "rounds": rounds, "tilts": tilts,
                             "anomalies": anomalies})

    async def api_round(request):
        r = await db.run(q.round_detail, request.path_params["board"],
                         request.path_params["number"])
        return JSONResponse(r if r is not None else {"error": "no such round"},
                            200 if r is not None else 404)

    async def api_summary(request):
        hours = config.shifts
        label, s, e = q.current_shift(hours)
        rows = await db.run(q.summary, s, e, hours)
        return JSONResponse({"shift": label, "rows": rows, "totals": q.totals(rows)})

    async def events(request):
        async def stream():
            sent = None
            seen = -1
            quiet = 0.0
            while True:
                v = collector.version if collector is not None else 0
                if v != seen or quiet >= 2.0:
                    # Also every 2 s without a change: a table's state can move
                    # (offline) with no write the counter saw.
                    seen = v
                    quiet = 0.0
                    data = json.dumps(await tables(request))
                    if data != sent:
                        sent = data
                        yield "event: tables\ndata: %s\n\n" % data
                    else:
                        yield ": keep-alive\n\n"
                await asyncio.sleep(0.25)
                quiet += 0.25
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def health(_):
        return Response("ok\n", media_type="text/plain")

    routes = [Route("/", grid), Route("/table/{board}", table_page),
              Route("/table/{board}/round/{number:int}", round_page),
              Route("/events", events), Route("/api/tables", api_tables),
              Route("/api/table/{board}", api_table),
              Route("/api/round/{board}/{number:int}", api_round),
              Route("/api/summary", api_summary), Route("/health", health)]
    return Starlette(routes=routes)


def _table_data(store, board):
    ts = [t for t in q.tables(store) if t["board"] == board]
    if not ts:
        return None
    return (ts[0], q.recent_rounds(store, board, 25), q.tilts(store, board=board)[-20:],
            q.anomalies(store, board=board)[:20])


def _tile(t):
    lr = t["last_round"]
    last = "-" if lr is None else "#%d %s" % (lr["round"], "void" if lr["void"] else
                                             "%+d" % lr["house_net"])
    return ('<a class="t %s" id="t-%s" data-state="%s" href="/table/%s"><span class=s>%s%s'
            '</span><b>%s</b><div class=g>%s &middot; round %s</div><div class=l>last %s '
            '&middot; today hold %s</div>%s</a>'
            % (t["state"], html.escape(t["board"], True), t["state"],
               html.escape(t["board"], True), t["state"],
               (" " + html.escape(t["tilts"])) if t["tilts"] else "",
               html.escape(t["board"]), html.escape(t["game"] or "-"), t["round"] or "-",
               last, "-" if t["hold"] is None else "%.2f%%" % t["hold"],
               ('<div class="l neg">%d anomalies</div>' % t["anomalies"])
               if t["anomalies"] else ""))


def _hand_cells(s):
    if "high" in s:
        return "%s &nbsp;|&nbsp; %s" % (cards(s["high"]), cards(s["low"])), \
            "%s / %s" % (s.get("high_category", ""), s.get("low_category", ""))
    return cards(s.get("hand") or s.get("cards")), s.get("category", "")


def _event_html(ev):
    """A round's journal record, as the pit reads it: the card by name, a seat's wagers."""
    kind = ev.get("ev")
    if kind == "card" and isinstance(ev.get("c"), int):
        from pitboss.rules.cards import name
        return card(name(ev["c"]))
    if kind == "wager":
        return "seat %s: %s" % (ev.get("seat"), html.escape(", ".join(
            "%s %s" % (k, v) for k, v in sorted((ev.get("w") or {}).items()))))
    if kind in ("settle", "void"):
        return html.escape(", ".join("%s %s/%s" % tuple(x) for x in ev.get("lines") or ())
                           or str(ev.get("why", "")))
    rest = {k: v for k, v in ev.items() if k not in ("ev", "t", "seq", "result")}
    return html.escape(json.dumps(rest, separators=(",", ":"))) if rest else ""


def _round_html(r):
    res = r["result"]
    out = ["<h2 id=round-title>%s &middot; round %d</h2><p class=note>%s &middot; journal seq %d"
           " &middot; settled %s UTC</p>" % (html.escape(r["board"]), r["round"],
                                             html.escape(r["game"]), r["seq"], q.iso(r["at"]))]
    if r["void"]:
        out.append("<p><b>Voided</b> (%s): every wager returned.</p>" % html.escape(r["void"]))
    out.append("<table class=r id=hands><tr><th>seat</th><th>hand</th><th>category</th>"
               "<th>wagers</th><th>outcome</th></tr>")
    for who in ("dealer", "banker"):
        d = res.get(who)
        if d:
            h, cat = _hand_cells(d)
            if who == "dealer" and "qualifies" in d and not d["qualifies"]:
                cat += " (does not qualify)"
            out.append("<tr><td>%s</td><td>%s</td><td>%s</td><td></td><td></td></tr>"
                       % (who, h, html.escape(cat)))
    for s in res.get("seats", ()):
        h, cat = _hand_cells(s)
        wag = ", ".join("%s %d" % (html.escape(k), v) for k, v in
                        sorted((s.get("wagers") or {}).items()))
        out.append("<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                   % (s["seat"], h, html.escape(str(cat)), wag, money(s.get("amount"))))
    out.append("</table><p>drop %d &middot; paid %d &middot; house net %s</p>"
               % (r["wagered"], r["paid"], money(r["house_net"])))
    out.append("<h3>Journal</h3><table class=r id=events><tr><th>seq</th><th>time (UTC)</th>"
               "<th>event</th><th></th></tr>")
    for ev in r["events"]:
        out.append("<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                   % (ev["seq"], (q.iso(ev["t"]) or "")[11:19] if isinstance(
                       ev.get("t"), int) else "", html.escape(str(ev.get("ev"))),
                      _event_html(ev)))
    out.append("</table>")
    return "".join(out)
