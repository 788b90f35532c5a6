// The store the configuration names: the directory (STORAGE_DIR) by default, or the bucket (STORAGE=s3).
import type { Config } from '../config.js';
import { createDirectoryStorage } from './disk-storage.js';
import { createS3Storage } from './s3-storage.js';
import type { FileStorage } from './storage.js';

export function createStorage(config: Pick<Config, 'storage' | 'storageDir'>): FileStorage {
  return config.storage.kind === 's3' ? createS3Storage(config.storage) : createDirectoryStorage(config.storageDir);
}
