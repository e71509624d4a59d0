/** The parsed flags of the reconciler commands (see `src/cli/reconcile-commands.ts`). */
import type { BackendOptions } from '../../reconcile/backends/options.js';

/** The backend flags, named as in {@link BackendOptions} (one definition of each). */
type BackendFlags = Pick<
  BackendOptions,
  | 'crontabPath'
  | 'cronUser'
  | 'cronTimezone'
  | 'systemdUnitDir'
  | 'k8sNamespace'
  | 'k8sImage'
  | 'kubeconfig'
  | 'k8sSecret'
  | 'k8sRender'
  | 'awsRegion'
  | 'awsScheduleGroup'
  | 'awsTargetArn'
  | 'awsRoleArn'
>;

/** The flags every reconciler command accepts (commander's camelCase names). */
export interface ReconcileFlags extends BackendFlags {
  output: string;
  backend: string;
  specDir?: string;
  triggerBin?: string;
  secretRef: string[];
  lockDir?: string;
  stateDir?: string;
  lockBackend?: string;
  /** `--report-to URL` (SPEC §15). */
  reportTo?: string;
  /** `--report-secret-ref REF`, repeatable. */
  reportSecretRef?: string[];
}
