//! [`AllowedHosts`]: where HTTP tools may go. Checked after template expansion, on every
//! redirect, and against the addresses a host name resolves to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde_json::json;

use crate::{ErrorKind, ToolError};

/// The hosts HTTP tools may reach.
///
/// An entry is a host name (`api.example.com`), a wildcard for its subdomains
/// (`*.example.com`, which does not match `example.com` itself), an IP address, or `*`
/// (any host), optionally with a port: `host:8080`, `[::1]:7411`, or `host:*` for any
/// port. Names match without regard to case. **An entry without a port allows only the
/// default ports, 80 and 443**; `*` alone allows any host on any port.
/// **Rationale:** allowing `127.0.0.1` for one local service must not open every other
/// service of the machine (the server's own API among them).
///
/// Hosts that resolve to loopback, private, link-local or otherwise non-public addresses
/// ([`is_public_ip`]) are refused even when their name is listed, unless
/// [`AllowedHosts::allow_private`] is set for all entries, or the entry was added with
/// [`AllowedHosts::with_private_host`]. **Rationale:** a public name can point at
/// `127.0.0.1` or the cloud metadata address; the name alone proves nothing.
///
/// ```
/// use toolscout_invoke::AllowedHosts;
///
/// let hosts = AllowedHosts::new(["api.example.com", "*.weather.test", "localhost:8080"]);
/// assert!(hosts.matches_host("API.example.com"));
/// assert!(hosts.matches_host("eu.weather.test"));
/// assert!(!hosts.matches_host("weather.test"));
/// assert!(!hosts.matches_host("evil.com"));
/// assert!(hosts.matches("api.example.com", 443));
/// assert!(!hosts.matches("api.example.com", 8443));
/// assert!(hosts.matches("localhost", 8080));
/// assert!(!hosts.matches("localhost", 7411));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    patterns: Vec<String>,
    entries: Vec<Entry>,
    allow_private: bool,
}

/// One parsed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    host: String,
    port: Port,
    /// Whether this entry may resolve to non-public addresses.
    private: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Port {
    /// 80 and 443.
    Default,
    Any,
    Exactly(u16),
}

impl Entry {
    fn parse(pattern: &str, private: bool) -> Option<Entry> {
        let p = pattern.trim().to_ascii_lowercase();
        if p.is_empty() {
            return None;
        }
        if p == "*" {
            return Some(Entry {
                host: p,
                port: Port::Any,
                private,
            });
        }
        let (host, port) = if let Some(v6) = p.strip_prefix('[') {
            match v6.split_once(']') {
                Some((h, rest)) => (h.to_owned(), rest.strip_prefix(':')),
                None => (v6.to_owned(), None),
            }
        } else if p.matches(':').count() == 1 {
            let (h, port) = p.split_once(':').unwrap_or((p.as_str(), ""));
            (h.to_owned(), Some(port))
        } else {
            // A bare IPv6 address (several ':'), or a name without a port.
            (p.clone(), None)
        };
        let port = match port {
            None | Some("") => Port::Default,
            Some("*") => Port::Any,
            Some(n) => Port::Exactly(n.parse().ok()?),
        };
        Some(Entry {
            host: normalize(&host),
            port,
            private,
        })
    }

    fn matches_host(&self, host: &str) -> bool {
        let p = self.host.as_str();
        if p == "*" {
            true
        } else if let Some(suffix) = p.strip_prefix("*.") {
            host.len() > suffix.len() + 1
                && host.ends_with(suffix)
                && host[..host.len() - suffix.len()].ends_with('.')
        } else {
            p == host
        }
    }

    fn matches_port(&self, port: u16) -> bool {
        match self.port {
            Port::Any => true,
            Port::Default => port == 80 || port == 443,
            Port::Exactly(p) => p == port,
        }
    }
}

