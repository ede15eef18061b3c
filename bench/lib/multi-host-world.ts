import type { Zone } from '../../test/support/dns-server.js';

/**
 * The mail world of bench/multi-host.ts: per round ('a', 'b') its own domains, so that no round profits from
 * another's DNS or catch-all caches. Bulk domain d has its own MX host; list domain k shares MX host k mod hosts.
 * Mailboxes ann, ben, cat, dan and u<n> exist; nobody and x<n> do not.
 */

export interface WorldShape {
  /** Bulk domains (5 addresses each). */
  domains: number;
  list: number;
  listDomains: number;
  listHosts: number;
}

const BULK_LOCALS = ['ann', 'ben', 'cat', 'dan', 'nobody'];

export const bulkEmails = (shape: WorldShape, round: string): string[] =>
  Array.from({ length: shape.domains }, (_, d) =>
    BULK_LOCALS.map((l) => `${l}@b${round}${d}.mh.test`),
  ).flat();

/** Every tenth address does not exist. */
export const listEmails = (shape: WorldShape, round: string): string[] =>
  Array.from(
    { length: shape.list },
    (_, i) => `${i % 10 === 9 ? 'x' : 'u'}${i}@l${round}${i % shape.listDomains}.mh.test`,
  );

export const expected = (email: string): 'valid' | 'invalid' =>
  /^(nobody|x\d)/.test(email) ? 'invalid' : 'valid';

/** The zone of both rounds: `bulkHost(d)` and `listHost(h)` give the mail hosts' addresses. */
export function mailZone(
  shape: WorldShape,
  bulkHost: (d: number) => string,
  listHost: (h: number) => string,
): Zone {
  const zone: Zone = {};
  for (const round of ['a', 'b']) {
    for (let d = 0; d < shape.domains; d++) {
      zone[`b${round}${d}.mh.test`] = { MX: [{ preference: 10, exchange: `mx.b${round}${d}.mh.test` }] };
      zone[`mx.b${round}${d}.mh.test`] = { A: [bulkHost(d)] };
    }
    for (let k = 0; k < shape.listDomains; k++)
      zone[`l${round}${k}.mh.test`] = {
        MX: [{ preference: 10, exchange: `mx${k % shape.listHosts}.l${round}.mh.test` }],
      };
    for (let h = 0; h < shape.listHosts; h++) zone[`mx${h}.l${round}.mh.test`] = { A: [listHost(h)] };
  }
  return zone;
}
