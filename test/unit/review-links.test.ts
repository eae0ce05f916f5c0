import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { AppError } from '../../shared/errors.ts';
import { httpStatus } from '../../shared/http-status.ts';
import { linkExpiry, resetReviewLinkKey, reviewerLinks, verifyReviewToken } from '../../shared/domain/review-links.ts';
import { mutated } from '../support/properties.ts';

/**
 * Reviewers' link tokens (shared/domain/review-links.ts): what they bind, that the key file outlives
 * a restart (and another key refuses them), expiry, and that no string, tampered or not, is accepted
 * for anything but what was signed, nor makes the check throw anything but its refusals.
 */

const original = process.env.REVIEW_LINK_KEY_FILE;
const useKeyFile = (path: string) => {
  process.env.REVIEW_LINK_KEY_FILE = path;
  resetConfig();
  resetReviewLinkKey();
};
afterEach(() => {
  if (original === undefined) delete process.env.REVIEW_LINK_KEY_FILE;
  else process.env.REVIEW_LINK_KEY_FILE = original;
  delete process.env.REVIEW_LINK_MAX_DAYS;
  resetConfig();
  resetReviewLinkKey();
});

const INPUT = { accountId: 'acc_1', approvalId: 'ap_01', userId: 'usr_ana', channel: 'email' as const };
const tokenOf = (link: string) => new URL(link).searchParams.get('token') as string;
const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return `${httpStatus(e)} ${e.code}`;
    throw e;
  }
  return 'accepted';
};

describe("a reviewer's link token", () => {
  it('binds account, approval, reviewer, decisions, channel and expiry; the key file survives a restart, another key refuses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowgate-review-key-'));
    useKeyFile(join(dir, 'review-links.key'));
    const links = await reviewerLinks({ ...INPUT, channel: 'slack', expiresAt: Date.now() + 60_000 });
    expect(statSync(join(dir, 'review-links.key')).mode & 0o777).toBe(0o600);
    expect(new URL(links.review).pathname).toBe('/api/reviews/ap_01');
    const grants = await Promise.all([links.review, links.approve, links.reject].map((l) => verifyReviewToken(tokenOf(l), 'ap_01')));
    expect(grants.map((g) => g.decisions)).toEqual([['approve', 'reject'], ['approve'], ['reject']]);
    expect(grants[0]).toMatchObject({ accountId: 'acc_1', approvalId: 'ap_01', userId: 'usr_ana', channel: 'slack' });
    // A restart: the key is read again from the same file.
    resetReviewLinkKey();
    expect((await verifyReviewToken(tokenOf(links.approve), 'ap_01')).userId).toBe('usr_ana');
    // Another installation's key.
    useKeyFile(join(dir, 'other.key'));
    expect(await refusal(verifyReviewToken(tokenOf(links.approve), 'ap_01'))).toBe('403 REVIEW_LINK_INVALID');
  });

  it("expires at the approval's deadline, capped at REVIEW_LINK_MAX_DAYS", async () => {
    process.env.REVIEW_LINK_MAX_DAYS = '2';
    resetConfig();
    const now = 1_800_000_000_000;
    expect(linkExpiry(undefined, now)).toBe(now + 2 * 86_400_000);
    expect(linkExpiry(now + 3_600_000, now)).toBe(now + 3_600_000);
    expect(linkExpiry(now + 5 * 86_400_000, now)).toBe(now + 2 * 86_400_000);
    const links = await reviewerLinks({ ...INPUT, expiresAt: Date.now() + 1000 });
    const token = tokenOf(links.approve);
    expect(await refusal(verifyReviewToken(token, 'ap_01', Date.now()))).toBe('accepted');
    expect(await refusal(verifyReviewToken(token, 'ap_01', Date.now() + 1001))).toBe('410 REVIEW_LINK_EXPIRED');
    expect(await refusal(verifyReviewToken(token, 'ap_02'))).toBe('403 REVIEW_LINK_OTHER_APPROVAL');
  });

  it('refuses every changed character of a token, and any string at all, with a refusal (never another error)', async () => {
    const token = tokenOf((await reviewerLinks(INPUT)).review);
    await fc.assert(
      fc.asyncProperty(mutated(token), async (t) => {
        expect(await refusal(verifyReviewToken(t, 'ap_01'))).toBe(t === token ? 'accepted' : '403 REVIEW_LINK_INVALID');
      }),
      { numRuns: 300 },
    );
    // A payload that says anything, signed by nobody.
    const [, mac] = token.split('.') as [string, string];
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (claims) => {
        const forged = `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
        expect(await refusal(verifyReviewToken(forged, 'ap_01'))).toBe('403 REVIEW_LINK_INVALID');
      }),
      { numRuns: 200 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string(), fc.string({ unit: 'binary', maxLength: 3000 }), fc.base64String()),
        fc.string(),
        async (t, id) => {
          expect(['403 REVIEW_LINK_INVALID', '403 REVIEW_LINK_OTHER_APPROVAL']).toContain(await refusal(verifyReviewToken(t, id)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
