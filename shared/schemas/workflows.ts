import * as z from 'zod';
import { WorkflowDefinition } from '../engine/definition.ts';
import { USER_ID } from '../ids.ts';
import { documentedAs, idOf } from './common.ts';

/** A malformed editor id is refused like an unknown one: 400 `INVALID_EDITORS`. */
const Editors = z.array(idOf('INVALID_EDITORS', 'User', { status: 400, pattern: USER_ID })).max(100);

/** Console create (`POST /api/workflows`). */
export const WorkflowBody = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).optional(),
  definition: WorkflowDefinition,
  recovery: z.boolean().default(false),
  editors: Editors.default([]),
});
export type WorkflowBody = z.infer<typeof WorkflowBody>;

/** Console update (`PUT /api/workflows/{id}`): any of the fields, at least one; absent fields are unchanged. */
export const WorkflowPatch = z
  .object({
    name: WorkflowBody.shape.name.optional(),
    description: z.string().max(2000).optional(),
    definition: WorkflowDefinition.optional(),
    recovery: z.boolean().optional(),
    editors: Editors.optional(),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), 'at least one field is required');
export type WorkflowPatch = z.infer<typeof WorkflowPatch>;

/** A workflow's version in the list of versions (`GET /api/workflows/{id}/versions`): null where not recorded. */
export const WorkflowVersionEntry = z
  .object({ version: z.number().int(), createdAt: z.number().nullable(), createdBy: z.string().nullable() })
  .meta({ id: 'WorkflowVersion' });
export const WorkflowVersionList = z.object({ items: z.array(WorkflowVersionEntry), nextCursor: z.string().nullable() });
/** One version with its definition (secrets masked): `GET /api/workflows/{id}/versions/{version}`. */
export const WorkflowVersionView = WorkflowVersionEntry.extend({ definition: z.unknown(), recovery: z.boolean() }).meta({
  id: 'WorkflowVersionDetail',
});
/** A version number in a console path or query: anything else names no version (404 / 400). */
export const VersionNumber = z.coerce.number().int().min(1).max(1_000_000_000);
/**
 * A version in an API path, as text: the workflow is looked up first, so an unknown workflow is 404
 * `WORKFLOW_NOT_FOUND` whatever the version says, and a version that is not a number is one it does
 * not have (404 `WORKFLOW_VERSION_NOT_FOUND`).
 */
export const VersionSegment = z.string().max(8192).register(documentedAs, {
  type: 'integer',
  minimum: 1,
  description: 'A version number (1, 2, ...); anything else names no version (404 `WORKFLOW_VERSION_NOT_FOUND`)',
});
/** The number a version segment names, or 0 (no version has it). */
export const versionOfSegment = (s: string) => (/^[1-9]\d{0,9}$/.test(s) ? Number(s) : 0);
