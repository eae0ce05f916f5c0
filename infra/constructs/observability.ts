import { Validations } from 'aws-cdk-lib';
import type * as cw from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { type AlarmKey, addAlarms, type WatchedResources } from './alarms.ts';
import { addDashboard, type FunctionGroup } from './dashboard.ts';

// Re-exported so the whole contract of the dashboard is importable from here; functions should import
// `./metric-names.ts` itself, which keeps aws-cdk-lib out of their bundles.
export { APP_METRICS, type AppMetricName, METRIC, METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';

export type ObservabilityProps = WatchedResources & {
  /** Prefix of the dashboard and alarm names (the stack name). */
  name: string;
  groups: readonly FunctionGroup[];
  /** Subscribe this address to the alarm topic (created unless `alarmTopicArn` is given). */
  alarmEmail?: string;
  /** Send alarms to this existing topic. */
  alarmTopicArn?: string;
  /** Below this many requests in 5 minutes the 5xx-rate alarm stays OK, so one error at night is no page. */
  min5xxRequests?: number;
};

/**
 * The CloudWatch dashboard (infra/constructs/dashboard.ts) and the alarms of the service
 * (infra/constructs/alarms.ts), and the optional SNS topic the alarms notify.
 */
export class Observability extends Construct {
  readonly dashboard: cw.Dashboard;
  readonly alarms: Record<AlarmKey, cw.Alarm>;
  readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const min5xx = props.min5xxRequests ?? 100;
    this.alarmTopic = this.topic(props);
    this.alarms = addAlarms(this, { ...props, min5xx, topic: this.alarmTopic });
    this.dashboard = addDashboard(this, { ...props, alarms: this.alarms, min5xx });
  }

  private topic(props: ObservabilityProps): sns.ITopic | undefined {
    let topic: sns.ITopic | undefined;
    if (props.alarmTopicArn) {
      topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);
    } else if (props.alarmEmail) {
      const created = new sns.Topic(this, 'AlarmTopic', { displayName: `Flowgate alarms (${props.name})`, enforceSSL: true });
      // CloudWatch can publish to an encrypted topic only with a customer managed key whose policy
      // admits it (not the AWS managed alias/aws/sns key); alarm messages name a metric and a state.
      Validations.of(created).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'Alarm notifications carry only alarm names, metrics and states; encrypting would need a customer managed KMS key that CloudWatch may use',
      });
      topic = created;
    }
    if (topic && props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    return topic;
  }
}
