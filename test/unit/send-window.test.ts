// A cadence's send window (src/domains/cadences/send-window.ts), without a database: validation, and
// the next opening in the cadence's time zone, across a daylight-saving change.
import { describe, expect, it } from 'vitest';
import { nextSendTime, validSendWindow } from '../../src/domains/cadences/send-window.js';

const weekdays = { timezone: 'America/Sao_Paulo', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' };

describe('validSendWindow', () => {
  it('canonicalises the zone and sorts the days; null is any time', () => {
    expect(validSendWindow({ ...weekdays, timezone: 'america/sao_paulo', days: [5, 1] })).toEqual({ ...weekdays, days: [1, 5] });
    expect(validSendWindow(null)).toBeNull();
  });

  it('refuses what is not a window, naming the field', () => {
    const refused = (value: unknown, field: string) => expect(() => validSendWindow(value)).toThrow(field);
    refused({ ...weekdays, timezone: 'Mars/Olympus' }, 'send_window.timezone');
    refused({ ...weekdays, days: [] }, 'send_window.days');
    refused({ ...weekdays, days: [8] }, 'send_window.days');
    refused({ ...weekdays, days: [1, 1] }, 'send_window.days');
    refused({ ...weekdays, from: '24:00' }, 'send_window.from');
    refused({ ...weekdays, from: '18:00', to: '09:00' }, 'send_window.to');
    refused({ ...weekdays, extra: 1 }, 'send_window.extra');
    refused([1], 'send_window');
  });
});

describe('nextSendTime', () => {
  it('is the due time inside the window, else the next opening in the zone', () => {
    // Wednesday 2026-12-02: 12:00 in São Paulo (UTC-3) is inside; 20:00 waits for Thursday 09:00.
    expect(nextSendTime(weekdays, new Date('2026-12-02T15:00:00Z'))).toEqual(new Date('2026-12-02T15:00:00Z'));
    expect(nextSendTime(weekdays, new Date('2026-12-02T23:00:00Z'))).toEqual(new Date('2026-12-03T12:00:00Z'));
    // Before the opening the same day; `to` is not inside.
    expect(nextSendTime(weekdays, new Date('2026-12-02T10:00:00Z'))).toEqual(new Date('2026-12-02T12:00:00Z'));
    expect(nextSendTime(weekdays, new Date('2026-12-02T21:00:00Z'))).toEqual(new Date('2026-12-03T12:00:00Z'));
    // Friday evening waits for Monday.
    expect(nextSendTime(weekdays, new Date('2026-12-04T22:00:00Z'))).toEqual(new Date('2026-12-07T12:00:00Z'));
    expect(nextSendTime(null, new Date('2026-12-05T03:00:00Z'))).toEqual(new Date('2026-12-05T03:00:00Z'));
  });

  it('keeps the local hours across a daylight-saving change', () => {
    const ny = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5, 6, 7], from: '09:00', to: '10:00' };
    // Saturday 2026-03-07 after the window (EST, UTC-5) → Sunday 2026-03-08 09:00 EDT (UTC-4), after the change.
    expect(nextSendTime(ny, new Date('2026-03-07T16:00:00Z'))).toEqual(new Date('2026-03-08T13:00:00Z'));
    // And back: Saturday 2026-10-31 (EDT) → Sunday 2026-11-01 09:00 EST.
    expect(nextSendTime(ny, new Date('2026-10-31T15:00:00Z'))).toEqual(new Date('2026-11-01T14:00:00Z'));
  });
});
