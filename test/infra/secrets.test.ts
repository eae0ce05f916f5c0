import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import type { FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { allResources, isTriggerProvider, templatesOf } from '../support/template.ts';

// Account secrets on AWS: one KMS key (the stack's own, or the operator's), and only the functions
// that seal or open secrets may use it, each with the one action it needs and the key in SECRETS_KEY_ID.

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

function build(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowgateStack(app, 'flowgate-test', { stage: 'test', ...props });
  const templates = templatesOf(stack);
  const resources = allResources(templates);
  const roleOf = (fn: Resource) => fn.Properties.Role['Fn::GetAtt'][0] as string;
  /** Per function (named by its role's description): its KMS actions with their resources, and its SECRETS_KEY_ID. */
  const functions = Object.entries(resources)
    .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && !isTriggerProvider(id))
    .map(([, fn]) => {
      const role = roleOf(fn);
      const handler = String(resources[role]?.Properties.Description).replace('Flowgate function ', '');
      const statements = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === role))
        .flatMap((p) => list<{ Action: string | string[]; Resource: unknown }>(p.Properties.PolicyDocument.Statement));
      const kms = statements.filter((s) => list(s.Action).some((a) => a.startsWith('kms:')));
      const ses = statements.filter((s) => list(s.Action).some((a) => a.startsWith('ses:')));
      const env = fn.Properties.Environment.Variables;
      return { handler, kms, ses, keyId: env.SECRETS_KEY_ID as unknown, sesIdentity: env.SES_IDENTITY as unknown };
    });
  return { templates, resources, functions };
}

const SEALING = ['http/secrets/create', 'http/secrets/update', 'http/channels/create'];
// Approval channels' write-only fields are sealed with the same key: their test, Slack's requests and the notify worker open them.
const OPENING = ['worker/execute', 'worker/notify', 'http/channels/test', 'http/integrations/slack-interactions'];
/** Changing one write-only field of a channel opens the others and seals them again. */
// The console's one function of forms that handle secrets (a secret's create and its value replaced, a
// channel's create and its fields changed, its test), and no other console function.
const BOTH = ['http/channels/update', 'http/console/secrets'];

const built = build();

describe('account secrets in the stack', () => {
  it('creates a KMS key with rotation that outlives the stack', () => {
    const { resources } = built;
    const keys = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const key = keys[0]?.[1] as Resource;
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
  });

  it('lets the secret-writing routes generate data keys and the workers decrypt, with the key in SECRETS_KEY_ID, and no other function touch it', () => {
    const { resources, functions } = built;
    const [keyId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::KMS::Key')!;
    const keyArn = { 'Fn::GetAtt': [keyId, 'Arn'] };
    for (const f of functions) {
      if (SEALING.includes(f.handler)) {
        expect(f.kms, f.handler).toEqual([expect.objectContaining({ Action: 'kms:GenerateDataKey', Resource: keyArn })]);
        expect(f.keyId, f.handler).toEqual(keyArn);
      } else if (BOTH.includes(f.handler)) {
        expect(f.kms.flatMap((s) => list(s.Action)).sort(), f.handler).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
        expect(
          f.kms.map((s) => s.Resource),
          f.handler,
        ).toEqual([keyArn]);
        expect(f.keyId, f.handler).toEqual(keyArn);
      } else if (OPENING.includes(f.handler)) {
        expect(f.kms, f.handler).toEqual([expect.objectContaining({ Action: 'kms:Decrypt', Resource: keyArn })]);
        expect(f.keyId, f.handler).toEqual(keyArn);
      } else {
        expect(f.kms, f.handler).toEqual([]);
        expect(f.keyId, f.handler).toBeUndefined();
      }
    }
    expect(functions.map((f) => f.handler)).toEqual(
      expect.arrayContaining([...SEALING, ...OPENING, 'http/secrets/list', 'http/secrets/delete']),
    );
  });

  it("uses the operator's key when given one, and creates none", () => {
    const arn = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const { resources, functions } = build({ secretsKeyArn: arn });
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::KMS::Key')).toEqual([]);
    const using = functions.filter((f) => f.kms.length > 0);
    expect(using.map((f) => f.handler).sort()).toEqual([...SEALING, ...OPENING, ...BOTH].sort());
    for (const f of using) {
      expect(list(f.kms[0]?.Resource)).toEqual([arn]);
      expect(f.keyId).toBe(arn);
    }
  });
});

describe('approval mail in the stack', () => {
  it('lets the notify worker (and a channel test) send from the SES identity only; nothing else sends mail', () => {
    const { functions } = build({ sesIdentity: 'example.com' });
    const senders = functions.filter((f) => f.ses.length > 0);
    expect(senders.map((f) => f.handler).sort()).toEqual(['http/channels/test', 'http/console/secrets', 'worker/notify']);
    for (const f of senders) {
      expect(f.ses).toEqual([expect.objectContaining({ Action: 'ses:SendEmail' })]);
      expect(JSON.stringify(f.ses[0]?.Resource)).toContain(':identity/example.com');
      expect(f.sesIdentity).toBe('example.com');
    }
  });

  it('grants no mail at all without an identity', () => {
    expect(built.functions.filter((f) => f.ses.length > 0 || f.sesIdentity !== undefined)).toEqual([]);
  });
});
