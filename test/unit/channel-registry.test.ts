import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { adapters, channelKinds } from '../../shared/channels/index.ts';
import { CHANNEL_TYPES } from '../../shared/db/channel-types.ts';

/**
 * A channel kind is one adapter: its name is written in shared/db/channel-types.ts (the list) and
 * in its own module under shared/channels/, and nowhere else in shared/ or functions/. Everything
 * else reads CHANNEL_TYPES or asks the registry (`channelKinds`, `adapters`).
 */
const ROOT = resolve(import.meta.dirname, '../..');
const OWN = ['shared/channels/', 'shared/db/channel-types.ts'];

/**
 * The same words with another meaning, each counted: Slack's request signing as a scheme of the
 * webhooks that start runs (not an approval channel), and the item that claims a user's email.
 */
const OTHER_MEANINGS: Record<string, Record<string, number>> = {
  'shared/db/entities/webhook.ts': { slack: 1 },
  'shared/http/webhook-senders.ts': { slack: 2 },
  'shared/domain/trigger-context.ts': { slack: 1 },
  'shared/db/entities/user-email.ts': { email: 2 },
  // The sign-in form's email field.
  'functions/http/console/login/form.tsx': { email: 2 },
  'functions/http/console/login/sign-in.ts': { email: 1 },
  // A new member's email (Members: "Add member").
  'functions/http/console/settings/members/create.ts': { email: 1 },
  'functions/http/console/settings/members/form.tsx': { email: 3 },
  'functions/http/console/parts/people-fields.tsx': { email: 1 },
  // A webhook's Slack signature scheme: its form and its curl example.
  'functions/http/console/webhooks/curl.ts': { slack: 1 },
  'functions/http/console/webhooks/form-data.ts': { slack: 1 },
  // The audit log's channel of a Slack button's click (as `console` and `api` are others).
  'shared/db/entities/audit.ts': { slack: 1 },
};

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : files(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The channel kinds a source text names as string literals (`'slack'`, `"email"`, `` `teams` ``), with their counts. */
function namedKinds(source: string, kinds: readonly string[] = CHANNEL_TYPES): Record<string, number> {
  const found: Record<string, number> = {};
  const visit = (node: ts.Node) => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && kinds.includes(node.text))
      found[node.text] = (found[node.text] ?? 0) + 1;
    node.forEachChild(visit);
  };
  visit(ts.createSourceFile('scanned.ts', source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX));
  return found;
}

const scanned = () =>
  ['shared', 'functions']
    .flatMap(files)
    .filter((f) => !OWN.some((own) => f.startsWith(own)))
    .map((file) => ({ file, named: namedKinds(readFileSync(join(ROOT, file), 'utf8')) }))
    .filter(({ named }) => Object.keys(named).length > 0);

describe('channel kinds', () => {
  it('the scanner finds a kind named in code, whichever quotes (a check that finds nothing must be able to fail)', () => {
    expect(namedKinds(`if (c.type === 'teams') send(); const t: "email" | 'x' = "email"; z.literal(\`slack\`);`)).toEqual({
      teams: 1,
      email: 2,
      slack: 1,
    });
    expect(namedKinds('// slack, in a comment; "slack-ish" and kinds[0] are no kind')).toEqual({});
    // The adapters' own modules do name their kinds: the scan reads real files.
    expect(namedKinds(readFileSync(join(ROOT, 'shared/channels/slack.ts'), 'utf8')).slack).toBeGreaterThan(0);
  });

  it('a planted name outside the adapters is found', () => {
    const planted = `${readFileSync(join(ROOT, 'shared/domain/channels.ts'), 'utf8')}\nexport const isMail = (t: string) => t === 'email';\n`;
    expect(namedKinds(planted)).toEqual({ email: 1 });
  });

  it('no file of shared/ or functions/ outside shared/channels/ and the list names a channel kind', () => {
    const found = Object.fromEntries(scanned().map(({ file, named }) => [file, named]));
    expect(found).toEqual(OTHER_MEANINGS);
  });

  it('every kind of the list has its adapter and its description in the registry, and only those', () => {
    expect(Object.keys(adapters).sort()).toEqual([...CHANNEL_TYPES].sort());
    expect(Object.keys(channelKinds).sort()).toEqual([...CHANNEL_TYPES].sort());
    for (const type of CHANNEL_TYPES) {
      expect(channelKinds[type].type).toBe(type);
      expect(adapters[type].kind).toBe(channelKinds[type]);
    }
  });
});
