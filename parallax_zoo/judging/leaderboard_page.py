"""The leaderboard as one self-contained HTML page (docs/evaluation.md, "The leaderboard page").

Per env: the ranked rows (score, interval, normalized score, Elo with its interval, and in zero-sum games the
win/draw/loss record against each protocol opponent), every rated player, and each entrant's provenance with a
link to its model card. Its CSS and script are inline and it loads nothing, so it opens offline as it is; every
text taken from results is HTML-escaped. A click on a column header sorts the table; on a phone rows become cards.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from parallax_zoo.catalogue.pins import HUB_URL
from parallax_zoo.catalogue.player_names import BASELINE, RANDOM
from parallax_zoo.judging.board_rows import COLUMN_NOTES, Row, rank_key
from parallax_zoo.judging.evaluation import PROTOCOL_VERSION
from parallax_zoo.judging.ratings import RANDOM_ELO, Rating

PAGE_NOTES = (
    (
        "vs OPPONENT",
        "Zero-sum games only: the share of the protocol's games against that opponent won, drawn and "
        "lost, half of them from each seat (hover for the games and each seat's record); sorts by "
        "win + draw / 2.",
    ),
    (
        "provenance",
        "Where the entrant's files came from, as its result records them: the Hub repo, the commit, and "
        "each file's sha256; the model card is the repo's README.md at that commit.",
    ),
)
"""What the page's own columns mean, after `board_rows.COLUMN_NOTES`."""

FULL_COMMIT = re.compile(r"\b[0-9a-f]{40}\b")
"""A full git commit id, as in `hub:REPO@COMMIT` entrant names; shown cut to 7 characters."""

STYLE = """
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--head:#f6f8fa;--accent:#0969da;
--win:#1a7f37;--draw:#9a6700;--loss:#cf222e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;
--head:#151b23;--accent:#4493f8;--win:#3fb950;--draw:#d29922;--loss:#f85149}}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1400px;padding:1.5rem}
h1{font-size:1.7rem;margin:0 0 .3rem}
h2{margin:2.5rem 0 .4rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.6rem 0 .5rem}
a{color:var(--accent)}
.meta,.ci,.role{color:var(--muted)}
.ci{font-size:.9em;white-space:nowrap}
.elo .ci{display:block}
nav ul{list-style:none;padding:0;margin:1rem 0;display:flex;flex-wrap:wrap;gap:.5rem}
nav a{display:block;border:1px solid var(--line);border-radius:6px;padding:.4rem .7rem;text-decoration:none;
color:inherit}
nav a strong{color:var(--accent)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:.4rem .5rem;text-align:left;vertical-align:top}
th{background:var(--head);white-space:nowrap;font-weight:600}
.num{text-align:right}
th button{font:inherit;color:inherit;background:none;border:0;padding:0;cursor:pointer}
th button::after{content:" \\2195";color:var(--muted)}
th[aria-sort=ascending] button::after{content:" \\25B2"}
th[aria-sort=descending] button::after{content:" \\25BC"}
td.entrant{overflow-wrap:anywhere;min-width:12rem;max-width:22rem}
.card-link{display:block;font-size:.85em}
.wdl{display:flex;height:.5rem;width:7rem;border-radius:3px;overflow:hidden;background:var(--line);
margin:.3rem 0 .15rem auto}
.wdl .w{background:var(--win)}.wdl .d{background:var(--draw)}.wdl .l{background:var(--loss)}
.wdl-text{font-size:.85em;white-space:nowrap}
.note{color:var(--loss)}
code{font:.85em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
ul.files{margin:0;padding:0;list-style:none}
dt{font-weight:600;margin-top:.6rem}dd{margin-left:1rem}
@media (max-width:640px){
body{padding:.75rem}
.table-wrap{overflow:visible}
table,tbody,tr,td{display:block;width:100%}
thead tr{display:flex;flex-wrap:wrap;gap:.3rem;margin-bottom:.3rem}
thead th{border:1px solid var(--line);border-radius:4px;padding:.15rem .45rem;font-size:.85rem}
table.plain thead,thead th:not([data-type]){display:none}
tbody tr{border:1px solid var(--line);border-radius:8px;margin:.6rem 0;padding:.35rem .6rem}
td{border:0;padding:.2rem 0 .2rem 7.5rem;position:relative;min-height:1.6rem}
td.num,td.entrant{text-align:left;max-width:none}
td:empty{display:none}
.wdl{margin-left:0}
.elo .ci{display:inline}
td::before{content:attr(data-label);position:absolute;left:0;width:7rem;color:var(--muted);font-size:.85rem;
overflow-wrap:anywhere}
}
"""

SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, column) {
    var button = th.querySelector("button");
    if (!button) { return; }
    button.addEventListener("click", function () {
      var now = th.getAttribute("aria-sort");
      var descending = now ? now === "ascending" : th.dataset.first === "descending";
      var numeric = th.dataset.type === "number";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        var value = cell.dataset.sort === undefined ? cell.textContent.trim() : cell.dataset.sort;
        return numeric ? (value === "" ? NaN : Number(value)) : value.toLowerCase();
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (numeric) {
          if (isNaN(x) || isNaN(y)) { return isNaN(x) - isNaN(y); }
          return descending ? y - x : x - y;
        }
        return descending ? y.localeCompare(x) : x.localeCompare(y);
      });
      rows.forEach(function (row) { body.appendChild(row); });
      Array.prototype.forEach.call(heads, function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    });
  });
});
"""


def leaderboard_page(rows: Sequence[Row], ratings: Mapping[str, Mapping[str, Rating]], date: str) -> str:
    """The whole page for a board's `rows` (best first within each env), its `ratings` per env and its `date`: a
    summary of the envs, one section per env, and what each column means."""
    groups = [(env_id, list(env_rows)) for env_id, env_rows in itertools.groupby(rows, key=lambda row: row.env_id)]
    summary = "".join(
        f"<li><a href='#env-{index}'><strong>{_text(env_id)}</strong> &middot; {len(env_rows)} "
        f"{'entrant' if len(env_rows) == 1 else 'entrants'} &middot; top: {_name(env_rows[0].entrant)}</a></li>"
        for index, (env_id, env_rows) in enumerate(groups)
    )
    sections = "".join(
        _env_section(index, env_id, env_rows, ratings.get(env_id, {}))
        for index, (env_id, env_rows) in enumerate(groups)
    )
    notes = "".join(f"<dt>{_text(name)}</dt><dd>{_text(text)}</dd>" for name, text in (*COLUMN_NOTES, *PAGE_NOTES))
    entrants = len(rows)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>Parallax Zoo leaderboard</title><style>{STYLE}</style></head><body>"
        "<header><h1>Parallax Zoo leaderboard</h1>"
        f"<p class='meta'>Evaluation protocol version {PROTOCOL_VERSION}; made on {_text(date)}; "
        f"{entrants} {'entrant' if entrants == 1 else 'entrants'} on {len(groups)} "
        f"{'env' if len(groups) == 1 else 'envs'}. Click a column header to sort its table.</p>"
        f"<nav><ul>{summary}</ul></nav></header><main>{sections}</main>"
        f"<section><h2>Columns</h2><dl>{notes}</dl></section><script>{SCRIPT}</script></body></html>\n"
    )


def _env_section(index: int, env_id: str, rows: Sequence[Row], ratings: Mapping[str, Rating]) -> str:
    """One env: its ranked table, then (zero-sum games) each entrant's record against each opponent and every
    rated player, then each entrant's provenance."""
    opponents = list(dict.fromkeys(name for row in rows for name in row.opponents))
    facts = [f"{len(rows)} {'entrant' if len(rows) == 1 else 'entrants'}"]
    if ratings:
        facts.append(f"zero-sum game: Elo on the anchored scale (the random player rates {RANDOM_ELO:.0f})")
    if opponents:
        facts.append("protocol opponents: " + ", ".join(opponents))
    return (
        f"<section id='env-{index}'><h2>{_text(env_id)}</h2><p class='meta'>{_text('; '.join(facts))}</p>"
        f"<h3>Ranking</h3>{_ranking_table(rows)}"
        + (f"<h3>Against each opponent</h3>{_records_table(rows, opponents)}" if opponents else "")
        + (f"<h3>Elo ratings</h3>{_ratings_table(ratings)}" if ratings else "")
        + f"<h3>Provenance</h3>{_provenance_table(rows)}</section>"
    )


def _ranks(rows: Sequence[Row]) -> list[int]:
    """Each row's position within its env; equal scores share a rank (1, 1, 3), a non-finite one ranks last."""
    return [1 + sum(rank_key(other) > rank_key(row) for other in rows) for row in rows]


