#!/usr/bin/env node
// `npx flowgate` from a checkout: the CLI is TypeScript, loaded through tsx (a dev dependency).
import { register } from 'tsx/esm/api';

register();
await import('../run.ts');
