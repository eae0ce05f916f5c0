import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkFile } from '../../cli/files.ts';
import { handler as schemaHandler } from '../../functions/http/v1/schemas/workflow.ts';
import { handler as putByKey } from '../../functions/http/workflows/put-by-key.ts';
import { WorkflowFile, workflowJsonSchemaText } from '../../shared/schemas/workflow-file.ts';
import { exampleDefinition } from '../support/definitions.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * The workflow file's JSON Schema (docs/workflows-as-code.md): generated from the zod schemas the server
 * parses with, served without a credential, kept in the repository; and on generated definitions, the
 * schema with the validator's cross-field rules (`flowgate validate`) and the server agree.
 */

const KEPT = resolve(import.meta.dirname, '../../schemas/workflow.schema.json');
const schema = JSON.parse(workflowJsonSchemaText());
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const schemaAccepts = ajv.compile(schema);

describe('the workflow JSON Schema', () => {
  it('is kept in the repository as generated (else: npm run schema)', () => {
    expect(readFileSync(KEPT, 'utf8'), 'schemas/workflow.schema.json is stale: run npm run schema').toBe(workflowJsonSchemaText());
  });

  it('is served at /api/v1/schemas/workflow.json without a credential, as the repository keeps it', async () => {
    const res = await invoke(schemaHandler, apiEvent({ path: '/api/v1/schemas/workflow.json' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/schema+json');
    expect(res.body).toBe(readFileSync(KEPT, 'utf8'));
  });

  it('accepts the docs example as a file and refuses what its rules say (a step without a type, an unknown setting)', () => {
    const file = { $schema: './workflow.schema.json', key: 'example', name: 'Example', definition: exampleDefinition() };
    expect(schemaAccepts(file), ajv.errorsText(schemaAccepts.errors)).toBe(true);
    expect(schemaAccepts({ ...file, definition: { steps: [{ id: 'a' }] } })).toBe(false);
    expect(schemaAccepts({ ...file, colour: 'red' })).toBe(false);
    expect(schemaAccepts({ ...file, key: 'Not A Key' })).toBe(false);
  });
});

// Generated definitions: well-formed ones, and each with one of the faults a person makes (a wrong
// type, a number out of range, an unknown field, a target that names no step, an expression that does
// not parse, `$secrets` where it may not go, a duplicate id, a container in a container). The checks
// that need the account (channels, quorums, which secrets exist) are left out: no offline validator
// can know them, and docs/workflows-as-code.md says so.
type Def = { variables?: Record<string, unknown>; steps: any[]; [k: string]: unknown };
const literal = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 8 }), fc.constant('{% $vars.x %}'));
const leaf = (id: string, next: string | undefined) =>
  fc
    .oneof(
      fc.record({ type: fc.constant('set'), values: fc.dictionary(fc.constantFrom('x', 'y'), literal, { maxKeys: 2 }) }),
      fc.record({ type: fc.constant('delay'), seconds: fc.integer({ min: 1, max: 86_400 }) }),
      fc.record({ type: fc.constant('fail'), message: fc.string({ minLength: 1, maxLength: 6 }), when: fc.constant('{% $vars.x > 1 %}') }),
      fc.record(
        {
          type: fc.constant('http_request'),
          method: fc.constantFrom('GET', 'POST'),
          url: fc.constantFrom('https://api.example.com/x', '{% $vars.url %}'),
          timeoutMs: fc.integer({ min: 1, max: 30_000 }),
          onError: fc.constantFrom('continue', 'fail'),
        },
        { requiredKeys: ['type', 'url'] },
      ),
    )
    .map((s) => ({ id, ...s, ...(next ? { next } : {}) }));
