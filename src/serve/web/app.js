// The web board of `tb serve`: draws the position of a loaded table, labels every
// move with its value from /api/probe, plays clicked moves, and keeps the game in
// the URL (?table=NAME&position=START&moves=M1,M2,...) so it can be shared.
// No framework and nothing from outside: everything here is served by tb.
//
// Each game (DOTS, MORRIS, QUBIC below, found by the table's `game` in GAMES) says
// how to set itself up from its /api/tables entry (setUp, defaultStart, describe,
// players, sides), how moves change a position (apply, replay: the position and
// the side to move, `mover`, one of `sides`), what the probe answer offers
// (choices: the moves best first, for the list, *Best move* and the computer),
// and how to show it (status, score, draw). A game may also ask the server more
// about a position (more) before it is drawn.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

const state = {
  tables: [],      // GET /api/tables
  table: null,     // the selected table's description
  game: null,      // the table's game: DOTS, MORRIS or QUBIC below
  start: '',       // the position the moves start from (the server's form)
  moves: [],       // moves played from `start`
  redo: [],        // moves undone, newest last
  answer: null,    // the probe answer of the current position
  selection: [],   // Morris: points clicked towards a move
  ticket: 0,       // the newest request; older answers are dropped
  notice: '',      // an error to show with the next drawing (a bad shared URL)
};

// ---------------------------------------------------------------------------
// Talking to the server

// The JSON body of an answer, or the server's error message thrown.
async function bodyOf(response) {
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

async function probe(position) {
  const url = '/api/probe?table=' + encodeURIComponent(state.table.name) +
    '&position=' + encodeURIComponent(position);
  return bodyOf(await fetch(url));
}

// Many positions in one request: the answers in the same order (an entry the
// server refuses is an object with `error`).
async function probeMany(positions) {
  const url = '/api/probe?table=' + encodeURIComponent(state.table.name);
  return bodyOf(await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(positions),
  }));
}

// ---------------------------------------------------------------------------
// Small SVG helpers

function el(name, attributes, parent) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function text(content, attributes, parent) {
  const node = el('text', attributes, parent);
  node.textContent = content;
  return node;
}

// ---------------------------------------------------------------------------
// Dots-and-Boxes: lines in docs/FORMAT.md §3.1 order (horizontal row-major, then vertical)

