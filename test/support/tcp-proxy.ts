import net from 'node:net';

/** What a proxied connection does with each chunk: forward it (the default), hold it, or delay it. */
export interface ProxiedConnection {
  fromClient?(chunk: Buffer, toUpstream: (chunk: Buffer) => void): void;
  fromUpstream?(chunk: Buffer, toClient: (chunk: Buffer) => void): void;
}

/**
 * A loopback TCP proxy in front of a real server (Redis, PostgreSQL, a service), for faults no real server gives on
 * demand: `connection` is called for each client connection and decides what happens to its chunks either way;
 * `cut` closes that connection on both sides. `port` 0 takes a free port; a proxy closed and started again on its
 * port is a server that refused connections in between.
 */
export async function startTcpProxy(
  target: URL,
  connection: (cut: () => void) => ProxiedConnection,
  port = 0,
): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    const hooks = connection(end);
    const toUpstream = (chunk: Buffer) => upstream.write(chunk);
    const toClient = (chunk: Buffer) => client.write(chunk);
    client.on('data', (chunk: Buffer) =>
      hooks.fromClient ? hooks.fromClient(chunk, toUpstream) : toUpstream(chunk),
    );
    upstream.on('data', (chunk: Buffer) =>
      hooks.fromUpstream ? hooks.fromUpstream(chunk, toClient) : toClient(chunk),
    );
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
