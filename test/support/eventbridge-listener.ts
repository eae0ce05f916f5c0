// The tests' EventBridge: the local stack's PutEvents endpoint (infra/local/eventbridge.ts), which
// records every request and can refuse entries or whole requests as AWS does.
export { type PutEntry, type PutRequest, startEventBridgeListener } from '../../infra/local/eventbridge.ts';