const DOTS = {
  setUp(table) {
    const [rows, cols] = table.board.split('x').map(Number);
    this.rows = rows;
    this.cols = cols;
    this.lineCount = (rows + 1) * cols + rows * (cols + 1);
  },
  defaultStart(table) { return table.start_position; },
  describe(table) {
    return `Dots-and-Boxes ${table.board}, start ${table.start}, penalty ${table.penalty}`;
  },
  players: ['A (moves first here)', 'B'],
  sides: ['0', '1'],
  line(index) {
    const { rows, cols } = this;
    const horizontal = (rows + 1) * cols;
    if (index < horizontal) {
      const r = Math.floor(index / cols), c = index % cols;
      return { name: `h${r}.${c}`, from: [r, c], to: [r, c + 1] };
    }
    const k = index - horizontal;
    const r = Math.floor(k / (cols + 1)), c = k % (cols + 1);
    return { name: `v${r}.${c}`, from: [r, c], to: [r + 1, c] };
  },
  lineIndex(name) {
    for (let i = 0; i < this.lineCount; i++) if (this.line(i).name === name) return i;
    return -1;
  },
  // The lines of box (r, c): top, bottom, left, right.
  boxLines(r, c) {
    const { rows, cols } = this;
    const v = (rows + 1) * cols + r * (cols + 1) + c;
    return [r * cols + c, (r + 1) * cols + c, v, v + 1];
  },
  complete(position, r, c) {
    return this.boxLines(r, c).every((i) => position[i] === '1');
  },
  apply(position, move) {
    const i = this.lineIndex(move);
    if (i < 0 || position[i] !== '0') throw new Error(`${move} is not an open line`);
    return position.slice(0, i) + '1' + position.slice(i + 1);
  },
  // Replays the moves: the position, who is to move (0 = whoever moves at the
  // start), the owner of each box (0, 1, or 'unknown' if completed before the
  // start) and the score.
  replay(start, moves) {
    let position = start, mover = 0;
    const owners = new Map(), score = [0, 0];
    for (let r = 0; r < this.rows; r++)
      for (let c = 0; c < this.cols; c++)
        if (this.complete(start, r, c)) owners.set(`${r},${c}`, 'unknown');
    for (const move of moves) {
      position = this.apply(position, move);
      let made = 0;
      for (let r = 0; r < this.rows; r++)
        for (let c = 0; c < this.cols; c++)
          if (!owners.has(`${r},${c}`) && this.complete(position, r, c)) {
            owners.set(`${r},${c}`, mover);
            made++;
          }
      score[mover] += made;
      if (made === 0) mover = 1 - mover;
    }
    return { position, mover: String(mover), owners, score };
  },
  valueText(value) { return value > 0 ? `+${value}` : String(value); },
  moveClass(move, best) { return move.value === best.value ? 'best' : 'worse'; },
  choices(answer) {
    return answer.moves.map((m) => ({
      move: m.name, text: `${m.name} ${this.valueText(m.value)}`, cls: this.moveClass(m, answer.moves[0]),
    }));
  },
  status(game, answer) {
    const who = game.mover === '0' ? 'A' : 'B';
    if (answer.moves.length === 0) return `Game over (value ${this.valueText(answer.value)})`;
    return `${who} to move: value ${this.valueText(answer.value)} (${answer.source})`;
  },
  score(game) {
    const before = [...game.owners.values()].filter((o) => o === 'unknown').length;
    return `Score since the start: A ${game.score[0]}, B ${game.score[1]}` +
      (before ? ` (${before} boxes completed before it)` : '');
  },
  draw(svg, game, answer) {
    const cell = 100, margin = 45;
    const width = this.cols * cell + 2 * margin, height = this.rows * cell + 2 * margin;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const at = ([r, c]) => [margin + c * cell, margin + r * cell];
    for (const [key, owner] of game.owners) {
      const [r, c] = key.split(',').map(Number);
      const [x, y] = at([r, c]);
      el('rect', { x, y, width: cell, height: cell, class: `box box-${owner}`, 'data-box': key }, svg);
      if (owner !== 'unknown') {
        text(owner === 0 ? 'A' : 'B', { x: x + cell / 2, y: y + cell / 2, class: 'box-label' }, svg);
      }
    }
    const values = new Map(answer.moves.map((m) => [m.name, m]));
    const best = answer.moves[0];
    for (let i = 0; i < this.lineCount; i++) {
      const line = this.line(i);
      const [x1, y1] = at(line.from), [x2, y2] = at(line.to);
      if (game.position[i] === '1') {
        el('line', { x1, y1, x2, y2, class: 'drawn', 'data-drawn': line.name }, svg);
        continue;
      }
      const move = values.get(line.name);
      // An open line is drawn faint and dashed (a drawn one is solid black), so
      // the empty board does not look finished.
      const group = el('g', { class: 'open ' + (move ? this.moveClass(move, best) : ''), 'data-line': line.name }, svg);
      el('line', { x1, y1, x2, y2, class: 'undrawn' }, group);
      const horizontal = y1 === y2;
      const hit = horizontal
        ? { x: x1 + 12, y: y1 - 18, width: cell - 24, height: 36 }
        : { x: x1 - 18, y: y1 + 12, width: 36, height: cell - 24 };
      el('rect', { ...hit, class: 'hit' }, group);
      if (move) {
        const label = horizontal ? { x: (x1 + x2) / 2, y: y1 - 14 } : { x: x1 + 22, y: (y1 + y2) / 2 };
        text(this.valueText(move.value), { ...label, class: 'value' }, group);
      }
      group.addEventListener('click', () => play(line.name));
    }
    for (let r = 0; r <= this.rows; r++)
      for (let c = 0; c <= this.cols; c++) {
        const [x, y] = at([r, c]);
        el('circle', { cx: x, cy: y, r: 6, class: 'dot' }, svg);
      }
  },
};

