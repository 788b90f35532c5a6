// The accounts start hook (the manifest's `onStart`): the first start on an empty database creates the
// organisation "Default" (bootstrapOrganisation) and shows its generated owner key, once: printed in
// development; in production written to DATA_DIR/first-api-key (mode 0600, readable by the server's
// user alone), never to the log, which names the file instead.
import fs from 'node:fs';
import path from 'node:path';
import { log } from '../../log.js';
import type { StartDeps } from '../manifest.js';
import { bootstrapOrganisation } from './service.js';

/** Where a production start puts the generated first key, in DATA_DIR. */
export const FIRST_KEY_FILE = 'first-api-key';

export async function bootstrapAtStart({ db, config }: StartDeps): Promise<void> {
  const boot = await bootstrapOrganisation(db.prisma, config.bootstrapApiKey);
  if (boot?.generated && config.production) {
    const file = path.join(config.dataDir, FIRST_KEY_FILE);
    fs.mkdirSync(config.dataDir, { recursive: true });
    fs.writeFileSync(file, `${boot.api_key}\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    log.info('created organisation "Default"; its Owner API key is in a file only this user can read: move it to a safe place', { file });
  } else if (boot?.generated) {
    console.log(`\nCreated organisation "Default". Owner API key (shown only this once):\n\n    ${boot.api_key}\n`);
  } else if (boot) {
    log.info('created organisation "Default" with BOOTSTRAP_API_KEY');
  }
}
