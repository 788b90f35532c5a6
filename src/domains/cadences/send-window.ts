// A cadence's send window: the days and hours, in the cadence's own time zone, when its messages may go
// out. A send due outside it waits for the window's next opening. Local times are turned into instants
// with the zone's offset at that moment (Intl), so a window keeps its local hours across daylight-saving
// changes. Pure: no clock, no database.
import { invalidField } from '../../errors.js';

export interface SendWindow {
  timezone: string;
  /** ISO weekdays, Monday = 1 … Sunday = 7, ascending. */
  days: number[];
  /** "HH:MM", local; `from` is inside the window, `to` is not. */
  from: string;
  to: string;
}

const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;
const KEYS = new Set(['timezone', 'days', 'from', 'to']);

/** The zone's canonical name (`america/sao_paulo` → `America/Sao_Paulo`), or null when it is not one. */
function canonicalZone(name: string): string | null {
  if (name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A send window as given (null: any time), checked; 400 naming the field otherwise. */
export function validSendWindow(value: unknown, field = 'send_window'): SendWindow | null {
  if (value == null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidField(field, 'deve ser um objeto {timezone, days, from, to} ou null');
  const input = value as Record<string, unknown>;
  const extra = Object.keys(input).find((k) => !KEYS.has(k));
  if (extra) throw invalidField(`${field}.${extra}`, 'não é um campo da janela de envio');
  const timezone = typeof input.timezone === 'string' ? canonicalZone(input.timezone) : null;
  if (!timezone) throw invalidField(`${field}.timezone`, 'deve ser um fuso horário IANA, como America/Sao_Paulo');
  const days = input.days;
  if (!Array.isArray(days) || days.length === 0 || days.length > 7)
    throw invalidField(`${field}.days`, 'deve listar de 1 a 7 dias da semana (1 = segunda … 7 = domingo)');
  for (const d of days)
    if (!Number.isInteger(d) || (d as number) < 1 || (d as number) > 7)
      throw invalidField(`${field}.days`, 'aceita apenas os dias 1 (segunda) a 7 (domingo)');
  if (new Set(days).size !== days.length) throw invalidField(`${field}.days`, 'não pode repetir um dia');
  for (const key of ['from', 'to'] as const)
    if (typeof input[key] !== 'string' || !TIME.test(input[key]))
      throw invalidField(`${field}.${key}`, 'deve ser um horário HH:MM, de 00:00 a 23:59');
  const from = input.from as string;
  const to = input.to as string;
  if (from >= to) throw invalidField(`${field}.to`, 'deve ser depois de from (a janela começa e termina no mesmo dia)');
  return { timezone, days: [...(days as number[])].sort((a, b) => a - b), from, to };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock fields of an instant in a zone. */
function wallClock(at: number, timezone: string) {
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, format);
  }
  const parts: Record<string, number> = {};
  for (const p of format.formatToParts(new Date(at))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return parts as { year: number; month: number; day: number; hour: number; minute: number; second: number };
}

/** The zone's offset from UTC at an instant, in ms (the wall clock read as UTC, minus the instant). */
function offsetAt(at: number, timezone: string): number {
  const w = wallClock(at, timezone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
}

/**
 * The instant a local date and time has in the zone. A time the clocks skip (inside a spring-forward gap)
 * comes out as the instant the offset before the gap gives, which the clocks show as the hour after it.
 */
function instantOf(year: number, month: number, day: number, minutes: number, timezone: string): number {
  const asUtc = Date.UTC(year, month - 1, day, 0, minutes);
  const first = asUtc - offsetAt(asUtc, timezone);
  const second = asUtc - offsetAt(first, timezone);
  return second === first ? first : Math.max(first, second);
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** When a send due at `due` may go: `due` itself inside the window (or without one), else the window's next opening. */
export function nextSendTime(window: SendWindow | null, due: Date): Date {
  if (!window) return due;
  const at = due.getTime();
  const today = wallClock(at, window.timezone);
  const from = minutesOf(window.from);
  const to = minutesOf(window.to);
  // Eight days from today's date cover every weekday once more, whatever the offset does meanwhile.
  for (let i = 0; i <= 7; i++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + i));
    const weekday = date.getUTCDay() || 7;
    if (!window.days.includes(weekday)) continue;
    const [y, m, d] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    const opens = instantOf(y, m, d, from, window.timezone);
    if (at < opens) return new Date(opens);
    if (at < instantOf(y, m, d, to, window.timezone)) return due;
  }
  throw new Error('nextSendTime: a window with days has an opening within eight days');
}
