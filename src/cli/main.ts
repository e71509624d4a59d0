#!/usr/bin/env node
/**
 * The `cronix` binary. `cronix trigger` runs once per fire, so it is routed to
 * the shim before commander or any other command's code is loaded; every
 * other command goes through `program.ts`.
 */
const args = process.argv.slice(2);
if (args[0] === 'trigger') {
  // A SIGTERM/SIGINT that arrives while the shim's code loads is held, then
  // handed to the shim once it listens (it stops the fire: exit 75), instead
  // of the default disposition killing the process.
  const held: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals): void => void held.push(signal);
  process.on('SIGTERM', hold).on('SIGINT', hold);
  const { main } = await import('../shim/main.js');
  const running = main(args.slice(1)); // listens synchronously, before its first await
  process.off('SIGTERM', hold).off('SIGINT', hold);
  for (const signal of held) process.emit(signal, signal);
  process.exitCode = await running;
} else {
  const { run } = await import('./program.js');
  await run(process.argv);
}
