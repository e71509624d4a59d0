// croner: N jobs with a six-field pattern for the instant T, each a POST through undici.
import { Cron } from 'croner';
import { Agent } from 'undici';
const [url, nArg, tArg] = process.argv.slice(2);
const N = Number(nArg);
const T = new Date(Number(tArg));
const agent = new Agent({ connections: 256 });
const origin = new URL(url).origin;
const pattern = `${T.getUTCSeconds()} ${T.getUTCMinutes()} ${T.getUTCHours()} * * *`;
for (let i = 0; i < N; i++)
  new Cron(pattern, { timezone: 'UTC' }, () => {
    agent.request({ origin, path: `/j${i}`, method: 'POST' }).then(
      (r) => r.body.dump(),
      () => {},
    );
  });
console.log('ready');
