import { lookup } from "node:dns/promises";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { type AddressPolicy, mayReach } from "./address-policy.js";

/** A request the proxy refused: a local or private host that `allow_hosts` does not list. */
export interface ProxyRefusal {
  host: string;
  port: number;
  /** The address the host resolved to, when it was resolved. */
  address?: string;
}

/** The proxy every request of the browser goes through. */
export interface PolicyProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  readonly url: string;
  close(): Promise<void>;
}

/** The header the proxy marks its refusals with (on plain-HTTP responses). */
export const REFUSED_HEADER = "x-spool-refused";

/**
 * Starts a forwarding proxy on loopback that enforces `policy` on every connection Chromium makes:
 * navigations, redirects, subresources, fetches and WebSockets alike (the browser cannot bypass
 * it: loopback is proxied too). Each host is resolved here and the connection goes to the address
 * that was checked, so a name that resolves to a private address (DNS rebinding) is refused
 * like the address itself. Bodies stream through; nothing is buffered. `onRefused` hears of each
 * refusal.
 */
export async function startPolicyProxy(
  policy: AddressPolicy,
  onRefused: (refusal: ProxyRefusal) => void,
): Promise<PolicyProxy> {
  const sockets = new Set<Socket>();
  const resolve = async (host: string, port: number): Promise<string | undefined> => {
    const bare = host.replace(/^\[|\]$/g, "");
    const addresses = isIP(bare)
      ? [bare]
      : await lookup(bare, { all: true }).then(
          (found) => found.map((entry) => entry.address),
          () => [] as string[],
        );
    if (addresses.length === 0) return mayReach(policy, bare, port) ? bare : undefined;
    if (addresses.some((address) => !mayReach(policy, bare, port, address))) {
      onRefused({ host: bare, port, address: addresses[0] as string });
      return undefined;
    }
    return addresses[0];
  };
  const server = createServer((req, res) => void forward(req, res, resolve));
  server.on("connect", (req: IncomingMessage, client: Socket) => {
    void tunnel(req, client, resolve, sockets);
  });
  server.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
    void upgrade(req, client, head, resolve, sockets);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

type Resolver = (host: string, port: number) => Promise<string | undefined>;

const HOP_HEADERS = ["proxy-connection", "proxy-authorization", "keep-alive"];

async function forward(req: IncomingMessage, res: ServerResponse, resolve: Resolver) {
  let target: URL;
  try {
    target = new URL(req.url ?? "");
  } catch {
    res.writeHead(400).end("bad proxy request");
    return;
  }
  const port = Number(target.port || 80);
  const address = await resolve(target.hostname, port);
  if (address === undefined) {
    res.writeHead(403, { "content-type": "text/plain", [REFUSED_HEADER]: "host-not-allowed" });
    res.end(`Spool refused ${target.host}: a local or private address (browser.allow_hosts)`);
    return;
  }
  const headers = { ...req.headers };
  for (const name of HOP_HEADERS) delete headers[name];
  const outgoing = request(
    {
      host: address,
      port,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.pipe(res);
    },
  );
  outgoing.on("error", () => {
    if (!res.headersSent) res.writeHead(502).end("upstream failed");
    else res.destroy();
  });
  res.on("close", () => outgoing.destroy());
  req.pipe(outgoing);
}

async function tunnel(
  req: IncomingMessage,
  client: Socket,
  resolve: Resolver,
  sockets: Set<Socket>,
) {
  client.on("error", () => client.destroy());
  const [host, portText] = splitHostPort(req.url ?? "");
  const port = Number(portText || 443);
  const address = await resolve(host, port);
  if (address === undefined) {
    client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: host-not-allowed\r\n\r\n`);
    return;
  }
  const upstream = connect(port, address, () => {
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    upstream.pipe(client);
    client.pipe(upstream);
  });
  track(upstream, client, sockets);
}

async function upgrade(
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
  resolve: Resolver,
  sockets: Set<Socket>,
) {
  client.on("error", () => client.destroy());
  let target: URL;
  try {
    target = new URL(req.url ?? "");
  } catch {
    client.destroy();
    return;
  }
  const port = Number(target.port || 80);
  const address = await resolve(target.hostname, port);
  if (address === undefined) {
    client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: host-not-allowed\r\n\r\n`);
    return;
  }
  const upstream = connect(port, address, () => {
    const lines = [`${req.method} ${target.pathname}${target.search} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!HOP_HEADERS.includes((req.rawHeaders[i] as string).toLowerCase())) {
        lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      }
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  track(upstream, client, sockets);
}

function track(upstream: Socket, client: Socket, sockets: Set<Socket>) {
  sockets.add(upstream);
  upstream.on("close", () => {
    sockets.delete(upstream);
    client.destroy();
  });
  upstream.on("error", () => client.destroy());
  client.on("close", () => upstream.destroy());
}

function splitHostPort(value: string): [string, string] {
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(value);
  if (bracket) return [bracket[1] as string, bracket[2] as string];
  const colon = value.lastIndexOf(":");
  return colon === -1 ? [value, ""] : [value.slice(0, colon), value.slice(colon + 1)];
}