// ---------------------------------------------------------------------------
// Morris: points in docs/FORMAT.md §4.1 (nine, Morabaraba) and §4.5 (six) order, moves `d6`,
// `a1-a4`, `...xd7`. A file's `rules` meta names its board.

const MORRIS_BOARDS = {
  nine: {
    name: "Nine Men's Morris",
    size: 7,
    points: ('a1 d1 g1 b2 d2 f2 c3 d3 e3 a4 b4 c4 e4 f4 g4 ' +
      'c5 d5 e5 b6 d6 f6 a7 d7 g7').split(' '),
    tracks: [
      ['a1', 'g1', 'g7', 'a7', 'a1'], ['b2', 'f2', 'f6', 'b6', 'b2'], ['c3', 'e3', 'e5', 'c5', 'c3'],
      ['d1', 'd3'], ['d5', 'd7'], ['a4', 'c4'], ['e4', 'g4'],
    ],
    white: ['a1', 'g1', 'd2', 'c3', 'e3', 'b4', 'f4', 'a4', 'g4'],
    black: ['a7', 'g7', 'd6', 'c5', 'e5', 'b6', 'f6', 'd7', 'd5'],
  },
  six: {
    name: "Six Men's Morris",
    size: 5,
    points: 'a1 c1 e1 b2 c2 d2 a3 b3 d3 e3 b4 c4 d4 a5 c5 e5'.split(' '),
    tracks: [
      ['a1', 'e1', 'e5', 'a5', 'a1'], ['b2', 'd2', 'd4', 'b4', 'b2'],
      ['c1', 'c2'], ['a3', 'b3'], ['d3', 'e3'], ['c4', 'c5'],
    ],
    white: ['a1', 'e1', 'c2', 'b3', 'd3', 'a3'],
    black: ['a5', 'e5', 'c4', 'b4', 'd4', 'e3'],
  },
};

// Morabaraba (docs/FORMAT.md §4.7): the nine board plus the four corner diagonals.
MORRIS_BOARDS.morabaraba = {
  ...MORRIS_BOARDS.nine,
  name: 'Morabaraba',
  tracks: MORRIS_BOARDS.nine.tracks.concat([
    ['a1', 'b2', 'c3'], ['g1', 'f2', 'e3'], ['a7', 'b6', 'c5'], ['g7', 'f6', 'e5'],
  ]),
};

