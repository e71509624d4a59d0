#!/usr/bin/env node
/**
 * The `cronix` binary. `cronix trigger` runs once per fire, so it is routed to
 * the shim before commander or any other command's code is loaded; every
 * other command goes through `program.ts`.
 */
const args = process.argv.slice(2);
if (args[0] === 'trigger') {
  const { main } = await import('../shim/main.js');
  process.exitCode = await main(args.slice(1));
} else {
  const { run } = await import('./program.js');
  await run(process.argv);
}
