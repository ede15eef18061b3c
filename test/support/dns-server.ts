import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type Packet } from 'dns-packet';

/**
 * A real authoritative DNS server on loopback (UDP and TCP) serving a zone given as a plain
 * object, so verification tests resolve through node's resolver exactly as in production.
 * Names absent from the zone answer NXDOMAIN; present names without the asked type answer
 * NOERROR with no data (plus an SOA, as real servers do). A name with a CNAME answers every other type with
 * the alias chain followed inside the zone, as a recursive resolver returns it (RFC 1034 §3.6.2, §4.3.2): each
 * CNAME of the chain, then the final name's records of the asked type; a chain ending outside the zone is
 * NXDOMAIN with the CNAMEs (RFC 6604). A loop is answered with its CNAMEs once round and no data.
 */

export interface ZoneEntry {
  MX?: Array<{ preference: number; exchange: string }>;
  A?: string[];
  AAAA?: string[];
  /** An alias: the name holds no other record (RFC 1034 §3.6.2). */
  CNAME?: string;
  ttl?: number;
  /** Answer every query for this name with this error code. */
  rcode?: 'SERVFAIL' | 'REFUSED';
  /** Never answer (the resolver times out). */
  silent?: boolean;
}

export type Zone = Record<string, ZoneEntry>;

/** MX records in the given order of preference (10, 20, …). */
export const mx = (...hosts: string[]): ZoneEntry => ({
  MX: hosts.map((exchange, i) => ({ preference: (i + 1) * 10, exchange })),
});

/** A mail domain whose one MX host, `mx.<domain>`, has the address `ip`. */
export const mailDomain = (domain: string, ip: string): Zone => ({
  [domain]: mx(`mx.${domain}`),
  [`mx.${domain}`]: { A: [ip] },
});

export interface DnsServerOptions {
  /** Holds every UDP answer this long, ms, as a distant resolver would. */
  answerDelayMs?: number;
}

export interface DnsServer {
  /** `host:port` for VerifierOptions.dnsServers. */
  endpoint: string;
  queries: Array<{ name: string; type: string }>;
  /** The most UDP queries received and not yet answered at one time. */
  maxUnanswered(): number;
  setZone(zone: Zone): void;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;
const FLAGS = dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE;

export async function startDnsServer(
  initial: Zone,
  host = '127.0.0.1',
  { answerDelayMs = 0 }: DnsServerOptions = {},
): Promise<DnsServer> {
  let zone = normalise(initial);
  const queries: DnsServer['queries'] = [];

  const answer = (query: Packet): Buffer | null => {
    const question = query.questions?.[0];
    if (!question) return null;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push({ name, type: question.type });
    const answers: Answer[] = [];
    // Follows the alias chain: `owner` is the name whose records answer, `entry` its zone entry.
    let owner = name;
    let entry = zone.get(name);
    const seen = new Set([name]);
    while (entry?.CNAME !== undefined && question.type !== 'CNAME' && !entry.silent && !entry.rcode) {
      const target = entry.CNAME.toLowerCase().replace(/\.$/, '');
      answers.push({ type: 'CNAME', name: owner, ttl: entry.ttl ?? 300, data: target });
      if (seen.has(target)) {
        entry = {}; // a loop: once round, then no data
        break;
      }
      seen.add(target);
      owner = target;
      entry = zone.get(target);
    }
    if (entry?.silent) return null;
    const ttl = entry?.ttl ?? 300;
    let rcode: number = entry ? RCODE.NOERROR : RCODE.NXDOMAIN;
    if (entry?.rcode) rcode = RCODE[entry.rcode];
    if (entry && !entry.rcode) {
      if (question.type === 'MX')
        for (const mx of entry.MX ?? []) answers.push({ type: 'MX', name: owner, ttl, data: mx });
      if (question.type === 'A')
        for (const ip of entry.A ?? []) answers.push({ type: 'A', name: owner, ttl, data: ip });
      if (question.type === 'AAAA')
        for (const ip of entry.AAAA ?? []) answers.push({ type: 'AAAA', name: owner, ttl, data: ip });
      if (question.type === 'CNAME' && entry.CNAME !== undefined)
        answers.push({ type: 'CNAME', name: owner, ttl, data: entry.CNAME });
    }
    const authorities: Answer[] =
      !answers.some((a) => a.type === question.type) && !entry?.rcode
        ? [
            {
              type: 'SOA',
              name: question.name,
              ttl,
              data: {
                mname: 'ns.test',
                rname: 'hostmaster.test',
                serial: 1,
                refresh: 3600,
                retry: 600,
                expire: 86400,
                minimum: 60,
              },
            },
          ]
        : [];
    return dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: FLAGS | rcode,
      questions: query.questions,
      answers,
      authorities,
    });
  };

  // A real resolver is never the slow side of a probe: a deep receive queue keeps a burst of queries from being
  // dropped while the test process is busy (the kernel caps it at net.core.rmem_max).
  const udp = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  let unanswered = 0;
  let maxUnanswered = 0;
  udp.on('message', (msg, rinfo) => {
    const reply = safeAnswer(answer, msg);
    if (!reply) return;
    if (answerDelayMs === 0) return udp.send(reply, rinfo.port, rinfo.address);
    maxUnanswered = Math.max(maxUnanswered, ++unanswered);
    setTimeout(() => {
      unanswered--;
      udp.send(reply, rinfo.port, rinfo.address);
    }, answerDelayMs);
  });
  await new Promise<void>((resolve) => udp.bind(0, host, resolve));
  const port = udp.address().port;

  const tcp = net.createServer((socket) => {
    let buffer = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
        const size = buffer.readUInt16BE(0);
        const reply = safeAnswer(answer, buffer.subarray(2, 2 + size));
        buffer = buffer.subarray(2 + size);
        if (reply) socket.write(Buffer.concat([Buffer.from([reply.length >> 8, reply.length & 255]), reply]));
      }
    });
  });
  // The UDP port was free; TCP on the same number almost always is. Tests only need UDP answers
  // unless a reply is truncated, so a busy TCP port is tolerated rather than retried.
  await new Promise<void>((resolve) => {
    tcp.once('error', () => resolve());
    tcp.listen(port, host, () => resolve());
  });

  return {
    endpoint: `${host}:${port}`,
    queries,
    maxUnanswered: () => maxUnanswered,
    setZone: (next) => {
      zone = normalise(next);
    },
    close: async () => {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      await new Promise<void>((resolve) => (tcp.listening ? tcp.close(() => resolve()) : resolve()));
    },
  };
}

function safeAnswer(answer: (q: Packet) => Buffer | null, msg: Buffer): Buffer | null {
  try {
    return answer(dnsPacket.decode(msg));
  } catch {
    return null; // malformed query: real servers drop it too
  }
}

function normalise(zone: Zone): Map<string, ZoneEntry> {
  return new Map(Object.entries(zone).map(([name, entry]) => [name.toLowerCase().replace(/\.$/, ''), entry]));
}
