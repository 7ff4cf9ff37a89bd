// Which URLs a configuration file may point Tandem's HTTP clients at (the sites file's API and token
// URLs). The worker sends tokens and client secrets there, so only http(s) is accepted, never with
// credentials in the URL, and never a link-local or cloud metadata address: a sites entry must not be
// able to aim the worker's credentials, or its requests, at the instance metadata service. Loopback
// and private addresses stay allowed (a slurmrestd on the login node, a gateway on the site's network).
// Pure and sandbox-safe (the WHATWG URL parser only), so the contract's schemas can use it.

/** Host names of cloud instance metadata services (GCP, AWS, OpenStack and the like). */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal']);

function ipv4(host: string): number[] | undefined {
  // The URL parser has already normalised hex, octal and single-number forms to dotted decimal.
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : undefined;
}

function ipv6(host: string): number[] | undefined {
  if (!host.startsWith('[') || !host.endsWith(']')) return undefined;
  const inner = host.slice(1, -1);
  const halves = inner.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(0, fill)).fill('0'), ...tail].map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN));
  return groups.length === 8 && groups.every((g) => !Number.isNaN(g)) ? groups : undefined;
}

function ipv4Problem([a, b, c, d]: number[]): string | undefined {
  if (a === 169 && b === 254) return 'a link-local address (169.254.0.0/16, where cloud metadata services answer)';
  if (a === 100 && b === 100 && c === 100 && d === 200) return 'a cloud metadata address';
  if (a === 0) return 'an unspecified address (0.0.0.0/8)';
  return undefined;
}

/** Why a host may not be an endpoint, or undefined if it may. `host` is a URL's normalised hostname. */
export function forbiddenHost(hostname: string): string | undefined {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (METADATA_NAMES.has(host)) return 'a cloud metadata service';
  const v4 = ipv4(host);
  if (v4) return ipv4Problem(v4);
  const v6 = ipv6(host);
  if (!v6) return undefined;
  if ((v6[0]! & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
  if ((v6[0]! & 0xffc0) === 0xfec0) return 'a site-local address (fec0::/10)';
  if (v6.every((g) => g === 0)) return 'the unspecified address (::)';
  if (v6[0] === 0xfd00 && v6[1] === 0x0ec2 && v6.slice(2, 7).every((g) => g === 0) && v6[7] === 0x254) return 'a cloud metadata address (fd00:ec2::254)';
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) forms of a forbidden IPv4 address.
  const mapped = v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff;
  const nat64 = v6[0] === 0x64 && v6[1] === 0xff9b && v6.slice(2, 6).every((g) => g === 0);
  if (mapped || nat64) return ipv4Problem([v6[6]! >> 8, v6[6]! & 0xff, v6[7]! >> 8, v6[7]! & 0xff]);
  return undefined;
}

/** Why `text` may not be an endpoint URL (http or https, no credentials, no metadata host), or undefined. */
export function endpointUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'Invalid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, not ${url.protocol}`;
  if (url.username || url.password) return 'must not carry credentials: secrets are named by an environment variable, never written here';
  const why = forbiddenHost(url.hostname);
  return why ? `must not point at ${why}` : undefined;
}

/** The host names of this machine's loopback (the codec server answers them; local model servers bind them). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

const hostName = (h: string) => (h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.split(':')[0]!).toLowerCase();
/** Whether a host (or host:port) is the loopback: 127.0.0.0/8, localhost, [::1]. */
export const isLoopbackHost = (h: string) => LOOPBACK_HOSTS.includes(hostName(h)) || /^127\.\d+\.\d+\.\d+$/.test(hostName(h));