def _ranking_table(rows: Sequence[Row]) -> str:
    head = [
        ("rank", "number", "ascending"),
        ("entrant", "text", "ascending"),
        ("score", "number", "descending"),
        ("95% CI", "", ""),
        ("normalized", "number", "descending"),
        ("Elo [95% CI]", "number", "descending"),
        ("episodes", "number", "descending"),
    ]
    noted = any(row.note for row in rows)
    if noted:
        head.append(("note", "text", "ascending"))
    body = []
    for row, rank in zip(rows, _ranks(rows)):
        card = _model_card_url(_recorded(row.provenance))
        entrant = _name(row.entrant) + (f"<a class='card-link' href='{_text(card)}'>model card</a>" if card else "")
        low, high = row.ci95
        elo = (
            "-"
            if row.elo is None
            else f"{row.elo:.0f}"
            + (f" <span class='ci'>[{row.elo_ci[0]:.0f}, {row.elo_ci[1]:.0f}]</span>" if row.elo_ci else "")
        )
        cells = [
            _cell("rank", str(rank), sort=str(rank), numeric=True),
            _cell("entrant", entrant, sort=row.entrant, css="entrant"),
            _cell("score", _text(_number(row.mean)), sort=_sort_number(row.mean), numeric=True),
            _cell(
                "95% CI",
                f"<span class='ci'>[{_number(low)}, {_number(high)}]</span>" if math.isfinite(low + high) else "-",
                numeric=True,
            ),
            _cell("normalized", _text(_number(row.normalized)), sort=_sort_number(row.normalized), numeric=True),
            _cell("Elo [95% CI]", elo, sort=_sort_number(row.elo), numeric=True, css="elo"),
            _cell("episodes", str(row.episodes), sort=str(row.episodes), numeric=True),
        ]
        if noted:
            note = f"<span class='note'>{_text(row.note)}</span>" if row.note else ""
            cells.append(_cell("note", note, sort=row.note))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return _table("sortable ranking", head, body)


def _records_table(rows: Sequence[Row], opponents: Sequence[str]) -> str:
    """Zero-sum games: per entrant (in rank order), the shares won, drawn and lost against each protocol opponent."""
    head = [
        ("rank", "number", "ascending"),
        ("entrant", "text", "ascending"),
        *((f"vs {name}", "number", "descending") for name in opponents),
    ]
    body = [
        "<tr>"
        + "".join(
            [
                _cell("rank", str(rank), sort=str(rank), numeric=True),
                _cell("entrant", _name(row.entrant), sort=row.entrant, css="entrant"),
                *(_record_cell(name, row.opponents.get(name)) for name in opponents),
            ]
        )
        + "</tr>"
        for row, rank in zip(rows, _ranks(rows))
    ]
    return _table("sortable records", head, body)


def _ratings_table(ratings: Mapping[str, Rating]) -> str:
    head = [
        ("player", "text", "ascending"),
        ("Elo", "number", "descending"),
        ("95% CI", "", ""),
        ("games", "number", "descending"),
        ("role", "text", "ascending"),
    ]
    body = []
    for name, rating in sorted(ratings.items(), key=lambda item: -item[1].elo):
        body.append(
            "<tr>"
            + "".join(
                [
                    _cell("player", _name(name), sort=name, css="entrant"),
                    _cell("Elo", f"{rating.elo:.0f}", sort=_sort_number(rating.elo), numeric=True),
                    _cell("95% CI", f"<span class='ci'>[{rating.low:.0f}, {rating.high:.0f}]</span>", numeric=True),
                    _cell("games", str(rating.games), sort=str(rating.games), numeric=True),
                    _cell("role", f"<span class='role'>{_text(_role(name, rating))}</span>", sort=_role(name, rating)),
                ]
            )
            + "</tr>"
        )
    return _table("sortable ratings", head, body)


def _provenance_table(rows: Sequence[Row]) -> str:
    head = [
        ("entrant", "", ""),
        ("source", "", ""),
        ("commit", "", ""),
        ("files (sha256)", "", ""),
        ("model card", "", ""),
    ]
    body = []
    for row in rows:
        recorded = _recorded(row.provenance)
        repo, commit, files = recorded.get("repo"), recorded.get("commit"), recorded.get("files")
        if repo:
            source = f"<a href='{_text(HUB_URL + '/' + quote(str(repo), safe='/'))}'>{_text(str(repo))}</a>"
        elif row.entrant == RANDOM:
            source = "built in: the uniformly random player"
        else:
            source = "<span class='meta'>not recorded (a local folder or a policy made in Python)</span>"
        listed = "".join(
            f"<li>{_text(str(name))} <code>{_text(str(digest))}</code></li>"
            for name, digest in (files.items() if isinstance(files, Mapping) else ())
        )
        card = _model_card_url(recorded)
        body.append(
            "<tr>"
            + "".join(
                [
                    _cell("entrant", _name(row.entrant), css="entrant"),
                    _cell("source", source),
                    _cell("commit", f"<code>{_text(str(commit))}</code>" if commit else "-"),
                    _cell("files (sha256)", f"<ul class='files'>{listed}</ul>" if listed else "-"),
                    _cell("model card", f"<a href='{_text(card)}'>README.md</a>" if card else "-"),
                ]
            )
            + "</tr>"
        )
    return _table("plain provenance", head, body)


