import { readFileSync } from 'node:fs';

// ../package.json from both src/ (tsx) and dist/ (the container image).
export const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** The platform refuses requests without a User-Agent; this one names the service and its version. */
export const USER_AGENT = `community-bridge/${version}`;