const MORRIS = {
  setUp(table) {
    this.stones = Number(table.stones);
    this.rules = String(table.rules || '').split(':')[0];
    this.board = MORRIS_BOARDS[
      this.rules.startsWith('six') ? 'six' : this.rules === 'morabaraba' ? 'morabaraba' : 'nine'];
  },
  // White and Black spread over the board, as many as the table allows.
  defaultStart() {
    const { points, white, black } = this.board;
    const n = Math.min(this.stones, white.length);
    const cells = points.map((p) =>
      white.slice(0, n).includes(p) ? 'W' : black.slice(0, n).includes(p) ? 'B' : '.');
    return cells.join('') + ' w';
  },
  describe(table) {
    // The board's name says nine (Gasser's rules), six or Morabaraba; other rule sets
    // add theirs.
    const rules = ['gasser', 'six', 'morabaraba'].includes(this.rules) ? '' : ` (${this.rules})`;
    return `${this.board.name} rules${rules}, ${table.stones} stones, ${table.phase} phase`;
  },
  players: ['White', 'Black'],
  sides: ['w', 'b'],
  parse(position) {
    const [cells, side, white, black] = position.trim().split(/\s+/);
    return { cells: cells.split(''), side, hands: [Number(white || 0), Number(black || 0)] };
  },
  format({ cells, side, hands }) {
    return cells.join('') + ' ' + side + (hands[0] || hands[1] ? ` ${hands[0]} ${hands[1]}` : '');
  },
  // The points a move names, in the order they are clicked.
  points(move) {
    const [main, capture] = move.split('x');
    return main.split('-').concat(capture ? [capture] : []);
  },
  apply(position, move) {
    const p = this.parse(position);
    const [main, capture] = move.split('x');
    const parts = main.split('-');
    const stone = p.side === 'w' ? 'W' : 'B';
    const index = (name) => {
      const i = this.board.points.indexOf(name);
      if (i < 0) throw new Error(`${name} is not a point`);
      return i;
    };
    if (parts.length === 2) {
      p.cells[index(parts[1])] = p.cells[index(parts[0])];
      p.cells[index(parts[0])] = '.';
    } else {
      p.cells[index(parts[0])] = stone;
      p.hands[p.side === 'w' ? 0 : 1] -= 1;
    }
    if (capture) p.cells[index(capture)] = '.';
    p.side = p.side === 'w' ? 'b' : 'w';
    return this.format(p);
  },
  replay(start, moves) {
    let position = start;
    for (const move of moves) position = this.apply(position, move);
    return { position, mover: this.parse(position).side };
  },
  choices(answer) {
    return answer.moves.map((m) => ({
      move: m.move, cls: this.moveClass(m, answer.moves[0]),
      // The tie-break among the best moves (docs/FORMAT.md §4.3): replies that go wrong.
      text: `${m.move} ${m.value}` +
        (m.opponent_replies == null ? '' : ` (${m.opponent_errors}/${m.opponent_replies} replies err)`),
    }));
  },
  // Green: as good as the best move; grey: the same result, slower (or a draw
  // when the best is a draw); red: a worse result than the best move's.
  moveClass(move, best) {
    if (move.value === best.value) return 'best';
    return move.value[0] === best.value[0] ? 'even' : 'worse';
  },
  status(game, answer) {
    const who = game.mover === 'w' ? 'White' : 'Black';
    if (answer.moves.length === 0) return `${who} has lost (${answer.value})`;
    const words = { win: 'wins', loss: 'loses', draw: 'draws' }[answer.result] || answer.result;
    const plies = answer.plies === null ? '' : ` in ${answer.plies} plies`;
    return `${who} to move ${words}${plies}: ${answer.value} (${answer.source})`;
  },
  score(game) {
    const p = this.parse(game.position);
    const count = (s) => p.cells.filter((c) => c === s).length;
    return `Stones: White ${count('W')} on the board, Black ${count('B')}` +
      (p.hands[0] || p.hands[1] ? `; in hand ${p.hands[0]} and ${p.hands[1]}` : '');
  },
  at(name) {
    const file = name.charCodeAt(0) - 97, rank = Number(name[1]);
    const step = 420 / (this.board.size - 1);
    return [60 + file * step, 60 + (this.board.size - rank) * step];
  },
  draw(svg, game, answer) {
    svg.setAttribute('viewBox', '0 0 540 540');
    for (const track of this.board.tracks) {
      el('polyline', { points: track.map((p) => this.at(p).join(',')).join(' '), class: 'track' }, svg);
    }
    const cells = this.parse(game.position).cells;
    // Moves still possible after the points clicked so far, and where they go next.
    const sel = state.selection;
    const possible = answer.moves.filter((m) => {
      const points = this.points(m.move);
      return points.length > sel.length && sel.every((p, i) => points[i] === p);
    });
    const next = new Map();
    for (const m of possible) {
      const point = this.points(m.move)[sel.length];
      if (!next.has(point)) next.set(point, m); // moves come best first
    }
    this.board.points.forEach((name, i) => {
      const [x, y] = this.at(name);
      el('circle', { cx: x, cy: y, r: 7, class: 'point' }, svg);
      text(name, { x: x + 24, y: y + 30, class: 'point-label' }, svg);
      if (cells[i] !== '.') el('circle', { cx: x, cy: y, r: 22, class: `stone-${cells[i]}`, 'data-stone': cells[i] }, svg);
      if (sel.includes(name)) el('circle', { cx: x, cy: y, r: 29, class: 'selected' }, svg);
      const move = next.get(name);
      if (move) el('circle', { cx: x, cy: y, r: 29, class: 'choice ' + this.moveClass(move, answer.moves[0]) }, svg);
      const target = el('circle', { cx: x, cy: y, r: 30, class: 'target', 'data-point': name }, svg);
      target.addEventListener('click', () => this.click(name, answer));
    });
  },
  // A click on a point: extends the selection towards a move, plays the move once
  // it is complete, starts again otherwise.
  click(name, answer) {
    const extend = (sel) => answer.moves.filter((m) => {
      const points = this.points(m.move);
      return points.length >= sel.length && sel.every((p, i) => points[i] === p);
    });
    let sel = state.selection.concat([name]);
    if (extend(sel).length === 0) sel = extend([name]).length ? [name] : [];
    const done = extend(sel).find((m) => this.points(m.move).length === sel.length);
    if (done) {
      play(done.move);
      return;
    }
    state.selection = sel;
    render();
  },
};

