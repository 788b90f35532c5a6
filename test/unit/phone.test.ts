// The phone rules alone (no database): stored forms, the Brazilian ninth digit, inbound senders, BSUIDs.
import { describe, expect, it } from 'vitest';
import {
  canonicalPhone,
  inboundPhone,
  leadPhone,
  phoneForms,
  recipientPhone,
  whatsAppUserId,
  whatsAppUsername,
} from '../../src/domains/common/phone.js';

describe('the Brazilian ninth digit', () => {
  it('adds the 9 to a mobile written with 8 digits, and leaves landlines and other countries alone', () => {
    expect(canonicalPhone('+553188887777')).toBe('+5531988887777');
    expect(canonicalPhone('+5531988887777')).toBe('+5531988887777');
    expect(canonicalPhone('+551133334444')).toBe('+551133334444'); // landline: 2-5
    expect(canonicalPhone('+551123334444')).toBe('+551123334444');
    expect(canonicalPhone('+14155552671')).toBe('+14155552671');
    expect(canonicalPhone('+350188887777')).toBe('+350188887777'); // not +55
  });

  it('gives both forms of a mobile for lookups, the stored one first', () => {
    expect(phoneForms('+553188887777')).toEqual(['+5531988887777', '+553188887777']);
    expect(phoneForms('+5531988887777')).toEqual(['+5531988887777', '+553188887777']);
    expect(phoneForms('+551133334444')).toEqual(['+551133334444']);
    expect(phoneForms('+14155552671')).toEqual(['+14155552671']);
  });
});

describe('leadPhone', () => {
  it('takes E.164 with separators and stores the canonical form', () => {
    expect(leadPhone(' +55 (31) 8888-7777 ')).toBe('+5531988887777');
    expect(leadPhone('+1 415.555.2671')).toBe('+14155552671');
  });

  it('refuses what is not E.164, naming the field', () => {
    for (const bad of ['5531988887777', '+0123456789', '+1234567', '+1234567890123456', 'abc', ''])
      expect(() => leadPhone(bad)).toThrow(expect.objectContaining({ kind: 'INVALID_INPUT' }));
    expect(() => leadPhone(null)).toThrow(/obrigatório/);
  });
});

describe('inboundPhone and recipientPhone', () => {
  it('read WhatsApp senders and recipients into the stored form', () => {
    expect(inboundPhone('553188887777')).toBe('+5531988887777');
    expect(inboundPhone('5531988887777@s.whatsapp.net')).toBe('+5531988887777');
    expect(recipientPhone('553188887777@s.whatsapp.net')).toBe('+5531988887777');
  });

  it('refuse senders that are not numbers, and recipients that cannot receive messages', () => {
    expect(() => inboundPhone('1234567')).toThrow(/8 dígitos/);
    expect(() => inboundPhone('0123456789')).toThrow(/E\.164/);
    expect(() => inboundPhone('BR.123')).toThrow(/telefone/);
    expect(() => recipientPhone('120363025246125486@g.us')).toThrow(expect.objectContaining({ kind: 'INVALID_PHONE' }));
    expect(() => recipientPhone('+99912345678')).toThrow(expect.objectContaining({ kind: 'INVALID_PHONE' }));
  });
});

describe('WhatsApp identities', () => {
  it('takes a BSUID (two capitals, a dot, 1-128 letters or digits) and refuses anything else', () => {
    expect(whatsAppUserId(' BR.1502576394655843 ')).toBe('BR.1502576394655843');
    expect(whatsAppUserId(`US.${'a'.repeat(128)}`)).toBe(`US.${'a'.repeat(128)}`);
    for (const bad of ['br.123', 'BR123', 'BR.', `BR.${'1'.repeat(129)}`, 'BRA.1', 'BR.12-3', '+5531988887777'])
      expect(() => whatsAppUserId(bad, 'user_id')).toThrow(expect.objectContaining({ kind: 'INVALID_INPUT' }));
  });

  it('keeps a username for display, up to 64 characters', () => {
    expect(whatsAppUsername('  ana.costa ')).toBe('ana.costa');
    expect(whatsAppUsername('   ')).toBeNull();
    expect(whatsAppUsername(undefined)).toBeNull();
    expect(() => whatsAppUsername('x'.repeat(65))).toThrow(/64/);
  });
});
