/**
 * The options every backend factory receives (`create<X>Backend(options)`), built by the CLI
 * from the flags of SPEC §6. Kept apart from `index.ts` so backends can import the type without
 * an import cycle through the factory.
 */

import type { ReportTarget } from '../backend.js';

/** Everything a backend may need from the command line (SPEC §6). */
export interface BackendOptions {
  /** `--spec-dir`, absolute: where the shim reads `<app>.<job>.json`. */
  specDir: string;
  /** `--trigger-bin`, absolute: the cronix binary the host scheduler runs. */
  triggerBin: string;
  /**
   * The argv prefix that runs cronix on the host: `[triggerBin]` for a native executable, or
   * `[<absolute node>, triggerBin]` for a JavaScript entry (`.mjs`/`.js`/`.cjs`), because the
   * PATH of cron and systemd may not contain `node`. Append `trigger`, `<app>.<job>`,
   * then {@link shimArgs}.
   */
  triggerCommand: string[];
  /**
   * Flags for the installed `cronix trigger` command line, after `<app>.<job>`:
   * `--spec-dir DIR` always, then `--lock-dir`, `--state-dir`, `--lock-backend`, `--report-to`
   * when given.
   */
  shimArgs: string[];
  /**
   * `--report-to URL` with its `--report-secret-ref` refs (SPEC §15): recorded in every spec file,
   * and `--report-to` is rendered into what each backend installs.
   */
  report?: ReportTarget;
  /** The process environment (for `AWS_*`, `KUBECONFIG`, `TZ`…). */
  env: NodeJS.ProcessEnv;

  /** crontab: `--crontab-path`, a system crontab file; absent → the user's crontab via crontab(1). */
  crontabPath?: string;
  /** crontab: `--cron-user`, the user field of system files (default `root`). */
  cronUser: string;
  /** crontab: `--cron-timezone`, the cron daemon's zone (default: detected from the host). */
  cronTimezone?: string;

  /** systemd: `--systemd-unit-dir` (default `/etc/systemd/system`). */
  systemdUnitDir?: string;

  /** kubernetes: `--k8s-namespace`. */
  k8sNamespace?: string;
  /** kubernetes: `--k8s-image`, the image holding the cronix binary. */
  k8sImage?: string;
  /** kubernetes: `--kubeconfig` (default: the client library's discovery). */
  kubeconfig?: string;
  /** kubernetes: `--k8s-secret`, the Secret whose keys become the shim's env. */
  k8sSecret?: string;
  /** kubernetes: `--k8s-render [file]`: render YAML instead of calling the API (`true` = stdout). */
  k8sRender?: string | boolean;

  /** aws-scheduler: `--aws-region`. */
  awsRegion?: string;
  /** aws-scheduler: `--aws-schedule-group`. */
  awsScheduleGroup?: string;
  /** aws-scheduler: `--aws-target-arn`. */
  awsTargetArn?: string;
  /** aws-scheduler: `--aws-role-arn`. */
  awsRoleArn?: string;
}
