//! Requests this server makes on a stranger's behalf (a webhook's delivery, an OAuth
//! client's metadata document) are fenced in: the host's addresses are resolved first and
//! every one must be public — no loopback, private, link-local, shared, multicast or
//! unspecified address, and an IPv6 address that carries an IPv4 one (mapped, translated,
//! compatible, NAT64, 6to4 or Teredo) is judged by that IPv4 address —, and the request
//! then connects to the address that was checked (no second lookup for a rebinding DNS to
//! change), following no redirect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// Why a host may not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// It did not resolve (in time).
    Unresolved,
    /// It resolves to an address that is not public: the first such address.
    Private(IpAddr),
}

/// The addresses `host` (a name or an IP literal, brackets allowed) resolves to on `port`,
/// within `wait`, checked: the first of them when every one is public or `allow_private`.
pub async fn resolve_checked(
    host: &str,
    port: u16,
    wait: Duration,
    allow_private: bool,
) -> Result<SocketAddr, Refusal> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(wait, tokio::net::lookup_host((bare, port)))
            .await
            .map_err(|_| Refusal::Unresolved)?
            .map_err(|_| Refusal::Unresolved)?
            .collect(),
    };
    let first = *addrs.first().ok_or(Refusal::Unresolved)?;
    if !allow_private && let Some(private) = addrs.iter().find(|a| !public(a.ip())) {
        return Err(Refusal::Private(private.ip()));
    }
    Ok(first)
}

/// Whether `ip` is a public address, one a request made on a stranger's behalf may go to. An IPv6
/// address that carries an IPv4 one ([`embedded_ipv4`]) is judged by that IPv4 address.
pub fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Some(v4) => public_v4(v4),
            None => public_v6(v6),
        },
    }
}

fn public_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    !(v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (RFC 6598)
        || (a == 198 && (18..20).contains(&b)) // benchmarking (RFC 2544)
        || a >= 240)
}

fn public_v6(v6: Ipv6Addr) -> bool {
    let s = v6.segments();
    !(v6.is_loopback()
        || v6.is_unspecified()
        || v6.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] == 0x0064 && s[1] == 0xff9b && s[2] == 0x0001) // local-use NAT64 (RFC 8215)
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard-only (RFC 6666)
        || (s[0] == 0x2001 && s[1] == 0x0002 && s[2] == 0) // benchmarking (RFC 5180)
        || (s[0] == 0x2001 && s[1] == 0x0db8)) // documentation
}

/// The IPv4 address an IPv6 address stands for, in the forms that carry one:
/// IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d` (not `::` or `::1`), NAT64's well-known prefix `64:ff9b::/96` (RFC 6052, the
/// last 32 bits), 6to4 `2002::/16` (bits 16 to 48) and Teredo `2001::/32` (the client's
/// address: the last 32 bits inverted). The local-use NAT64 prefix `64:ff9b:1::/48`
/// (RFC 8215) places the IPv4 address where its operator's prefix length says, so it is
/// refused whole ([`public_v6`]).
pub fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let [.., a, b, c, d] = v6.octets();
    let low = u32::from_be_bytes([a, b, c, d]);
    let tail = Ipv4Addr::from(low);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(tail),
        [0, 0, 0, 0, 0, 0, _, _] if low > 1 => Some(tail),
        [0x0064, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!low)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_fetched() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::169.254.169.254",
            "64:ff9b::127.0.0.1",
            "64:ff9b::10.1.2.3",
            "64:ff9b::169.254.169.254",
            "64:ff9b:1::1.1.1.1",
            "64:ff9b:1:7f00:1::",
            "2002:7f00:1::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:101:1:2:3:4:5",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo: client 127.0.0.1
            "2001:0:4136:e378:8000:63bf:f5ff:fffe", // Teredo: client 10.0.0.1
            "2001:0:4136:e378:8000:63bf:5601:5601", // Teredo: client 169.254.169.254
            "100::1",
            "2001:2::1",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(!public(private.parse().unwrap()), "{private}");
        }
        for open in [
            "93.184.216.34",
            "2606:2800:220:1:248:1893:25c8:1946",
            "1.1.1.1",
            "::ffff:1.1.1.1",
            "::1.1.1.1",
            "64:ff9b::1.1.1.1",
            "2002:101:101::1",
            "2001:0:4136:e378:8000:63bf:fefe:fefe", // Teredo: client 1.1.1.1
        ] {
            assert!(public(open.parse().unwrap()), "{open}");
        }
    }

    #[test]
    fn the_ipv4_inside_an_ipv6_address_is_found() {
        let cases = [
            ("::ffff:10.0.0.1", Some("10.0.0.1")),
            ("::ffff:0:10.0.0.1", Some("10.0.0.1")),
            ("::10.0.0.1", Some("10.0.0.1")),
            ("::1", None),
            ("::", None),
            ("64:ff9b::a9fe:a9fe", Some("169.254.169.254")),
            ("2002:a00:1::", Some("10.0.0.1")),
            ("2001:0:4136:e378:8000:63bf:f5ff:fffe", Some("10.0.0.1")),
            ("2001:db8::1", None),
            ("2606:4700::1111", None),
        ];
        for (v6, v4) in cases {
            let found = embedded_ipv4(v6.parse().unwrap()).map(|a| a.to_string());
            assert_eq!(found.as_deref(), v4, "{v6}");
        }
    }
}