def _table(css: str, head: Iterable[tuple[str, str, str]], body: Iterable[str]) -> str:
    """A table whose headers with a `kind` ("number" or "text") are sort buttons, first sorting `first`."""
    cells = []
    for label, kind, first in head:
        numeric = " class='num'" if kind == "number" else ""
        if kind:
            ranked = " aria-sort='ascending'" if label == "rank" else ""  # the rows come ranked
            cells.append(
                f"<th scope='col'{numeric} data-type='{kind}' data-first='{first}'{ranked}>"
                f"<button type='button'>{_text(label)}</button></th>"
            )
        else:
            cells.append(f"<th scope='col'>{_text(label)}</th>")
    return (
        f"<div class='table-wrap'><table class='{css}'><thead><tr>{''.join(cells)}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _cell(label: str, content: str, *, sort: str | None = None, numeric: bool = False, css: str = "") -> str:
    """A body cell: `content` is HTML already escaped; `label` heads it when rows are cards; `sort` is its sort key."""
    classes = " ".join(filter(None, ["num" if numeric else "", css]))
    attributes = (
        f" data-label='{_text(label)}'"
        + (f" class='{classes}'" if classes else "")
        + (f" data-sort='{_text(sort)}'" if sort is not None else "")
    )
    return f"<td{attributes}>{content}</td>"


def _record_cell(opponent: str, record: Mapping[str, float] | None) -> str:
    """The win/draw/loss shares against one opponent as a bar and figures; the per-seat record in its title."""
    label = f"vs {opponent}"
    if not record or not all(isinstance(record.get(key), (int, float)) for key in ("win", "draw", "loss")):
        return _cell(label, "-", sort="", numeric=True)
    win, draw, loss = (float(record[key]) for key in ("win", "draw", "loss"))
    seats = "; ".join(
        f"from seat {side}: {_percent(record.get(f'win_side_{side}'))} / {_percent(record.get(f'draw_side_{side}'))} / "
        f"{_percent(record.get(f'loss_side_{side}'))}"
        for side in (0, 1)
        if f"win_side_{side}" in record
    )
    games = record.get("games")
    title = (f"{games:.0f} games; " if isinstance(games, (int, float)) and math.isfinite(games) else "") + (
        f"won / drawn / lost {seats}" if seats else ""
    )
    bar = "".join(
        f"<span class='{kind}' style='width:{100 * share:.1f}%'></span>"
        for kind, share in (("w", win), ("d", draw), ("l", loss))
        if math.isfinite(share) and share > 0
    )
    content = (
        f"<div class='wdl' role='img' aria-label='won {_percent(win)}, drawn {_percent(draw)}, lost "
        f"{_percent(loss)}'>{bar}</div><span class='wdl-text'>W {_percent(win)} &middot; D {_percent(draw)} "
        f"&middot; L {_percent(loss)}</span>"
    )
    return (
        f"<td data-label='{_text(label)}' class='num' data-sort='{_sort_number(win + draw / 2)}' "
        f"title='{_text(title)}'>{content}</td>"
    )


def _role(name: str, rating: Rating) -> str:
    """What a rated player is on the board: the scale's anchors, the pinned baseline, or an entrant."""
    if name == RANDOM:
        return "anchor (random player)"
    if rating.anchor:
        return "ladder anchor (fixed)"
    return "baseline" if name == BASELINE else "entrant"


def _recorded(provenance: object) -> Mapping[str, Any]:
    """A row's provenance as a mapping; anything else a results file might hold shows as none recorded."""
    return provenance if isinstance(provenance, Mapping) else {}


def _model_card_url(provenance: Mapping[str, Any]) -> str | None:
    """The Hub page of the entrant's README.md at its recorded commit; None without a recorded repo."""
    repo, commit = provenance.get("repo"), provenance.get("commit")
    if not repo:
        return None
    page = f"{HUB_URL}/{quote(str(repo), safe='/')}"
    return f"{page}/blob/{quote(str(commit), safe='')}/README.md" if commit else page


def _number(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _sort_number(value: float | None) -> str:
    """A sort key the page's script reads as a number; empty (sorted last) for a missing or non-finite value."""
    return "" if value is None or not math.isfinite(value) else repr(float(value))


def _percent(value: Any) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, (int, float)) and math.isfinite(value) else "-"


def _name(name: str) -> str:
    """A player's name for display: each 40-hex commit in it cut to 7 characters, the whole name in its title."""
    short = FULL_COMMIT.sub(lambda found: found[0][:7], name)
    return _text(name) if short == name else f"<span title='{_text(name)}'>{_text(short)}</span>"


def _text(value: str) -> str:
    """`value` escaped for HTML text and quoted attributes."""
    return html.escape(value, quote=True)