impl AllowedHosts {
    /// Hosts from a list of patterns (an entry whose port is not a number is ignored).
    pub fn new<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut hosts = AllowedHosts::default();
        for p in patterns {
            hosts.push(p.as_ref(), false);
        }
        hosts
    }

    fn push(&mut self, pattern: &str, private: bool) {
        if let Some(entry) = Entry::parse(pattern, private) {
            self.patterns.push(pattern.trim().to_ascii_lowercase());
            self.entries.push(entry);
        }
    }

    /// No host at all: every HTTP call is refused.
    pub fn none() -> Self {
        AllowedHosts::default()
    }

    /// Whether every listed host may resolve to loopback and private addresses (for
    /// local services and tests on `127.0.0.1`).
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// Adds one entry (same syntax as [`AllowedHosts::new`]).
    #[must_use]
    pub fn with_host(mut self, pattern: &str) -> Self {
        self.push(pattern, false);
        self
    }

    /// Adds one entry (same syntax as [`AllowedHosts::new`]) that may resolve to
    /// loopback and private addresses, leaving the others public-only: what a remote
    /// catalog on `127.0.0.1:7411` needs, without opening the private network to every
    /// other HTTP tool.
    #[must_use]
    pub fn with_private_host(mut self, pattern: &str) -> Self {
        self.push(pattern, true);
        self
    }

    /// Whether private addresses are allowed for every entry.
    pub fn private_allowed(&self) -> bool {
        self.allow_private
    }

    /// The patterns, normalised.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `host` matches the host part of an entry, on whatever port (names only;
    /// addresses are checked on connect). [`AllowedHosts::matches`] checks the port too.
    pub fn matches_host(&self, host: &str) -> bool {
        let host = normalize(host);
        self.entries.iter().any(|e| e.matches_host(&host))
    }

    /// Whether `host` on `port` matches an entry.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        self.entry(host, port).is_some()
    }

    /// Whether the host and port (or the scheme's default port) of `url` match an entry.
    pub fn matches_url(&self, url: &reqwest::Url) -> bool {
        match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => self.matches(host, port),
            _ => false,
        }
    }

    /// The first entry matching `host` on `port`, preferring one that allows private
    /// addresses.
    fn entry(&self, host: &str, port: u16) -> Option<&Entry> {
        let host = normalize(host);
        let mut found = None;
        for e in &self.entries {
            if e.matches_host(&host) && e.matches_port(port) {
                if e.private {
                    return Some(e);
                }
                found.get_or_insert(e);
            }
        }
        found
    }

    /// Checks a URL's scheme and host name, then resolves it and checks every address.
    /// Returns the addresses to connect to, so that the request goes where was checked.
    pub(crate) async fn check(&self, url: &reqwest::Url) -> Result<Vec<SocketAddr>, ToolError> {
        let shown = display_url(url);
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::new(
                ErrorKind::HostNotAllowed,
                format!("{shown}: only http:// and https:// URLs are allowed"),
            ));
        }
        let Some(host) = url.host_str() else {
            return Err(ToolError::new(
                ErrorKind::HostNotAllowed,
                format!("{shown} has no host"),
            ));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = url.port_or_known_default().unwrap_or(80);
        let Some(entry) = self.entry(host, port) else {
            let why = if self.matches_host(host) {
                format!(
                    "is allowed, but not on port {port} (an entry without a port allows 80 and 443; write host:{port})"
                )
            } else {
                "is not in the allowed hosts".to_owned()
            };
            return Err(refused(&shown, host, &why, &self.patterns));
        };
        let private_ok = self.allow_private || entry.private;
        let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|e| {
                    ToolError::new(
                        ErrorKind::Transport,
                        format!("cannot resolve host '{host}': {e}"),
                    )
                    .with_details(json!({"host": host}))
                })?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(ToolError::new(
                ErrorKind::Transport,
                format!("host '{host}' resolves to no address"),
            ));
        }
        if !private_ok && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
            return Err(refused(
                &shown,
                host,
                &format!(
                    "resolves to the non-public address {}; private and loopback addresses are \
                     refused unless explicitly allowed (the command line's --allow-private, \
                     AllowedHosts::allow_private in a program)",
                    bad.ip()
                ),
                &self.patterns,
            ));
        }
        Ok(addrs)
    }
}

