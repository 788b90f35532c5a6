// When a failed delivery is tried again. Each step is the wait after the previous attempt; the first step
// is the wait before the first attempt.
import { loadConfig } from '../../config.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The Standard Webhooks example: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

/** A receiver's Retry-After is honoured up to this, so it cannot park a delivery indefinitely. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

/** `WEBHOOK_RETRY_SCHEDULE` (comma-separated ms, validated by loadConfig) or the default schedule. */
export function parseRetrySchedule(env: NodeJS.ProcessEnv = process.env): readonly number[] {
  return loadConfig(env).webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE;
}

/**
 * Milliseconds to wait before the next attempt, given how many attempts were made so far (0 → the wait
 * before the first), or null when the schedule is exhausted. A Retry-After from the receiver pushes the
 * wait out, never in.
 */
export function nextAttemptDelay(attempt: number, schedule: readonly number[], retryAfterMs?: number): number | null {
  if (!Number.isInteger(attempt) || attempt < 0) throw new Error('attempt must be a whole number of attempts made');
  if (attempt >= schedule.length) return null;
  const scheduled = schedule[attempt];
  if (retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}
