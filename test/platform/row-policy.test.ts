// How the scoped client rewrites a query's arguments under a caller's visibility (db/row-policy.ts), with
// the domains' policies registered (messaging: Conversation, and Message through `conversation`).
import { describe, expect, it } from 'vitest';
import { visibleArgs, type Visibility } from '../../src/db/row-policy.js';
import '../../src/domains/index.js';

const C = { OR: [{ department_id: null }] };
const M = { conversation: C };
const operator: Visibility = { key: 'operator:x', where: { Conversation: C, Message: M }, sql: {} as Visibility['sql'] };

describe('visibleArgs', () => {
  it('adds the condition to the where of a bound model, keeping a unique where unique', () => {
    expect(visibleArgs('Conversation', 'findMany', {}, operator)).toEqual({ where: { AND: [C] } });
    expect(visibleArgs('Conversation', 'findUnique', { where: { id: 'a' } }, operator)).toEqual({ where: { id: 'a', AND: [C] } });
    expect(visibleArgs('Message', 'count', { where: { AND: { role: 'user' } } }, operator)).toEqual({
      where: { AND: [{ role: 'user' }, M] },
    });
    expect(visibleArgs('Conversation', 'create', { data: { lead_id: 'l' } }, operator)).toEqual({ data: { lead_id: 'l' } });
    expect(visibleArgs('Lead', 'findMany', { where: { name: 'x' } }, operator)).toEqual({ where: { name: 'x' } });
  });

  it('filters to-many relations into bound models at any depth, and their counts', () => {
    expect(
      visibleArgs(
        'Deal',
        'findMany',
        { include: { lead: { select: { conversations: { where: { status: 'active' }, take: 2 }, _count: true } } } },
        operator,
      ),
    ).toEqual({
      include: {
        lead: {
          select: {
            conversations: { where: { status: 'active', AND: [C] }, take: 2 },
            _count: {
              select: { lead_tags: true, deals: true, conversations: { where: C }, messages: { where: M }, cadence_enrolments: true },
            },
          },
        },
      },
    });
  });

  it('leaves a conversation’s messages alone (they follow it) and lets a message read its conversation', () => {
    const args = { include: { messages: { take: 20 }, _count: { select: { messages: true } } } };
    expect(visibleArgs('Conversation', 'findFirst', args, operator)).toEqual({ ...args, where: { AND: [C] } });
    expect(visibleArgs('Message', 'findMany', { include: { conversation: true } }, operator)).toEqual({
      where: { AND: [M] },
      include: { conversation: true },
    });
  });

  it('refuses a to-one relation into a bound model other than through its via', () => {
    const leadBound: Visibility = { ...operator, where: { Lead: { name: 'x' } } };
    expect(() => visibleArgs('Deal', 'findMany', { include: { lead: true } }, leadBound)).toThrow(/Deal\.lead/);
  });

  it('changes nothing for a caller who sees every row', () => {
    const all: Visibility = { key: '', where: {}, sql: {} as Visibility['sql'] };
    const args = { include: { conversations: true } };
    expect(visibleArgs('Lead', 'findMany', args, all)).toBe(args);
  });
});
