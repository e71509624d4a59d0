/** Resolves with the promise's settlement, or 'timeout' after `ms` (a shutdown's deadlines). */
export async function within(p: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), ms);
    timer.unref();
  });
  try {
    return await Promise.race([
      p.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
