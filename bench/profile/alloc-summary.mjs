/**
 * `node bench/profile/alloc-summary.mjs <file.heapprofile> [top]`: the bytes a sampled
 * allocation profile (`allocations.mjs`, or node's `--heap-prof`) attributes to each function
 * itself, largest first.
 */
import { readFileSync } from 'node:fs';

const [file, top = '40'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const bytes = new Map();
let total = 0;
const walk = (node) => {
  const f = node.callFrame;
  const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
  bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const child of node.children) walk(child);
};
walk(profile.head);
console.log(`${(total / 1e6).toFixed(1)} MB sampled`);
for (const [name, b] of [...bytes].sort((x, y) => y[1] - x[1]).slice(0, Number(top)))
  console.log(`${(b / 1e6).toFixed(2).padStart(8)} MB  ${name}`);
