import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/**
 * A virtual network of "hosts" on one machine (needs root): a bridge in the root namespace and one network
 * namespace per host, each joined to the bridge by a veth pair and given its own address. Everything is named
 * after a random suffix, so two runs (or a run and a crashed one's leftovers) never clash, and `destroy()`
 * removes it all; it is synchronous so that it can run from an exit handler too.
 */

export interface VirtualHost {
  name: string;
  /** The namespace (`ip netns exec <namespace> …`). */
  namespace: string;
  address: string;
  /** The veth end in the root namespace: setting it down cuts the host off without stopping anything in it. */
  rootLink: string;
}

export interface VirtualNetwork {
  suffix: string;
  /** The bridge's own address: servers of the root namespace listen here to be reached from every host. */
  gateway: string;
  /** `10.<n>.0.<last>`. */
  address(last: number): string;
  addHost(name: string, last: number): VirtualHost;
  /** More addresses on the bridge (mail hosts of the root namespace, each with an address of its own). */
  addAddresses(addresses: readonly string[]): void;
  cut(host: VirtualHost): void;
  restore(host: VirtualHost): void;
  destroy(): void;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: 'pipe' });

/** A 10.<n>.0.0/24 no interface or route of the machine uses yet. */
function freeSubnet(): number {
  const taken = ip('-o', '-4', 'addr') + ip('-4', 'route');
  for (let attempt = 0; attempt < 50; attempt++) {
    const n = 100 + Math.floor(Math.random() * 150);
    if (!taken.includes(`10.${n}.`)) return n;
  }
  throw new Error('no free 10.<n>.0.0/24 subnet');
}

export function createVirtualNetwork(): VirtualNetwork {
  const suffix = randomBytes(2).toString('hex');
  const n = freeSubnet();
  const address = (last: number) => `10.${n}.0.${last}`;
  const bridge = `agmh${suffix}br`;
  const hosts: VirtualHost[] = [];
  let destroyed = false;

  ip('link', 'add', bridge, 'type', 'bridge');
  const network: VirtualNetwork = {
    suffix,
    gateway: address(1),
    address,
    addHost(name, last) {
      const host: VirtualHost = {
        name,
        namespace: `agmh-${suffix}-${name}`,
        address: address(last),
        rootLink: `agmh${suffix}v${last}`,
      };
      const peer = `agmh${suffix}p${last}`;
      ip('netns', 'add', host.namespace);
      hosts.push(host);
      ip('link', 'add', host.rootLink, 'type', 'veth', 'peer', 'name', peer);
      ip('link', 'set', peer, 'netns', host.namespace);
      ip('link', 'set', host.rootLink, 'master', bridge, 'up');
      ip('-n', host.namespace, 'link', 'set', peer, 'name', 'eth0');
      ip('-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
      ip('-n', host.namespace, 'link', 'set', 'eth0', 'up');
      ip('-n', host.namespace, 'link', 'set', 'lo', 'up');
      return host;
    },
    addAddresses(addresses) {
      for (const a of addresses) ip('addr', 'add', `${a}/24`, 'dev', bridge);
    },
    cut: (host) => void ip('link', 'set', host.rootLink, 'down'),
    restore: (host) => void ip('link', 'set', host.rootLink, 'up'),
    destroy() {
      if (destroyed) return;
      destroyed = true;
      // The root end of each pair first: a namespace's own teardown (which would take its pair with it) waits until
      // the last socket of its processes is gone. Best effort: one failure must not leave the rest behind.
      for (const host of hosts)
        for (const args of [
          ['link', 'del', host.rootLink],
          ['netns', 'del', host.namespace],
        ]) {
          try {
            ip(...args);
          } catch {
            // already gone
          }
        }
      try {
        ip('link', 'del', bridge);
      } catch {
        // already gone
      }
    },
  };
  try {
    ip('addr', 'add', `${network.gateway}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
  } catch (err) {
    network.destroy();
    throw err;
  }
  return network;
}
