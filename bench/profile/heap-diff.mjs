/**
 * Reads V8 heap snapshots (`heap-snapshot.mjs`, or any `.heapsnapshot`), not part of
 * `npm run bench`:
 *
 *   node bench/profile/heap-diff.mjs a.heapsnapshot [b.heapsnapshot]
 *     self size and count by node type and constructor (b − a when two are given)
 *   node bench/profile/heap-diff.mjs a [b] --shapes object:Object
 *     the objects of one type:name grouped by their property names (what each kind is)
 *   node bench/profile/heap-diff.mjs a --edges object:Generator
 *     what the objects of one type:name point to, and what holds them (retainers)
 *
 * A snapshot of a 10,000-job daemon is ~40–90 MB of JSON: give node room
 * (`--max-old-space-size=8000`).
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (flag) => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const shapesOf = option('--shapes');
const edgesOf = option('--edges');
const top = Number(option('--top') ?? 40);
const [fileA, fileB] = args;

/** One snapshot, with what the readers below need of its flat arrays. */
function load(file) {
  const s = JSON.parse(readFileSync(file, 'utf8'));
  const meta = s.snapshot.meta;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const field = (name) => meta.node_fields.indexOf(name);
  const efield = (name) => meta.edge_fields.indexOf(name);
  const snap = {
    s,
    nf,
    ef,
    count: s.nodes.length / nf,
    types: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    ti: field('type'),
    ni: field('name'),
    si: field('self_size'),
    eci: field('edge_count'),
    eti: efield('type'),
    eni: efield('name_or_index'),
    eto: efield('to_node'),
  };
  // the first edge of each node: edges are stored node after node
  snap.firstEdge = new Uint32Array(snap.count + 1);
  for (let n = 0, e = 0; n < snap.count; n++) {
    snap.firstEdge[n] = e;
    e += s.nodes[n * nf + snap.eci] * ef;
  }
  snap.firstEdge[snap.count] = s.edges.length;
  return snap;
}

/** `type:name` of node `n`; strings and numbers by type alone. */
function label(snap, n) {
  const type = snap.types[snap.s.nodes[n * snap.nf + snap.ti]];
  if (type.includes('string') || type === 'number') return `${type}:`;
  return `${type}:${snap.s.strings[snap.s.nodes[n * snap.nf + snap.ni]].slice(0, 60)}`;
}

function edgeName(snap, e) {
  const type = snap.edgeTypes[snap.s.edges[e + snap.eti]];
  if (type === 'element' || type === 'hidden') return `[${type}]`;
  return String(snap.s.strings[snap.s.edges[e + snap.eni]]);
}

/** Count and self size per key (`keyOf` returns undefined to leave a node out). */
function tally(snap, keyOf) {
  const out = new Map();
  for (let n = 0; n < snap.count; n++) {
    const key = keyOf(n);
    if (key === undefined) continue;
    const t = out.get(key) ?? { n: 0, size: 0 };
    t.n += 1;
    t.size += snap.s.nodes[n * snap.nf + snap.si];
    out.set(key, t);
  }
  return out;
}

function print(a, b) {
  const keys = new Set([...a.keys(), ...(b?.keys() ?? [])]);
  const zero = { n: 0, size: 0 };
  const rows = [...keys].map((key) => {
    const x = a.get(key) ?? zero;
    const y = b?.get(key) ?? zero;
    return b ? { key, n: y.n - x.n, size: y.size - x.size } : { key, ...x };
  });
  rows.sort((p, q) => Math.abs(q.size) - Math.abs(p.size));
  for (const r of rows.slice(0, top))
    console.log(`${String(r.size).padStart(11)} B ${String(r.n).padStart(8)}  ${r.key}`);
}

const a = load(fileA);
const b = fileB === undefined ? undefined : load(fileB);
if (edgesOf !== undefined) {
  const out = new Map();
  const held = new Map();
  const matches = new Uint8Array(a.count);
  for (let n = 0; n < a.count; n++) if (label(a, n) === edgesOf) matches[n] = 1;
  for (let n = 0; n < a.count; n++)
    for (let e = a.firstEdge[n]; e < a.firstEdge[n + 1]; e += a.ef) {
      const to = a.s.edges[e + a.eto] / a.nf;
      if (matches[n]) {
        const key = `${edgeName(a, e)} -> ${label(a, to)}`;
        out.set(key, (out.get(key) ?? 0) + 1);
      }
      if (matches[to]) {
        const key = `${label(a, n)} .${edgeName(a, e)}`;
        held.set(key, (held.get(key) ?? 0) + 1);
      }
    }
  const list = (m) => [...m].sort((x, y) => y[1] - x[1]).slice(0, top);
  console.log(`${matches.reduce((x, y) => x + y, 0)} × ${edgesOf}\n-- points to`);
  for (const [key, n] of list(out)) console.log(`${String(n).padStart(8)}  ${key}`);
  console.log('-- held by');
  for (const [key, n] of list(held)) console.log(`${String(n).padStart(8)}  ${key}`);
} else if (shapesOf !== undefined) {
  const shape = (snap) => (n) => {
    if (label(snap, n) !== shapesOf) return undefined;
    const names = [];
    for (let e = snap.firstEdge[n]; e < snap.firstEdge[n + 1]; e += snap.ef)
      if (snap.edgeTypes[snap.s.edges[e + snap.eti]] === 'property') names.push(edgeName(snap, e));
    return names.join(',').slice(0, 160);
  };
  print(tally(a, shape(a)), b && tally(b, shape(b)));
} else {
  const total = (snap) =>
    snap.s.nodes.filter((_, i) => i % snap.nf === snap.si).reduce((x, y) => x + y, 0);
  console.log(
    `total ${(total(a) / 1e6).toFixed(1)} MB${b ? ` → ${(total(b) / 1e6).toFixed(1)} MB` : ''}`,
  );
  print(
    tally(a, (n) => label(a, n)),
    b && tally(b, (n) => label(b, n)),
  );
}