// ---------------------------------------------------------------------------
// Qubic: 4x4x4 cells, cell = 16 z + 4 y + x (level z from the top, row y,
// column x), drawn as four 4x4 levels; moves are cell numbers. The table is X's
// winning strategy: with X to move the probe names X's winning move; with O to
// move every empty cell is a reply, each probed (one POST) for how soon X wins
// after it.

// The 76 lines of four: the cells start + k d (k = 0..3) for each direction d
// (a nonzero step of -1/0/1 per axis, one of each pair d, -d) and each start
// that keeps all four on the board.
const QUBIC_LINES = (() => {
  const lines = [];
  const inside = (v) => v >= 0 && v < 4;
  for (let dx = -1; dx <= 1; dx++)
    for (let dy = -1; dy <= 1; dy++)
      for (let dz = -1; dz <= 1; dz++) {
        const d = [dx, dy, dz];
        if (d.find((v) => v !== 0) !== 1) continue;
        for (let c = 0; c < 64; c++) {
          const p = [c % 4, Math.floor(c / 4) % 4, Math.floor(c / 16)];
          const cells = [0, 1, 2, 3].map((k) => p.map((v, i) => v + k * d[i]));
          if (cells.every((q) => q.every(inside))) lines.push(cells.map(([x, y, z]) => 16 * z + 4 * y + x));
        }
      }
  return lines;
})();

