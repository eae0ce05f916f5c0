/**
 * AWS list prices the cost model (`./cost-model.ts`) bills with: one region, one date, each with the
 * page it is read from. They change; check them against those pages before quoting a figure, and
 * change `asOf` with them. On-demand, no free tier (Lambda's 1 M requests, DynamoDB's 25 GB,
 * CloudWatch's 10 alarms and 3 dashboards, ...), no savings plans or reserved capacity, the first
 * volume tier.
 */
export const PRICES = {
  region: 'us-east-1',
  /**
   * The list prices as published in 2025 (DynamoDB's after its November 2024 change, Lambda's INIT
   * billing from August 2025), written down on 2026-11-27 from those pages without a newer look (this
   * machine reaches no pricing page).
   */
  asOf: '2025 list prices, written down 2026-11-27',
  /** https://aws.amazon.com/lambda/pricing/ */
  lambda: {
    /** Per request. */
    request: 0.2 / 1e6,
    /**
     * Per GB-second on arm64 (the stack's functions), billed per millisecond. Since 1 August 2025 the
     * INIT phase of an on-demand function (zip package, managed runtime) is billed at the same rate.
     */
    gbSecondArm: 0.0000133334,
  },
  /** API Gateway HTTP API, per request (each 512 KB counts as one): https://aws.amazon.com/api-gateway/pricing/ */
  httpApiRequest: 1.0 / 1e6,
  /** SQS standard queue, per request (each 64 KB chunk counts as one): https://aws.amazon.com/sqs/pricing/ */
  sqsRequest: 0.4 / 1e6,
  /** DynamoDB on-demand, Standard table class: https://aws.amazon.com/dynamodb/pricing/on-demand/ */
  dynamodb: {
    /** Per write and per read request unit (since the November 2024 price change). */
    writeUnit: 0.625 / 1e6,
    readUnit: 0.125 / 1e6,
    /** Data storage, per GB-month: items and global secondary index entries, each with 100 bytes of overhead. */
    storageGbMonth: 0.25,
    /** Continuous backups (point-in-time recovery), per GB-month of the table's size (its items; not its GSIs). */
    pitrGbMonth: 0.2,
  },
  /** https://aws.amazon.com/s3/pricing/ */
  s3: { put: 0.005 / 1000, get: 0.0004 / 1000 },
  /** CloudWatch: https://aws.amazon.com/cloudwatch/pricing/ */
  cloudwatch: {
    /** Logs, standard class: ingestion per GB (each event counts 26 bytes of overhead). */
    logsIngestGb: 0.5,
    /** Logs storage (archive) per GB-month, of the compressed size (we bill the raw size: an upper bound). */
    logsStorageGbMonth: 0.03,
    /** Per dashboard a month. */
    dashboardMonth: 3.0,
    /** Per metric an alarm watches a month, standard resolution (a metric-math alarm pays for each metric it reads). */
    alarmMetricMonth: 0.1,
    /** The same at high resolution (a period under 60 s). */
    highResolutionAlarmMetricMonth: 0.3,
    compositeAlarmMonth: 0.5,
    /** Per custom metric (a name with one set of dimension values) a month, the first 10,000. */
    customMetricMonth: 0.3,
  },
  /** https://aws.amazon.com/kms/pricing/ */
  kms: {
    request: 0.03 / 10_000,
    /** A customer managed key a month; each of its first two yearly rotations adds the same again. */
    keyMonth: 1.0,
  },
  /** https://aws.amazon.com/secrets-manager/pricing/ */
  secretsManager: { call: 0.05 / 10_000, secretMonth: 0.4 },
  /**
   * EventBridge: a scheduled rule's invocations are events of AWS itself, not billed
   * (https://aws.amazon.com/eventbridge/pricing/); what it invokes is (the sweep's Lambda and reads).
   */
  eventBridgeScheduledRuleInvocation: 0,
  /** https://aws.amazon.com/step-functions/pricing/ */
  stepFunctions: {
    /** Standard workflows: per state transition, "each time a step of your workflow is executed ... including retries". */
    standardTransition: 0.025 / 1000,
    /** Express workflows: per request, and per GB-second at 64 MB billed in 100 ms steps (the first tier). */
    expressRequest: 1.0 / 1e6,
    expressGbSecond: 0.00001667,
  },
} as const;
