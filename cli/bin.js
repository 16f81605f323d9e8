#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's CommonJS hook, so `npx agentctl` needs no build step.
require('tsx/cjs');
require('./agentctl.ts');
