// The 24-hour window rule (src/domains/messaging/window.ts), without a database.
import { describe, expect, it } from 'vitest';
import { WINDOW_MS, windowExpiresAt, windowOpen } from '../../src/domains/messaging/window.js';

const cloud = { provider: 'whatsapp_cloud' as const };
const now = new Date('2026-12-03T12:00:00.000Z');
const ago = (ms: number) => ({ last_inbound_at: new Date(now.getTime() - ms) });

describe('the WhatsApp customer-service window', () => {
  it('closes 24 hours after the last inbound message, and is closed before any', () => {
    expect(windowExpiresAt({ last_inbound_at: null })).toBeNull();
    expect(windowExpiresAt(ago(0))).toEqual(new Date('2026-12-04T12:00:00.000Z'));
    expect(windowOpen(cloud, ago(WINDOW_MS - 1), now)).toBe(true);
    expect(windowOpen(cloud, ago(WINDOW_MS), now)).toBe(false);
    expect(windowOpen(cloud, { last_inbound_at: null }, now)).toBe(false);
    expect(windowOpen(cloud, null, now)).toBe(false);
  });

  it('binds only WhatsApp Cloud channels', () => {
    expect(windowOpen({ provider: 'test' }, null, now)).toBe(true);
    expect(windowOpen({ provider: 'test' }, ago(10 * WINDOW_MS), now)).toBe(true);
  });
});