const QUBIC = {
  setUp() {},
  defaultStart(table) { return table.start; },
  describe(table) {
    const opening = table.first_move === null || table.first_move === undefined
      ? '' : `, X opens at ${table.first_move}`;
    return `Qubic 4x4x4: X's winning strategy (${table.positions} positions stored${opening})`;
  },
  players: ['X', 'O'],
  sides: ['X', 'O'],
  count(position, stone) { return position.split(stone).length - 1; },
  toMove(position) {
    return this.count(position, 'X') === this.count(position, 'O') ? 'X' : 'O';
  },
  // The side with four in a line and the cells of its lines, or null.
  winner(position) {
    for (const stone of ['X', 'O']) {
      const fours = QUBIC_LINES.filter((line) => line.every((c) => position[c] === stone));
      if (fours.length) return { stone, cells: fours.flat() };
    }
    return null;
  },
  apply(position, move) {
    const cell = /^\d+$/.test(move) ? Number(move) : -1;
    if (cell < 0 || cell > 63) throw new Error(`${move} is not a cell (0 to 63)`);
    if (position[cell] !== '.') throw new Error(`cell ${cell} is taken`);
    if (this.winner(position)) throw new Error(`cell ${cell}: the game is over`);
    return position.slice(0, cell) + this.toMove(position) + position.slice(cell + 1);
  },
  replay(start, moves) {
    let position = start;
    for (const move of moves) position = this.apply(position, move);
    return { position, mover: this.toMove(position) };
  },
  // O to move: every reply probed at once; `answer.replies` maps its cell to the
  // answer for the position after it (X to move).
  async more(answer) {
    const position = answer.position;
    if (answer.to_move !== 'O' || this.winner(position)) return;
    const cells = [];
    for (let c = 0; c < 64; c++) if (position[c] === '.') cells.push(c);
    const after = await probeMany(cells.map((c) => position.slice(0, c) + 'O' + position.slice(c + 1)));
    answer.replies = new Map(cells.map((c, i) => [c, after[i]]));
  },
  // X to move: X's winning move if the table has one. O to move: every reply,
  // best first for O (one that wins, then one outside the strategy, then the
  // slowest loss); `plies` counts from this position to X's four.
  choices(answer) {
    if (answer.to_move === 'X') {
      if (answer.result !== 'win') return [];
      return [{
        move: String(answer.move), cls: 'best',
        text: `${answer.move} wins in ${answer.plies} plies (${answer.source})`,
      }];
    }
    if (!answer.replies) return [];
    // `kind`: 0 the reply wins for O, 1 outside the strategy, 2 X wins after it.
    const replies = [...answer.replies].map(([cell, after]) => {
      const move = String(cell);
      if (after.result === 'win') {
        const plies = after.plies + 1;
        return { move, kind: 2, plies, label: String(plies), text: `${cell} loses in ${plies} plies` };
      }
      if (after.result === 'loss') return { move, kind: 0, plies: 0, label: 'four', text: `${cell} wins (four in a line)` };
      const why = after.error ? `: ${after.error}` : '';
      return { move, kind: 1, plies: 0, label: '?', text: `${cell} outside the strategy${why}` };
    });
    replies.sort((a, b) => a.kind - b.kind || b.plies - a.plies || Number(a.move) - Number(b.move));
    const best = replies[0];
    for (const r of replies) {
      if (r.kind === 1) r.cls = 'unknown';
      else if (r.kind === best.kind && r.plies === best.plies) r.cls = 'best';
      else r.cls = r.kind === best.kind ? 'even' : 'worse';
    }
    return replies;
  },
  status(game, answer) {
    const won = this.winner(game.position);
    if (won) return `${won.stone} has four in a line: ${won.stone} wins`;
    if (!game.position.includes('.')) return 'The board is full: a draw';
    if (answer.to_move === 'X') {
      if (answer.result !== 'win') return 'X to move: outside the strategy (the table has no winning move for X here)';
      const how = answer.source === 'strategy' ? "the strategy's move" : 'a forced win by threats';
      return `X to move wins in ${answer.plies} plies: play ${answer.move} (${how})`;
    }
    if (answer.result === 'loss') return `O to move: X wins in ${answer.plies} plies whatever O plays`;
    return 'O to move: outside the strategy (X has no proven win against every reply)';
  },
  score(game) {
    const count = (stone) => this.count(game.position, stone);
    const empty = count('.');
    const stones = `Stones: X ${count('X')}, O ${count('O')}; ${empty} cell${empty === 1 ? '' : 's'} empty`;
    if (game.mover !== 'O' || this.winner(game.position)) return stones;
    return stones + ". A number in a cell: the plies to X's four if O plays there (? outside the strategy)";
  },
  draw(svg, game, answer) {
    const size = 54, gap = 44, margin = 22, head = 26;
    const width = 2 * margin + 8 * size + gap, height = 2 * margin + 2 * (head + 4 * size) + gap;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const won = this.winner(game.position);
    const four = new Set(won ? won.cells : []);
    const choices = new Map(this.choices(answer).map((c) => [c.move, c]));
    const cross = (g, x, y, cls) => {
      const a = size * 0.25, b = size * 0.75;
      el('line', { x1: x + a, y1: y + a, x2: x + b, y2: y + b, class: cls }, g);
      el('line', { x1: x + b, y1: y + a, x2: x + a, y2: y + b, class: cls }, g);
    };
    for (let z = 0; z < 4; z++) {
      const left = margin + (z % 2) * (4 * size + gap);
      const top = margin + head + Math.floor(z / 2) * (head + 4 * size + gap);
      const name = `level ${z}` + (z === 0 ? ' (top)' : z === 3 ? ' (bottom)' : '');
      text(name, { x: left, y: top - 9, class: 'level-label' }, svg);
      for (let y = 0; y < 4; y++)
        for (let x = 0; x < 4; x++) {
          const cell = 16 * z + 4 * y + x;
          const stone = game.position[cell];
          const choice = choices.get(String(cell));
          const open = stone === '.' && !won;
          const classes = ['cell', open ? 'playable' : '', choice ? choice.cls : '', four.has(cell) ? 'four' : ''];
          const g = el('g', { class: classes.filter((c) => c).join(' '), 'data-cell': cell }, svg);
          const [cx, cy] = [left + x * size, top + y * size];
          el('rect', { x: cx, y: cy, width: size, height: size, class: 'square' }, g);
          text(String(cell), { x: cx + 4, y: cy + 11, class: 'cell-number' }, g);
          if (stone === 'X') {
            g.setAttribute('data-stone', 'X');
            cross(g, cx, cy, 'stone-x');
          } else if (stone === 'O') {
            g.setAttribute('data-stone', 'O');
            el('circle', { cx: cx + size / 2, cy: cy + size / 2, r: size * 0.28, class: 'stone-o' }, g);
          } else if (choice && game.mover === 'X') {
            cross(g, cx, cy, 'ghost');
          } else if (choice) {
            text(choice.label, { x: cx + size / 2, y: cy + size / 2 + 3, class: 'value' }, g);
          }
          if (open) g.addEventListener('click', () => play(String(cell)));
        }
    }
  },
};

