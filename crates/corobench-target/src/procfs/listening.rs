//! Which TCP ports a set of processes listens on: the socket inodes their
//! file descriptors hold, found among the listening sockets of
//! `/proc/net/tcp` and `/proc/net/tcp6`. A server told to listen on one
//! port and found listening on another is told apart from one still
//! starting without waiting for its whole ready timeout.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `st` of a listening socket in `/proc/net/tcp`.
const LISTEN: &str = "0A";

/// The TCP ports the processes `pids` listen on now (IPv4 and IPv6).
#[must_use]
pub fn listening_ports(pids: &[i32]) -> BTreeSet<u16> {
    listening_ports_checked(pids).unwrap_or_default()
}

/// [`listening_ports`], or `None` when no process's descriptors could be
/// read (another user's processes, without the privilege to look): then
/// nothing can be said of what they listen on.
///
/// The socket tables are those of the first process's network namespace,
/// so a server in a container is read where it listens.
#[must_use]
pub fn listening_ports_checked(pids: &[i32]) -> Option<BTreeSet<u16>> {
    let readable: Vec<Vec<u64>> = pids.iter().filter_map(|&pid| socket_inodes(pid)).collect();
    if readable.is_empty() && !pids.is_empty() {
        return None;
    }
    let inodes: BTreeSet<u64> = readable.into_iter().flatten().collect();
    if inodes.is_empty() {
        return Some(BTreeSet::new());
    }
    let netns = pids
        .first()
        .map_or_else(|| "self".to_owned(), i32::to_string);
    let tables = ["tcp", "tcp6"].map(|name| {
        std::fs::read_to_string(format!("/proc/{netns}/net/{name}"))
            .or_else(|_| std::fs::read_to_string(format!("/proc/net/{name}")))
    });
    Some(
        tables
            .iter()
            .filter_map(|table| table.as_ref().ok())
            .flat_map(|table| listeners(table))
            .filter(|(_, inode)| inodes.contains(inode))
            .map(|(port, _)| port)
            .collect(),
    )
}

/// The inodes of the sockets process `pid` holds open (`socket:[N]`);
/// `None` when its descriptors cannot be listed (gone, or not ours to see).
fn socket_inodes(pid: i32) -> Option<Vec<u64>> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let inodes = entries
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .filter_map(|link| {
            let text = link.to_str()?;
            text.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    Some(inodes)
}

/// (local port, inode) of every listening socket in a `/proc/net/tcp` or
/// `tcp6` table; lines that do not parse are skipped.
pub(crate) fn listeners(table: &str) -> Vec<(u16, u64)> {
    listening_sockets(table)
        .into_iter()
        .map(|(addr, inode)| (addr.port(), inode))
        .collect()
}

/// (local address, inode) of every listening socket in a table.
fn listening_sockets(table: &str) -> Vec<(SocketAddr, u64)> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            if *state != LISTEN {
                return None;
            }
            let (ip, port) = local.rsplit_once(':')?;
            let addr = SocketAddr::new(table_ip(ip)?, u16::from_str_radix(port, 16).ok()?);
            Some((addr, inode.parse().ok()?))
        })
        .collect()
}

/// An address as the tables print it: 32-bit words in hex, each in the
/// machine's byte order.
fn table_ip(hex: &str) -> Option<IpAddr> {
    let mut bytes = Vec::with_capacity(16);
    for word in hex.as_bytes().chunks(8) {
        let word = u32::from_str_radix(std::str::from_utf8(word).ok()?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    match bytes.len() {
        4 => Some(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?).into()),
        16 => Some(Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?).into()),
        _ => None,
    }
}

/// What to tell about TCP `port` when 127.0.0.1 cannot reach it though
/// something listens there: only on an IPv6 address other than the
/// wildcard (`[::1]:PORT`), which IPv4 connections never reach. `None`
/// when nothing listens, or something listens where 127.0.0.1 reaches.
#[must_use]
pub fn ipv6_only(port: u16) -> Option<String> {
    let tables = ["tcp", "tcp6"]
        .map(|name| std::fs::read_to_string(format!("/proc/net/{name}")).unwrap_or_default());
    ipv6_only_in(&tables[0], &tables[1], port)
}

fn ipv6_only_in(tcp: &str, tcp6: &str, port: u16) -> Option<String> {
    let on_port = |table: &str| -> Vec<SocketAddr> {
        listening_sockets(table)
            .into_iter()
            .map(|(addr, _)| addr)
            .filter(|addr| addr.port() == port)
            .collect()
    };
    let v6: Vec<SocketAddr> = on_port(tcp6)
        .into_iter()
        .filter(|addr| !addr.ip().is_unspecified())
        .filter(|addr| matches!(addr.ip(), IpAddr::V6(ip) if ip.to_ipv4_mapped().is_none()))
        .collect();
    if v6.is_empty() || !on_port(tcp).is_empty() || on_port(tcp6).len() > v6.len() {
        return None;
    }
    let at: Vec<String> = v6.iter().map(SocketAddr::to_string).collect();
    Some(format!(
        "it listens on {} only, an IPv6 address that connections to 127.0.0.1 never reach: \
         make it listen on 127.0.0.1 (or on every address)",
        at.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `/proc/net/tcp`: a listener on 2024, a connection.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1077 1 000000002321a3d8 100 0 0 10 0
   1: 0100007F:86BD 0100007F:D548 06 00000000:00000000 03:00000B8B 00000000     0        0 0 3 00000000e1e65b7b
";

    /// Captured from `/proc/net/tcp6`: a listener on [::]:8080.
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5551 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn listening_sockets_are_read_with_their_inodes() {
        assert_eq!(listeners(TCP), vec![(2024, 1077)]);
        assert_eq!(listeners(TCP6), vec![(8080, 5551)]);
        assert_eq!(listeners("header only\n"), vec![]);
    }

    /// Captured from `/proc/net/tcp6`: a listener on [::1]:8080.
    const TCP6_LOOPBACK: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6661 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn a_listener_on_ipv6_loopback_alone_is_told_to_listen_on_127_0_0_1() {
        let note = ipv6_only_in(TCP, TCP6_LOOPBACK, 8080).unwrap();
        assert!(
            note.starts_with("it listens on [::1]:8080 only, an IPv6 address")
                && note.contains("make it listen on 127.0.0.1"),
            "{note}"
        );
        // The wildcard [::] takes IPv4 too; another port is not this one;
        // a listener on 127.0.0.1 beside it is reached.
        assert_eq!(ipv6_only_in(TCP, TCP6, 8080), None);
        assert_eq!(ipv6_only_in(TCP, TCP6_LOOPBACK, 2025), None);
        let both = TCP.replace(":07E8", ":1F90");
        assert_eq!(ipv6_only_in(&both, TCP6_LOOPBACK, 8080), None);
    }

    #[test]
    fn this_process_is_found_listening_where_it_listens() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(listening_ports(&[me]).contains(&port));
    }
}
