import net from 'node:net';

/**
 * A TCP port nothing listens on right now, for a child process to bind (or for a client to find refused). The
 * port is released before returning, so another process could take it first: tests use it at once.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