const GAMES = { 'dots-and-boxes': DOTS, morris: MORRIS, qubic: QUBIC };

// ---------------------------------------------------------------------------
// The page

function current() {
  return state.game.replay(state.start, state.moves);
}

function updateUrl() {
  const params = new URLSearchParams();
  params.set('table', state.table.name);
  if (state.start !== state.game.defaultStart(state.table)) params.set('position', state.start);
  if (state.moves.length) params.set('moves', state.moves.join(','));
  const url = '?' + params.toString().replace(/%2C/g, ',');
  history.replaceState(null, '', url);
  $('share').href = url;
  $('share').textContent = location.href;
}

function render() {
  const game = current();
  const answer = state.answer;
  const svg = $('board');
  svg.replaceChildren();
  state.game.draw(svg, game, answer);
  $('status').textContent = state.game.status(game, answer);
  $('score').textContent = state.game.score(game);
  $('position').value = answer.position;
  const list = $('moves');
  list.replaceChildren();
  const choices = state.game.choices(answer);
  for (const choice of choices) {
    const item = document.createElement('li');
    item.textContent = choice.text;
    item.className = choice.cls;
    item.dataset.move = choice.move;
    item.addEventListener('click', () => play(choice.move));
    list.appendChild(item);
  }
  $('history').textContent = state.moves.length ? state.moves.join(', ') : '(none yet)';
  $('undo').disabled = state.moves.length === 0;
  $('redo').disabled = state.redo.length === 0;
  $('best').disabled = choices.length === 0;
  document.body.dataset.position = answer.position;
  document.body.dataset.moves = state.moves.join(',');
}

// Probes the current position and draws it; then lets the computer move if it is
// its turn. Only the newest request draws.
async function refresh() {
  const ticket = ++state.ticket;
  document.body.dataset.state = 'busy';
  const game = current();
  let answer;
  try {
    answer = await probe(game.position);
    if (state.game.more) await state.game.more(answer);
  } catch (error) {
    if (ticket !== state.ticket) return;
    $('error').textContent = error.message;
    document.body.dataset.state = 'ready';
    return;
  }
  if (ticket !== state.ticket) return;
  state.answer = answer;
  state.selection = [];
  $('error').textContent = state.notice;
  state.notice = '';
  updateUrl();
  render();
  document.body.dataset.state = 'ready';
  const choices = state.game.choices(answer);
  if ($('computer').value === game.mover && choices.length > 0) {
    document.body.dataset.state = 'busy';
    setTimeout(() => {
      if (ticket === state.ticket) play(choices[0].move);
    }, 300);
  }
}

