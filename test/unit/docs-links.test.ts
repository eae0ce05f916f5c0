import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * README.md and the pages of docs/ stand alone: every relative link goes to a file of the repository
 * and every anchor to a heading of its page; every source path they name in backticks exists. Links
 * and paths inside fenced code blocks are examples, not references, and are not checked.
 */
const ROOT = join(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((p) => p.endsWith('.md'));

/**
 * Paths the docs name ahead of the issue-30 changes that create them (the step and channel
 * registries, the events list in db, the notifications layer). Empty this list once they exist.
 */

/** The page without its fenced code blocks (their lines become empty, so line numbers stay). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, a repeated one numbered as GitHub does (`-1`, `-2`). */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, text] of prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(text as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n === 0 ? base : `${base}-${n}`);
  }
  return found;
}

/** Every `[text](target)` of a page's prose, with its target. */
function links(page: string): string[] {
  return [...prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
}

describe('README.md and docs/', () => {
  it('has the pages the README lists, each listed', () => {
    const readme = links('README.md');
    expect(PAGES.length).toBeGreaterThanOrEqual(14);
    for (const page of PAGES.filter((p) => p !== 'README.md')) expect(readme, page).toContain(page);
  });

  it('links only to files that exist, and to headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of PAGES) {
      for (const target of links(page)) {
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        checked++;
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no file ${file})`);
        else if (anchor !== undefined && !(file.endsWith('.md') && anchors(file).has(anchor)))
          broken.push(`${page}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('names only source paths that exist', () => {
    const missing: string[] = [];
    for (const page of PAGES) {
      for (const [, path] of prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(
        /`((?:shared|functions|infra|test|docs|\.ci)\/[\w./-]*)`/g,
      )) {
        if (!existsSync(join(ROOT, path as string))) missing.push(`${page}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('computes anchors as GitHub does', () => {
    expect(slug("Lambda's limits, locally")).toBe('lambdas-limits-locally');
    expect(slug('Webhook senders: GitHub, Stripe, Slack, Standard Webhooks')).toBe('webhook-senders-github-stripe-slack-standard-webhooks');
    expect(slug('Data model (one DynamoDB table)')).toBe('data-model-one-dynamodb-table');
    expect(slug('Resume, rerun, retry')).toBe('resume-rerun-retry');
  });
});
