// Where a stored file is served publicly: the media proxy path is the storage key itself (random,
// unrelated to the tenant and the file name), below PUBLIC_BASE_URL.
import type { Config } from '../../config.js';

export const MEDIA_PROXY_PATH = '/media/proxy';

export const mediaUrl = (config: Pick<Config, 'publicBaseUrl'>, storageKey: string) =>
  `${config.publicBaseUrl}${MEDIA_PROXY_PATH}/${storageKey}`;