const step = (i: number, n: number) => {
  const next = fc.option(fc.constantFrom(...Array.from({ length: n }, (_, j) => `s${j}`), '$end'), { nil: undefined });
  return next.chain((to) =>
    fc.oneof(
      { weight: 4, arbitrary: leaf(`s${i}`, to) },
      {
        weight: 1,
        arbitrary: leaf(`s${i}n`, undefined).map((inner) => ({ id: `s${i}`, type: 'for_each', items: '{% [1, 2] %}', steps: [inner] })),
      },
      {
        weight: 1,
        arbitrary: fc.constant({ id: `s${i}`, type: 'switch', cases: [{ when: '{% $vars.x > 1 %}', next: '$end' }], default: 's0' }),
      },
    ),
  );
};
const wellFormed: fc.Arbitrary<Def> = fc.integer({ min: 1, max: 4 }).chain((n) =>
  fc.record(
    {
      variables: fc.constant({ x: { type: 'number', default: 0 }, url: { type: 'string', default: 'https://api.example.com/y' } }),
      steps: fc.tuple(...Array.from({ length: n }, (_, i) => step(i, n))),
      maxStepExecutions: fc.integer({ min: 1, max: 10_000 }),
      output: literal,
    },
    { requiredKeys: ['steps'] },
  ),
);
/** One fault, in the first step or the definition. */
const FAULTS: ((d: Def) => void)[] = [
  (d) => (d.steps[0].next = 'missing'),
  (d) => (d.steps[0].next = 'not a target'),
  (d) => d.steps.push({ ...d.steps[0] }),
  (d) => (d.steps[0].title = 7),
  (d) => (d.steps[0].bogus = 1),
  (d) => (d.steps[0].type = 'nonsense'),
  (d) => (d.steps[0].when = 'plain text'),
  (d) => (d.steps[0].when = '{% 1 + %}'),
  (d) => (d.steps[0].onError = 'explode'),
  (d) => (d.steps[0].onError = { next: 'missing' }),
  (d) => (d.steps[0] = { id: 's0', type: 'set', values: { x: '{% 1 + %}' } }),
  (d) => (d.steps[0] = { id: 's0', type: 'set', values: { x: '{% $secrets.TOKEN %}' } }),
  (d) => (d.steps[0] = { id: 's0', type: 'set', values: { '1bad': 1 } }),
  (d) => (d.steps[0] = { id: 's0', type: 'delay', seconds: 0 }),
  (d) => (d.steps[0] = { id: 's0', type: 'delay', seconds: 90_000 }),
  (d) => (d.steps[0] = { id: 's0', type: 'delay', seconds: 1.5 }),
  (d) => (d.steps[0] = { id: 's0', type: 'delay', seconds: '5' }),
  (d) => (d.steps[0] = { id: 's0', type: 'fail', message: '' }),
  (d) => (d.steps[0] = { id: 's0', type: 'http_request', url: 'ftp://example.com' }),
  (d) => (d.steps[0] = { id: 's0', type: 'http_request', url: 'https://api.example.com', method: 'BREW' }),
  (d) => (d.steps[0] = { id: 's0', type: 'http_request', url: 'https://api.example.com', headers: { 'bad header': 'x' } }),
  (d) => (d.steps[0] = { id: 's0', type: 'for_each', items: 'not an expression', steps: [{ id: 'n', type: 'delay', seconds: 1 }] }),
  (d) =>
    (d.steps[0] = {
      id: 's0',
      type: 'for_each',
      items: '{% [1] %}',
      steps: [{ id: 'n', type: 'for_each', items: '{% [1] %}', steps: [] }],
    }),
  (d) => (d.steps[0] = { id: 's0', type: 'switch', cases: [{ when: '{% true %}', next: 'elsewhere' }] }),
  (d) => (d.steps = []),
  (d) => (d.variables = { x: { type: 'number', default: 'not a number' } }),
  (d) => (d.variables = { '1bad': { type: 'string' } }),
  (d) => (d.variables = { x: { type: 'date' } }),
  (d) => (d.maxStepExecutions = 0),
  (d) => (d.maxStepExecutions = 20_000),
  (d) => (d.output = '{% $secrets.TOKEN %}'),
  (d) => (d.colour = 'red'),
];
const definition = fc.tuple(wellFormed, fc.option(fc.nat(FAULTS.length - 1), { freq: 2, nil: undefined })).map(([d, fault]) => {
  const copy = structuredClone(d);
  if (fault !== undefined) (FAULTS[fault] as (d: Def) => void)(copy);
  return copy;
});

describe('the schema and the validator agree with the server on generated definitions', () => {
  let session: string;
  beforeAll(async () => {
    const account = await givenAccount();
    session = await sessionOf(account.admin.email);
  });

  it('accept what the server accepts and refuse what it refuses', { timeout: 120_000 }, async () => {
    const seen = { accepted: 0, refused: 0, bySchemaOnly: 0 };
    await fc.assert(
      fc.asyncProperty(definition, async (def) => {
        const file = { key: 'generated', name: 'Generated', definition: def };
        const text = JSON.stringify(file, null, 2);
        const res = await invoke(
          putByKey,
          apiEvent({
            method: 'PUT',
            path: '/api/workflow-keys/generated',
            params: { key: 'generated' },
            query: { dryRun: 'true' },
            headers: bearer(session),
            body: { name: file.name, definition: def },
          }),
        );
        expect([200, 400], res.body).toContain(res.status);
        const server = res.status === 200;
        const validator = checkFile('generated.json', text).errors.length === 0;
        const bySchema = schemaAccepts(JSON.parse(text)) === true;
        // The validator is the server's own checks: the same verdict on every definition.
        expect(validator, res.body).toBe(server);
        // The schema never refuses what the server accepts (an editor shows no false error)…
        if (server) expect(bySchema, ajv.errorsText(schemaAccepts.errors)).toBe(true);
        // …and what it lets through and the server refuses, only rules no JSON Schema can say refused.
        if (bySchema && !server) {
          const parsed = WorkflowFile.safeParse(JSON.parse(text));
          expect(parsed.success).toBe(false);
          expect(parsed.error?.issues.filter((i) => i.code !== 'custom')).toEqual([]);
          seen.bySchemaOnly++;
        }
        seen[server ? 'accepted' : 'refused']++;
      }),
      { numRuns: 300 },
    );
    // The generators reach every case.
    expect(seen.accepted).toBeGreaterThan(10);
    expect(seen.refused).toBeGreaterThan(10);
    expect(seen.bySchemaOnly).toBeGreaterThan(5);
  });
});
