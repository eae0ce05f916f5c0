import { chromium } from 'playwright-core';
import { CHROMIUM } from '../../scripts/ensure.mjs';

/**
 * Debian's Chromium headless shell (scripts/ensure.mjs installs it), as every browser test and the
 * screenshots drive it through playwright-core.
 */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

export const launchBrowser = () => chromium.launch({ executablePath: CHROMIUM, args: ARGS });
