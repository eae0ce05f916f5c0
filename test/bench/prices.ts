/**
 * AWS list prices the cost model (`./cost-model.ts`) bills with: one region, one date. They change;
 * check them against the AWS pricing pages before quoting a figure, and change `asOf` with them.
 * On-demand, no free tier, no savings plans or reserved capacity, the first volume tier.
 */
export const PRICES = {
  region: 'us-east-1',
  /**
   * The list prices as published in 2025 (DynamoDB's after its November 2024 change), written down on
   * 2026-11-27 from those pages without a newer look (this machine reaches no pricing page).
   */
  asOf: '2025 list prices, written down 2026-11-27',
  lambda: {
    /** Per request. */
    request: 0.2 / 1e6,
    /** Per GB-second on arm64 (the stack's functions), billed per millisecond. */
    gbSecondArm: 0.0000133334,
  },
  /** API Gateway HTTP API, per request (each 512 KB counts as one). */
  httpApiRequest: 1.0 / 1e6,
  /** SQS standard queue, per request (each 64 KB chunk counts as one). */
  sqsRequest: 0.4 / 1e6,
  /** DynamoDB on-demand (since the November 2024 price change): per write and per read request unit. */
  dynamodb: { writeUnit: 0.625 / 1e6, readUnit: 0.125 / 1e6 },
  s3: { put: 0.005 / 1000, get: 0.0004 / 1000 },
  /** CloudWatch Logs standard ingestion, per GB (each event counts 26 bytes of overhead). */
  logsIngestGb: 0.5,
  kmsRequest: 0.03 / 10_000,
  secretsManagerCall: 0.05 / 10_000,
  stepFunctions: {
    /** Standard workflows: per state transition. */
    standardTransition: 0.025 / 1000,
    /** Express workflows: per request, and per GB-second at 64 MB billed in 100 ms steps (the first tier). */
    expressRequest: 1.0 / 1e6,
    expressGbSecond: 0.00001667,
  },
} as const;
