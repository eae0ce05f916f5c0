import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../../shared/domain/accounts.ts';
import { ALL_SCOPES, createKey } from '../../shared/domain/keys.ts';

/** What `npm start` writes to `DATA_DIR/demo.json` (API.md "Local mode"). */
export type Demo = {
  baseUrl: string;
  accountId: string;
  adminEmail: string;
  adminPassword: string;
  apiKey: string;
  workflowId: string | null;
  webhookId: string | null;
};

/**
 * On a fresh data folder, create the demo: an account on the Team plan, its admin, and an API key with
 * every scope. Later parts of the product add a workflow and a webhook here. Returns the existing
 * demo when the folder was seeded before (data survives restarts).
 */
export async function seedDemo(dataDir: string, baseUrl: string): Promise<Demo> {
  const file = join(dataDir, 'demo.json');
  if (existsSync(file)) {
    const demo = { ...(JSON.parse(readFileSync(file, 'utf8')) as Demo), baseUrl };
    writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`);
    return demo;
  }
  const adminEmail = 'admin@demo.local';
  const adminPassword = randomBytes(12).toString('base64url');
  const { account, admin } = await createAccount({ name: 'Demo', plan: 'team', email: adminEmail, password: adminPassword });
  const key = await createKey(
    { accountId: account.accountId, userId: admin.userId },
    { name: 'demo key (all scopes)', scopes: ALL_SCOPES, validityDays: 365 },
  );
  const demo: Demo = {
    baseUrl,
    accountId: account.accountId,
    adminEmail,
    adminPassword,
    apiKey: key.token,
    workflowId: null,
    webhookId: null,
  };
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  return demo;
}

export function demoBanner(demo: Demo): string {
  const u = demo.baseUrl;
  return [
    '',
    `Flowgate local stack ready at ${u}`,
    `  admin:   ${demo.adminEmail} / ${demo.adminPassword}`,
    `  API key: ${demo.apiKey}`,
    '',
    'Try it:',
    `  curl -s ${u}/api/v1/me -H 'Authorization: Bearer ${demo.apiKey}'`,
    `  curl -s ${u}/api/auth/login -H 'content-type: application/json' -d '{"email":"${demo.adminEmail}","password":"${demo.adminPassword}"}'`,
    `  OpenAPI: ${u}/api/v1/openapi.json`,
    '',
  ].join('\n');
}
