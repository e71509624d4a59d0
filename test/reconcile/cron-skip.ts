/**
 * Why the real-cron end-to-end test cannot run here, or null when it can. Outside CI the test
 * skips with this reason in its name and a warning line, never silently.
 */
export function cronSkipReason(cronPath: string | undefined, isRoot: boolean): string | null {
  const missing =
    cronPath === undefined ? 'Debian cron is not installed (apt-get install cron)' : '';
  const notRoot = isRoot
    ? ''
    : 'not running as root (cron reads only root-owned /etc/cron.d files)';
  const why = [missing, notRoot].filter((s) => s !== '').join(' and ');
  return why === '' ? null : why;
}
