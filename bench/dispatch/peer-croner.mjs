// croner: N jobs with a six-field pattern for the instant T, each a POST through undici.
import { Cron } from 'croner';
import { Agent } from 'undici';
const [url, nArg, tArg] = process.argv.slice(2);
const N = Number(nArg);
// the instant T, or several in one minute (comma separated): one pattern fires at each
const instants = tArg.split(',').map((t) => new Date(Number(t)));
const T = instants[0];
const agent = new Agent({ connections: 256 });
const origin = new URL(url).origin;
const pattern = `${instants.map((t) => t.getUTCSeconds()).join(',')} ${T.getUTCMinutes()} ${T.getUTCHours()} * * *`;
for (let i = 0; i < N; i++)
  new Cron(pattern, { timezone: 'UTC' }, () => {
    agent.request({ origin, path: `/j${i}`, method: 'POST' }).then(
      (r) => r.body.dump(),
      () => {},
    );
  });
console.log('ready');
