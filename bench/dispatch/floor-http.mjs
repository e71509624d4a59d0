// Floor: a bare loop sending N POSTs at each instant with node's http.request and a keep-alive agent.
import http from 'node:http';
const [url, nArg, tArg] = process.argv.slice(2);
const N = Number(nArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const target = new URL(url);
console.log('ready');
setInterval(() => {}, 60_000); // alive until the bench stops it: its CPU time is read after the burst
for (const at of tArg.split(',').map(Number))
  setTimeout(() => {
    for (let i = 0; i < N; i++) {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: `/j${i}`,
          method: 'POST',
          agent,
          headers: { 'content-length': 0 },
        },
        (res) => res.resume(),
      );
      req.on('error', () => {});
      req.end();
    }
  }, at - Date.now());
