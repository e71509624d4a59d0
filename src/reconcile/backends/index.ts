/**
 * The backend factory: `--backend NAME` plus the command-line flags → a {@link Backend}.
 * Each backend lives in its own module, loaded only when chosen (the Kubernetes and AWS
 * clients cost start-up time), and exports `create<X>Backend(options: BackendOptions)`.
 */
import type { Backend, BackendName } from '../backend.js';
import type { BackendOptions } from './options.js';

/** Every backend name `--backend` accepts. */
export const BACKEND_NAMES: readonly BackendName[] = [
  'crontab',
  'systemd',
  'kubernetes',
  'aws-scheduler',
];

export type { BackendOptions } from './options.js';

/** Whether `name` is a backend name. */
export function isBackendName(name: string): name is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(name);
}

/**
 * Loads and creates the backend `name`.
 * @throws whatever the backend's factory throws for unusable options (with a message naming the flag).
 */
export async function createBackend(name: BackendName, options: BackendOptions): Promise<Backend> {
  switch (name) {
    case 'crontab':
      return (await import('./crontab.js')).createCrontabBackend(options);
    case 'systemd':
      return (await import('./systemd.js')).createSystemdBackend(options);
    case 'kubernetes':
      return (await import('./kubernetes.js')).createKubernetesBackend(options);
    case 'aws-scheduler':
      return (await import('./aws.js')).createAwsBackend(options);
  }
}
