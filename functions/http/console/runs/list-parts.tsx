import type { FormErrors } from '../parts/labelled-field.tsx';
import type { RunRow } from '../../../../shared/domain/read-types.ts';
import type { RunFilters, RunPage } from '../../../../shared/domain/run-list.ts';

// What the runs list's view and its filters share: the page's path, its query as links, its data.

export const PATH = '/console/runs';
export const DEFAULT_LIMIT = 25;

export type RunsView = {
  filters: RunFilters;
  limit: number;
  cursor: string | undefined;
  live: boolean;
  rows: RunRow[];
  nextCursor: string | null;
  previous: RunPage['previous'];
  /** Rows shown on the pages before. */
  offset: number;
  /** A further (matching) run is known. */
  more: boolean;
  /** What is wrong with the query (its fields', or the cursor's): the list is then empty, the answer 400. */
  errors: FormErrors;
  names: ReadonlyMap<string, string>;
  now: number;
};

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The list's query as parameters (the filters as given, the page size when not the default). */
export const queryOf = (v: Pick<RunsView, 'filters' | 'limit'>): Record<string, string | undefined> => ({
  workflowId: v.filters.workflowId,
  status: v.filters.status,
  trigger: v.filters.trigger,
  from: iso(v.filters.from),
  to: iso(v.filters.to),
  limit: v.limit === DEFAULT_LIMIT ? undefined : String(v.limit),
});
export const href = (q: Record<string, string | undefined>) => {
  const params = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  return params.size ? `${PATH}?${params}` : PATH;
};

export const isFiltered = (f: RunFilters) => Object.values(f).some((x) => x !== undefined);
