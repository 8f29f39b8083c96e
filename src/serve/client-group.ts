// Which client an address counts as (SPEC §18), for the per-client socket cap and for
// `runsPerMinutePerIp` (the instance and the cluster limiter): one holder of an IPv6 /64 gets
// billions of addresses for free, so an IPv6 client is its /64 prefix; an IPv4-mapped IPv6 address
// (`::ffff:1.2.3.4`) is the IPv4 address it carries; an IPv4 address is itself.
import { isIP } from 'node:net'

/** The one group of everything that is not an IP address (junk a client wrote): never a key of its own. */
export const NOT_AN_ADDRESS = 'not-an-address'

/** `2001:db8:1:2::/64` for any address of that /64; `1.2.3.4` for IPv4 and its mapped form. */
export function clientGroup(address: string): string {
  // A zone (`fe80::1%eth0`) names the local interface, not the client.
  const zone = address.indexOf('%')
  const ip = zone === -1 ? address : address.slice(0, zone)
  const version = isIP(ip)
  if (version === 4) return ip
  if (version !== 6) return NOT_AN_ADDRESS
  const words = ipv6Words(ip)
  // ::ffff:a.b.c.d (also written ::ffff:102:304): the IPv4 client behind a dual-stack socket.
  if (words[0] === 0 && words[1] === 0 && words[2] === 0 && words[3] === 0 && words[4] === 0 && words[5] === 0xffff) {
    return `${words[6]! >> 8}.${words[6]! & 255}.${words[7]! >> 8}.${words[7]! & 255}`
  }
  return `${words
    .slice(0, 4)
    .map((word) => word.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit words of a valid IPv6 address (isIP said so), `::` and a dotted tail expanded. */
function ipv6Words(ip: string): number[] {
  const parts = (text: string): number[] => {
    if (text === '') return []
    const words: number[] = []
    for (const part of text.split(':')) {
      if (part.includes('.')) {
        const [a, b, c, d] = part.split('.').map(Number) as [number, number, number, number]
        words.push((a << 8) | b, (c << 8) | d)
      } else words.push(parseInt(part, 16))
    }
    return words
  }
  const gap = ip.indexOf('::')
  if (gap === -1) return parts(ip)
  const head = parts(ip.slice(0, gap))
  const tail = parts(ip.slice(gap + 2))
  return [...head, ...Array.from({ length: 8 - head.length - tail.length }, () => 0), ...tail]
}