fn refused(url: &str, host: &str, why: &str, allowed: &[String]) -> ToolError {
    ToolError::new(
        ErrorKind::HostNotAllowed,
        format!("refused to call {url}: host '{host}' {why}"),
    )
    .with_details(json!({"host": host, "allowed_hosts": allowed}))
}

/// A URL as shown in errors: without user info, query or fragment (which may carry keys).
pub(crate) fn display_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

fn normalize(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Whether `ip` is a public unicast address: the one rule of the workspace for what is
/// "private" (loopback, private, link-local, shared, reserved, documentation, and the
/// IPv6 forms that embed such an IPv4 address: mapped, compatible, NAT64, 6to4;
/// Teredo and site-local are refused whole).
pub fn is_public_ip(ip: IpAddr) -> bool {
    is_public(ip)
}

pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        // Shared address space (carrier-grade NAT), 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // IETF protocol assignments, 192.0.0.0/24.
        || (a == 192 && b == 0 && c == 0)
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b == 18 || b == 19))
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

fn v4_at(s: &[u16; 8], i: usize) -> Ipv4Addr {
    let [a, b] = s[i].to_be_bytes();
    let [c, d] = s[i + 1].to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let first = s[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // IPv4-compatible (deprecated), ::a.b.c.d: judge the IPv4 address.
        || (s[..6].iter().all(|&x| x == 0) && !is_public_v4(v4_at(&s, 6)))
        // Unique local, fc00::/7.
        || (first & 0xfe00) == 0xfc00
        // Link-local, fe80::/10, and site-local (deprecated), fec0::/10.
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        // Documentation, 2001:db8::/32.
        || (first == 0x2001 && s[1] == 0x0db8)
        // Teredo, 2001::/32: tunnels to an address that cannot be judged here.
        || (first == 0x2001 && s[1] == 0)
        // 6to4, 2002::/16, embeds an IPv4 address; judge that one.
        || (first == 0x2002 && !is_public_v4(v4_at(&s, 1)))
        // NAT64 well-known prefix embeds an IPv4 address; judge that one. Local-use
        // NAT64, 64:ff9b:1::/48, is private.
        || (first == 0x0064 && s[1] == 0xff9b && (s[2] == 1 || !is_public_v4(v4_at(&s, 6)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.5",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "192.0.0.8",
            "::127.0.0.1",
            "2002:7f00:1::1",
            "2002:a00:1::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "fec0::1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "2002:5db8:d822::1",
            "64:ff9b::5db8:d822",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn loopback_needs_explicit_allow() {
        let url = reqwest::Url::parse("http://127.0.0.1:9/x?key=secret").unwrap();
        let strict = AllowedHosts::new(["127.0.0.1"]);
        let e = strict.check(&url).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::HostNotAllowed);
        assert!(!e.message.contains("secret"), "{}", e.message);
        assert!(
            strict.allow_private(true).check(&url).await.is_err(),
            "port 9 is not a default port"
        );
        let any_port = AllowedHosts::new(["127.0.0.1:*"]).allow_private(true);
        assert!(any_port.check(&url).await.is_ok());
    }

    #[tokio::test]
    async fn the_port_counts() {
        // Regression: allowing 127.0.0.1 for one service reached the server's own API.
        let hosts = AllowedHosts::new(["127.0.0.1:8080"]).allow_private(true);
        let api = reqwest::Url::parse("http://127.0.0.1:7411/tools/bundles").unwrap();
        let e = hosts.check(&api).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::HostNotAllowed);
        assert!(e.message.contains("not on port 7411"), "{}", e.message);
        let service = reqwest::Url::parse("http://127.0.0.1:8080/x").unwrap();
        assert!(hosts.check(&service).await.is_ok());
        assert!(AllowedHosts::new(["[::1]:7411"]).matches("::1", 7411));
        assert!(AllowedHosts::new(["::1"]).matches("::1", 80));
        assert!(AllowedHosts::new(["*"]).matches("x.test", 1));
    }

    #[tokio::test]
    async fn a_private_host_does_not_open_the_others() {
        // Regression: a loopback --remote turned private addresses on for every tool.
        let hosts = AllowedHosts::new(["localhost:*"]).with_private_host("127.0.0.1:7411");
        let remote = reqwest::Url::parse("http://127.0.0.1:7411/api/v1/tools").unwrap();
        assert!(hosts.check(&remote).await.is_ok());
        let other = reqwest::Url::parse("http://localhost:9/").unwrap();
        let e = hosts.check(&other).await.unwrap_err();
        assert!(e.message.contains("non-public address"), "{}", e.message);
    }
}

/// Property tests of the host and address rules. `cargo test -p toolscout-invoke --
/// --ignored props` runs 10⁶ cases per property.
#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::*;

    /// Every IPv6 form that embeds an IPv4 address is judged as that address.
    fn embedded(v4: Ipv4Addr) -> Result<(), TestCaseError> {
        let o = v4.octets();
        let hi = u16::from_be_bytes([o[0], o[1]]);
        let lo = u16::from_be_bytes([o[2], o[3]]);
        let public = is_public(IpAddr::V4(v4));
        prop_assert_eq!(is_public(IpAddr::V6(v4.to_ipv6_mapped())), public);
        let six_to_four = Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, 1);
        prop_assert_eq!(is_public(IpAddr::V6(six_to_four)), public);
        let nat64 = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo);
        prop_assert_eq!(is_public(IpAddr::V6(nat64)), public);
        if !public {
            prop_assert!(!is_public(IpAddr::V6(Ipv6Addr::new(
                0, 0, 0, 0, 0, 0, hi, lo
            ))));
        }
        // Teredo never passes.
        prop_assert!(!is_public(IpAddr::V6(Ipv6Addr::new(
            0x2001, 0, hi, lo, 0, 0, 0, 1
        ))));
        Ok(())
    }

    fn ports(host: &str, p: u16, q: u16) -> Result<(), TestCaseError> {
        let exact = AllowedHosts::new([format!("{host}:{p}")]);
        prop_assert_eq!(exact.matches(host, q), p == q);
        let default = AllowedHosts::new([host]);
        prop_assert_eq!(default.matches(host, q), q == 80 || q == 443);
        let any_port = AllowedHosts::new([format!("{host}:*")]);
        prop_assert!(any_port.matches(host, q));
        // Another host never matches, whatever the port.
        let other = format!("x{host}");
        prop_assert!(!exact.matches(&other, p));
        Ok(())
    }

    fn any_pattern(pattern: &str, host: &str, port: u16) -> Result<(), TestCaseError> {
        let hosts = AllowedHosts::new([pattern]).with_private_host(pattern);
        let _ = hosts.matches(host, port);
        let _ = hosts.matches_host(host);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn props_embedded_v4(a: u32) { embedded(Ipv4Addr::from(a))?; }
        #[test]
        fn props_ports(host in "[a-z]{1,10}(\\.[a-z]{2,5})?", p: u16, q: u16) { ports(&host, p, q)?; }
        #[test]
        fn props_any_pattern(pattern in ".{0,30}", host in ".{0,30}", port: u16) { any_pattern(&pattern, &host, port)?; }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000_000))]
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_embedded_v4(a: u32) { embedded(Ipv4Addr::from(a))?; }
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_ports(host in "[a-z]{1,10}(\\.[a-z]{2,5})?", p: u16, q: u16) { ports(&host, p, q)?; }
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_any_pattern(pattern in ".{0,30}", host in ".{0,30}", port: u16) { any_pattern(&pattern, &host, port)?; }
    }
}
