// Floor: a bare loop sending N POSTs at each instant with undici's Agent.request.
import { Agent } from 'undici';
const [url, nArg, tArg] = process.argv.slice(2);
const N = Number(nArg);
const agent = new Agent({ connections: 256, pipelining: 1 });
const origin = new URL(url).origin;
console.log('ready');
setInterval(() => {}, 60_000); // alive until the bench stops it: its CPU time is read after the burst
for (const at of tArg.split(',').map(Number))
  setTimeout(() => {
    for (let i = 0; i < N; i++)
      agent.request({ origin, path: `/j${i}`, method: 'POST' }).then(
        (r) => r.body.dump(),
        () => {},
      );
  }, at - Date.now());