function play(move) {
  try {
    state.game.apply(current().position, move);
  } catch (error) {
    $('error').textContent = error.message;
    return;
  }
  state.moves.push(move);
  state.redo = [];
  refresh();
}

function undo() {
  if (state.moves.length === 0) return;
  state.redo.push(state.moves.pop());
  // With the computer playing one side, go back to a position where the person moves.
  const computer = $('computer').value;
  while (state.moves.length && computer !== '' && current().mover === computer) {
    state.redo.push(state.moves.pop());
  }
  refresh();
}

function redo() {
  if (state.redo.length === 0) return;
  state.moves.push(state.redo.pop());
  refresh();
}

// Selects the table `name` (empty or unknown: the first this page can draw, so
// a server with one table needs no ?table=) and starts from `start` (its default
// when empty), replaying `moves` as far as they are legal there.
async function load(name, start, moves) {
  const drawable = state.tables.filter((t) => GAMES[t.game]);
  let table = drawable.find((t) => t.name === name);
  if (!table) {
    table = drawable[0];
    if (!table) {
      $('error').textContent = 'this page draws no game the server has (' +
        [...new Set(state.tables.map((t) => t.game))].join(', ') + ')';
      return;
    }
    if (name) {
      const known = state.tables.find((t) => t.name === name);
      state.notice = known ? `table ${name}: this page cannot draw ${known.game}; showing ${table.name}`
        : `no table ${name}; showing ${table.name}`;
    }
  }
  state.table = table;
  state.game = GAMES[table.game];
  state.game.setUp(table);
  $('table').value = table.name;
  $('identity').textContent = state.game.describe(table);
  const options = $('computer').options;
  options[1].textContent = state.game.players[0];
  options[2].textContent = state.game.players[1];
  options[1].value = state.game.sides[0];
  options[2].value = state.game.sides[1];
  state.redo = [];
  state.moves = [];
  state.answer = null;
  state.start = state.game.defaultStart(table);
  if (start) {
    try {
      state.start = (await probe(start)).position;
    } catch (error) {
      state.notice = `position ${start}: ${error.message}`;
    }
  }
  for (const move of moves) {
    try {
      state.game.apply(current().position, move);
      state.moves.push(move);
    } catch (error) {
      state.notice = `move ${move}: ${error.message}`;
      break;
    }
  }
  await refresh();
}

async function main() {
  const response = await fetch('/api/tables');
  state.tables = await response.json();
  if (state.tables.length === 0) {
    $('error').textContent = 'the server has no tables';
    return;
  }
  for (const table of state.tables) {
    const option = document.createElement('option');
    option.value = table.name;
    option.textContent = `${table.name} (${table.game})`;
    option.disabled = !GAMES[table.game];
    $('table').appendChild(option);
  }
  $('table').addEventListener('change', () => load($('table').value, '', []));
  $('undo').addEventListener('click', undo);
  $('redo').addEventListener('click', redo);
  $('best').addEventListener('click', () => {
    const choices = state.answer ? state.game.choices(state.answer) : [];
    if (choices.length) play(choices[0].move);
  });
  $('computer').addEventListener('change', refresh);
  $('position-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    // A position the table refuses leaves the game as it is.
    const text = $('position').value;
    document.body.dataset.state = 'busy';
    try {
      await probe(text);
    } catch (error) {
      $('error').textContent = `position ${text}: ${error.message}`;
      document.body.dataset.state = 'ready';
      return;
    }
    load(state.table.name, text, []);
  });
  const params = new URLSearchParams(location.search);
  const moves = (params.get('moves') || '').split(',').filter((m) => m);
  await load(params.get('table') || '', params.get('position') || '', moves);
}

main();
