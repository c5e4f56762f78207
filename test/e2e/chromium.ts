import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

// The browser tests' Chromium: Debian's (`apt-get install chromium`, as .ci/run does), never a
// browser downloaded by Playwright, headless, in a profile of its own that is removed afterwards.
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Chromium {
  context: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-e2e-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    return {
      context,
      async close() {
        try {
          await context.close();
        } finally {
          fs.rmSync(userDataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    fs.rmSync(userDataDir, { recursive: true, force: true });
    throw err;
  }
}
