/** The parsed flags of the reconciler commands (see `src/cli/reconcile-commands.ts`). */

/** The flags every reconciler command accepts (commander's camelCase names). */
export interface ReconcileFlags {
  output: string;
  backend: string;
  specDir?: string;
  triggerBin?: string;
  secretRef: string[];
  lockDir?: string;
  stateDir?: string;
  lockBackend?: string;
  crontabPath?: string;
  cronUser: string;
  cronTimezone?: string;
  systemdUnitDir?: string;
  k8sNamespace?: string;
  k8sImage?: string;
  kubeconfig?: string;
  k8sSecret?: string;
  k8sRender?: string | boolean;
  awsRegion?: string;
  awsScheduleGroup?: string;
  awsTargetArn?: string;
  awsRoleArn?: string;
}
