//! [`AllowedHosts`]: where HTTP tools may go. Checked after template expansion, on every
//! redirect, and against the addresses a host name resolves to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde_json::json;

use crate::{ErrorKind, ToolError};

/// The hosts HTTP tools may reach.
///
/// An entry is a host name (`api.example.com`), a wildcard for its subdomains
/// (`*.example.com`, which does not match `example.com` itself), an IP address, or `*`
/// (any host). Matching ignores case and the port.
///
/// Hosts that resolve to loopback, private, link-local or otherwise non-public addresses
/// are refused even when their name is listed, unless [`AllowedHosts::allow_private`] is
/// set. **Rationale:** a public name can point at `127.0.0.1` or the cloud metadata
/// address; the name alone proves nothing.
///
/// ```
/// use toolscout_invoke::AllowedHosts;
///
/// let hosts = AllowedHosts::new(["api.example.com", "*.weather.test"]);
/// assert!(hosts.matches_host("API.example.com"));
/// assert!(hosts.matches_host("eu.weather.test"));
/// assert!(!hosts.matches_host("weather.test"));
/// assert!(!hosts.matches_host("evil.com"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts {
    patterns: Vec<String>,
    allow_private: bool,
}

impl AllowedHosts {
    /// Hosts from a list of patterns.
    pub fn new<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        AllowedHosts {
            patterns: patterns
                .into_iter()
                .map(|p| normalize(p.as_ref()))
                .filter(|p| !p.is_empty())
                .collect(),
            allow_private: false,
        }
    }

    /// No host at all: every HTTP call is refused.
    pub fn none() -> Self {
        AllowedHosts::default()
    }

    /// Whether listed hosts may resolve to loopback and private addresses (for local
    /// services and tests on `127.0.0.1`).
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// Whether private addresses are allowed.
    pub fn private_allowed(&self) -> bool {
        self.allow_private
    }

    /// The patterns, normalised.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether `host` matches a pattern (names only; addresses are checked on connect).
    pub fn matches_host(&self, host: &str) -> bool {
        let host = normalize(host);
        self.patterns.iter().any(|p| {
            if p == "*" {
                true
            } else if let Some(suffix) = p.strip_prefix("*.") {
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix)
                    && host[..host.len() - suffix.len()].ends_with('.')
            } else {
                *p == host
            }
        })
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
        if !self.matches_host(host) {
            return Err(refused(
                &shown,
                host,
                "is not in the allowed hosts",
                &self.patterns,
            ));
        }
        let port = url.port_or_known_default().unwrap_or(80);
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
        if !self.allow_private
            && let Some(bad) = addrs.iter().find(|a| !is_public(a.ip()))
        {
            return Err(refused(
                &shown,
                host,
                &format!(
                    "resolves to the non-public address {}; private and loopback addresses are \
                     refused unless explicitly allowed",
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

/// Whether `ip` is a public unicast address.
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
    let [a, b, ..] = ip.octets();
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
        // Benchmarking, 198.18.0.0/15.
        || (a == 198 && (b == 18 || b == 19))
        // Reserved, 240.0.0.0/4.
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        // Unique local, fc00::/7.
        || (first & 0xfe00) == 0xfc00
        // Link-local, fe80::/10.
        || (first & 0xffc0) == 0xfe80
        // Documentation, 2001:db8::/32.
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // NAT64 well-known prefix embeds an IPv4 address; judge that one.
        || (first == 0x0064 && ip.segments()[1] == 0xff9b && {
            let s = ip.segments();
            let v4 = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
            !is_public_v4(v4)
        }))
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
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
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
        assert!(strict.allow_private(true).check(&url).await.is_ok());
    }
}
