// The accounts start hook (the manifest's `onStart`): the first start on an empty database creates the
// organisation "Default" (bootstrapOrganisation) and shows its generated owner key, once.
import { log } from '../../log.js';
import type { StartDeps } from '../manifest.js';
import { bootstrapOrganisation } from './service.js';

export async function bootstrapAtStart({ db, config }: StartDeps): Promise<void> {
  const boot = await bootstrapOrganisation(db.prisma, config.bootstrapApiKey);
  if (boot?.generated) {
    console.log(`\nCreated organisation "Default". Owner API key (shown only this once):\n\n    ${boot.api_key}\n`);
  } else if (boot) {
    log.info('created organisation "Default" with BOOTSTRAP_API_KEY');
  }
}
