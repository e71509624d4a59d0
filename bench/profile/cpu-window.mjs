/**
 * `node bench/profile/cpu-window.mjs <file.cpuprofile> [fromMs] [toMs]`: where a burst's CPU
 * went, from a `--cpu-prof` profile of a dispatch bench's `cronix serve` (not part of
 * `npm run bench`):
 *
 *   CRONIX_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval=250" \
 *     node --import tsx bench/one.ts 'cronix serve \(SQLite\)' 10000
 *   node bench/profile/cpu-window.mjs /tmp/prof/*.cpuprofile 0 1500
 *
 * The window is in ms from the first sample inside the scheduler's `dueTurn` (the instant's
 * launches). Prints the share per file, per function itself (self) and per function with what it
 * called (inclusive; MATCH=<regex> narrows that list).
 */
import { readFileSync } from 'node:fs';

const [file, from = '0', to = '1e9'] = process.argv.slice(2);
const top = Number(process.env.TOP ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
const name = (n) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;

let clock = profile.startTime;
const times = profile.timeDeltas.map((d) => (clock += d));
const stack = function* (sample) {
  for (let id = sample; id !== undefined; id = parent.get(id)) yield nodes.get(id);
};
const start = times.find((_, i) =>
  [...stack(profile.samples[i])].some((n) => n.callFrame.functionName === 'dueTurn'),
);
if (start === undefined) throw new Error('no sample inside dueTurn: did the instant come?');
const lo = start + Number(from) * 1000;
const hi = start + Number(to) * 1000;

const self = new Map();
const inclusive = new Map();
const perFile = new Map();
let total = 0;
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i] < lo || times[i] > hi) continue;
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  total += ms;
  const leaf = nodes.get(profile.samples[i]);
  add(self, name(leaf), ms);
  add(perFile, leaf.callFrame.url.split('/').pop() || leaf.callFrame.functionName, ms);
  const seen = new Set();
  for (const n of stack(profile.samples[i])) seen.add(name(n));
  for (const k of seen) add(inclusive, k, ms);
}
const match = new RegExp(process.env.MATCH ?? '.');
const list = (title, m, filter = () => true) => {
  console.log(`-- ${title}`);
  for (const [k, ms] of [...m]
    .filter(([k]) => filter(k))
    .sort((x, y) => y[1] - x[1])
    .slice(0, top))
    console.log(
      `${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)} %  ${k}`,
    );
};
console.log(`window ${total.toFixed(0)} ms of samples`);
list('by file', perFile);
list('self', self);
list('inclusive', inclusive, (k) => match.test(k));
