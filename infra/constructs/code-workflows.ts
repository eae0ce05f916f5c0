import { CustomResource, type Stack } from 'aws-cdk-lib';
import { relative, resolve } from 'node:path';
import { formatError, loadWorkflows } from '../../cli/files.ts';
import type { FolderWorkflow } from '../../shared/domain/workflow-code.ts';
import { grantsOfWorker } from '../iam.ts';
import { releaseDigest } from '../release.ts';
import type { FlowgateStackProps } from '../settings.ts';
import type { Functions } from './functions.ts';
import type { Bindable } from './route-function.ts';

/**
 * The stack's workflows (docs/workflows-as-code.md "With the stack"): with the `workflowsDir` context, the
 * folder's workflow files are checked at synth (a bad file fails the synth, as `flowgate validate`
 * would) and applied to `workflowsAccount` by a custom resource after every function is in place.
 */
export function addStackWorkflows(stack: Stack, opts: { props: FlowgateStackProps; functions: Functions; resources: Bindable }) {
  const w = opts.props.workflows;
  if (!w) return undefined;
  if (!/^acc_[0-9a-z]{26}$/.test(w.account)) throw new Error(`workflowsAccount must be an account id (acc_…), got ${w.account}`);
  const dir = resolve(w.dir);
  const { files, errors } = loadWorkflows([dir], dir);
  if (errors.length) throw new Error(`workflowsDir ${w.dir} has invalid workflow files:\n${errors.map(formatError).join('\n')}`);
  const folder: FolderWorkflow[] = files.map((f) => {
    const { key: _key, $schema: _schema, ...settings } = f.workflow;
    return {
      key: f.workflow.key,
      settings: { ...settings, origin: `cdk deploy ${stack.stackName}: ${relative(process.cwd(), resolve(dir, f.file)) || f.file}` },
    };
  });
  const apply = opts.functions.create('code/apply', { timeoutSeconds: 300 }).bind(opts.resources, grantsOfWorker('code/apply'));
  opts.functions.group('Sweep', apply);
  const resource = new CustomResource(stack, 'StackWorkflows', {
    serviceToken: apply.functionArn,
    resourceType: 'Custom::FlowgateWorkflows',
    properties: {
      Account: w.account,
      ...(w.owner ? { Owner: w.owner } : {}),
      Prune: String(w.prune ?? false),
      Workflows: JSON.stringify(folder),
      // Applied again at every release (a console edit since is put back), not only when the files change.
      Release: releaseDigest(stack.resolve(opts.functions.environment)),
    },
  });
  // After every function of the release is in place: the workflows meet the code that runs them.
  for (const f of opts.functions.all()) if (f !== apply) resource.node.addDependency(f);
  return apply;
}
